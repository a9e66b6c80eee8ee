"""The heatmaps beyond the scrubbed ones have their numbers as a table too (views/parts/number_table.py): every
heatmap of the lesson, the block's ‖z̃_ij‖ map, the switch view's sentence embedding, and the counting and induction
labs' maps. Off until asked, then the numbers the chart draws, as transformers or the core has them."""

from __future__ import annotations

import numpy as np
import pytest

from attention.experiments.embedding_switch import DEFAULT_SECOND
from attention.text.encoding import encode
from harness.reference import bare_forward
from tests.core.test_embedding_switch import reference_embeddings
from tests.page.test_number_table_page import SHOWN, as_numbers, number_tables, opened_table, tokens_of
from tests.page.test_view_switch import open_view, switch_off
from tests.pages import TEXT, assert_healthy, fill_lesson, open_page

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_the_lessons_head_step_has_transformers_weights_as_a_table(bundled):
    page = open_page(view="lesson", step="6", text=TEXT, layer="2", head="5")
    assert_healthy(page)
    assert not number_tables(page), "nothing is drawn until the reader asks"
    [table] = number_tables(opened_table(page, "table_lesson-head-weights"))
    assert table.caption.startswith("Weights, layer 2, head 5")
    assert [row[0] for row in table.rows] == tokens_of(bundled)
    weights = bare_forward(bundled, TEXT)().attentions[2][0, 5].numpy()  # (T, T)
    np.testing.assert_allclose(as_numbers(table), weights, atol=SHOWN, rtol=0)


def test_a_hidden_lesson_steps_table_opens_with_transformers_weights(bundled):
    """Step 6's neighbour, step 5, is drawn hidden for Previous to show at once, once the page is still: its table
    opens there too (in the browser, its toggle reruns the table alone: here, with the run that draws it), with the
    weights of the head chosen, transformers' own."""
    page = fill_lesson(open_page(view="lesson", step="6", text=TEXT, layer="2", head="5"))
    page.toggle(key="table_lesson-softmax").set_value(True)
    page = fill_lesson(page)
    assert_healthy(page)
    [table] = number_tables(page)
    assert table.caption.startswith("Weights = softmax(scaled)")
    weights = bare_forward(bundled, TEXT)().attentions[2][0, 5].numpy()  # (T, T)
    np.testing.assert_allclose(as_numbers(table), weights, atol=SHOWN, rtol=0)


def test_the_blocks_contributions_map_has_the_cores_numbers_as_a_table(bundled):
    from attention.dissect.mixing import mixing

    page = open_page(view="block", layer="2", text=TEXT)
    assert_healthy(page)
    [table] = number_tables(opened_table(page, "table_block_contributions"))
    contributions = mixing(bundled, encode(bundled, TEXT), 2).contributions[0]  # (T, T)
    assert [row[0] for row in table.rows] == tokens_of(bundled)
    np.testing.assert_allclose(as_numbers(table), contributions, atol=SHOWN, rtol=1e-4)


def test_the_switch_views_embedding_table_names_each_rows_largest_dimensions_as_transformers_has_them(bundled):
    page = open_view()
    assert_healthy(page)
    off = [(2, 5), (5, 0)]
    page = switch_off(page, *off)
    [table] = number_tables(opened_table(page, "table_chart-switch-embedding"))
    before = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND))[0]  # (C,)
    after = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), off)[0]
    assert [row[0] for row in table.rows] == ["all on", "heads off", "off − on"]
    for row, expected in zip(table.rows, (before, after, after - before), strict=True):
        named = [cell.rsplit(" ", 1) for cell in row[1:] if cell]  # "'17' 0.1234": a dimension and its value
        assert len(named) == 5, row
        largest = np.argsort(-np.abs(expected), kind="stable")[:len(named)]
        assert [int(name.strip("'")) for name, _ in named] == largest.tolist(), row
        np.testing.assert_allclose([float(value) for _, value in named], expected[largest], atol=SHOWN, rtol=0)


def test_the_counting_maps_have_the_untrained_heads_weights_as_tables():
    from attention.labs.counting import CountingConfig, example_windows, inspect, untrained
    from components.views.counting import MAPS_KEY

    page = open_page(view="counting")
    assert_healthy(page)
    window, symbols = number_tables(opened_table(page, f"table_{MAPS_KEY}"))
    config = CountingConfig()
    trace = inspect(untrained(config), example_windows(config, 1, 0))
    positions = [f"{index}: {letter}" for index, letter in enumerate(trace.labels[0])]
    assert [row[0] for row in window.rows] == positions and window.header[1:] == positions
    np.testing.assert_allclose(as_numbers(window), trace.self_weights[0], atol=SHOWN, rtol=0)
    np.testing.assert_allclose(as_numbers(symbols), trace.symbol_weights[0], atol=SHOWN, rtol=0)


def test_the_induction_maps_have_every_heads_attention_at_the_last_kept_step_as_tables():
    from attention.labs.induction import InductionConfig
    from attention.labs.induction import untrained as untrained_induction
    from tests.page.test_training_chart_text import INDUCTION, INDUCTION_CONFIG

    page = open_page(INDUCTION)
    assert_healthy(page)
    tables = number_tables(opened_table(page, "table_chart-induction-maps"))
    run = untrained_induction(INDUCTION_CONFIG)
    one, two = run.models
    expected = [one.kept[-1, 0, head] for head in range(INDUCTION_CONFIG.heads)] + \
        [two.kept[-1, layer, head] for layer in (0, 1) for head in range(INDUCTION_CONFIG.heads)]
    assert isinstance(INDUCTION_CONFIG, InductionConfig) and len(tables) == len(expected) == 3 * 2
    assert tables[0].caption.startswith("1 layer: layer 0, head 0, step ")
    for table, matrix in zip(tables, expected, strict=True):
        np.testing.assert_allclose(as_numbers(table), matrix, atol=SHOWN, rtol=0)


def test_a_generation_steps_table_is_transformers_attention_row_over_the_cache(tiny_gpt2_checkpoint, monkeypatch):
    import torch
    from transformers import GPT2LMHeadModel

    from attention.experiments.generation import GenerationSettings, generate
    from attention.models.lm_heads import load_language_model
    from tests.pages import pick_on_chart

    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "what if it rains tomorrow"
    page = open_page(view="generate", model=str(tiny_gpt2_checkpoint), text=text)
    assert_healthy(page)
    page = pick_on_chart(opened_table(page, "table_generate_row"), "generate_row", decode_step=3)
    [table] = number_tables(page)
    generation = generate(load_language_model(str(tiny_gpt2_checkpoint)), text,
                          GenerationSettings(max_new_tokens=8, stop_at_end=False))
    step = generation.steps[3]
    assert table.header[1:] == [f"{position}: {generation.tokens[position]}" for position in step.cache_positions]
    reference = GPT2LMHeadModel.from_pretrained(str(tiny_gpt2_checkpoint), attn_implementation="eager").eval()
    ids = torch.tensor([[*generation.prompt_ids, *generation.new_ids]])[:, :step.position + 1]
    with torch.inference_mode():
        row = reference(ids, output_attentions=True).attentions[0][0, :, -1].numpy()  # (nh, S)
    np.testing.assert_allclose(as_numbers(table), row, atol=SHOWN, rtol=0)
