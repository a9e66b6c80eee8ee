"""The views past the attention layer (block, lens, generate) on the bundled BERT, the tiny GPT-2 and the tiny Llama
(harness/checkpoints.py), opened by links: the numbers they draw are the core's (whose parity with transformers is
tests/core/test_block.py's, test_logit_lens.py's and test_generation.py's), the block's button opens the one-head
view at its layer, and what a model cannot do, or a text that will not do, is said in a notice."""

from __future__ import annotations

import html
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from attention.analyses.logit_lens import TABLE_COLUMNS, logit_lens
from attention.dissect.block import build_block
from attention.dissect.mixing import mixing
from attention.experiments.generation import GenerationSettings, StreamingSettings, generate, streaming_what_if
from attention.models.lm_heads import load_language_model
from attention.models.loading import load_model
from attention.text.encoding import encode
from components.charts.block import STEPS_ABOUT
from tests.pages import (
    assert_healthy,
    chart_labels,
    chart_matrix,
    chart_title,
    chart_values,
    charts,
    html_table,
    open_keeping_downloads,
    open_page,
    pick_on_chart,
)

TEXT = "what if it rains tomorrow"
CLOSE = dict(rtol=1e-5, atol=1e-5)  # float32, through Arrow


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from harness.checkpoints import tiny_gpt2, tiny_llama

    return {"gpt2": tiny_gpt2(tmp_path_factory.mktemp("gpt2")), "llama": tiny_llama(tmp_path_factory.mktemp("llama"))}


@pytest.fixture(params=["gpt2", "llama"])
def decoder(request, folders, monkeypatch):
    """The link's query to a tiny decoder, and its folder."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", ":".join(str(folder) for folder in folders.values()))
    return {"model": str(folders[request.param]), "text": TEXT}, folders[request.param]


def chart_keyed(page, title: str):
    """The one chart whose title starts so."""
    [chart] = [chart for chart in charts(page) if chart_title(chart).startswith(title)]
    return chart


# ---- The block ----

@pytest.mark.parametrize("model", ["bundled", "llama"])
def test_the_shapes_panel_follows_the_blocks_tensors(model, folders, bundled, monkeypatch):
    """Beside the block, the panel lists the layer's steps as the block runs them, each with the core's shape and
    formula, and no head of the attention layer (no Q split, no weights)."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", ":".join(str(folder) for folder in folders.values()))
    query = {"view": "block", "layer": "1"} | ({} if model == "bundled" else {"model": str(folders[model]),
                                                                             "text": TEXT})
    page = open_page(query)
    assert_healthy(page)
    [panel] = [element.proto.body for element in page.get("html") if 'data-testid="shapes-panel"' in element.proto.body]
    loaded = bundled if model == "bundled" else load_model(str(folders[model]))
    block = build_block(loaded, encode(loaded, query.get("text", "time flies like an arrow")), 1)
    assert "The block, step by step" in panel and "Q split" not in panel
    listed = [(html.unescape(name), shape) for name, shape in re.findall(r"<li><code>(.*?)</code> <code>(.*?)</code>",
                                                                          panel)]
    assert listed == [(step.name, str(tuple(step.shape))) for step in block.steps]
    for step in block.steps:
        assert html.escape(step.formula) in panel

@pytest.mark.parametrize("model", ["bundled", "gpt2", "llama"])
def test_the_block_draws_the_cores_steps_written_norms_and_mixing(model, folders, bundled, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", ":".join(str(folder) for folder in folders.values()))
    query = {"view": "block", "layer": "1"} | ({} if model == "bundled" else {"model": str(folders[model]),
                                                                               "text": TEXT})
    page = open_page(query)
    assert_healthy(page)
    loaded = bundled if model == "bundled" else load_model(str(folders[model]))
    encoding = encode(loaded, query.get("text", "time flies like an arrow"))
    block = build_block(loaded, encoding, 1)
    [steps] = [chart for chart in charts(page) if json.loads(chart.proto.spec).get("description") == STEPS_ABOUT]
    drawn, labels = chart_values(steps), chart_labels(steps)
    strips = json.loads(steps.proto.spec)["vconcat"]
    assert len(strips) == len(block.steps), "a strip of bars a step, in one chart"
    for index, (step, strip) in enumerate(zip(block.steps, strips, strict=True)):
        norms = np.linalg.norm(step.value[0], axis=-1)  # (T,)
        np.testing.assert_allclose(drawn[drawn["step"] == index]["norm"].to_numpy(), norms, **CLOSE)
        title = " ".join(labels[strip["title"]["text"]["expr"]])  # its lines of words, data beside the spec
        assert title == (f"{index + 1}. {step.name} · shape {tuple(step.value.shape)} · largest {norms.max():.3g} "
                         f"{step.formula}")
    written = chart_values(chart_keyed(page, "‖residual in‖, ‖attention‖"))
    for part, norms in block.written().items():
        if part in set(written["part"]):
            np.testing.assert_allclose(written[written["part"] == part]["norm"].to_numpy(), norms[0], **CLOSE)
    mixed = mixing(loaded, encoding, 1)
    np.testing.assert_allclose(chart_values(chart_keyed(page, "Mixing ratio"))["ratio"], mixed.mixing_ratio[0], **CLOSE)
    np.testing.assert_allclose(chart_matrix(chart_keyed(page, "‖z̃_ij‖")), mixed.contributions[0], **CLOSE)
    words = " ".join(block.value for block in page.markdown)
    assert "What each sublayer writes into the stream, layer 1" in [heading.value for heading in page.subheader]
    assert ("after each add" if block.placement == "post" else "before each sublayer") in words
    assert block.norm_name in words


def test_the_blocks_button_opens_the_one_head_view_at_its_layer():
    page = open_page(view="block", layer="3")
    page.button(key="block_to_head").click().run()
    assert_healthy(page)
    assert page.query_params.get("view", "head") == "head", "the default view leaves the link"
    assert page.query_params["layer"] == "3"
    assert page.radio(key="view").value == "head"


def test_the_block_reads_the_layer_and_head_alone_and_the_head_is_one_of_the_models():
    """The block runs the layer as the model does: beside it no source, head_dim, scaling, mask or seed that it would
    not read, and its softmax in blocks draws the head slider, a head the random source's narrower heads allow (a
    link's) brought inside the model's own, saying so. The link keeps the other controls' values for the views that
    read them."""
    page = open_page(view="block", layer="1", source="random", head_dim="16", head="20", scaling="none", seed="7")
    assert_healthy(page)
    drawn = {widget.key for kind in ("slider", "segmented_control", "number_input", "selectbox")
             for widget in getattr(page, kind) if widget.key}
    assert {"layer", "head"} <= drawn
    assert not drawn & {"source", "head_dim", "scaling", "temperature", "mask", "window", "seed"}, drawn
    assert page.slider(key="head").max == 11 and page.slider(key="head").value == 11
    assert any("head=20 does not exist" in warning.value for warning in page.warning), [w.value for w in page.warning]
    assert "Layer 1, head 11, one query's row of scores." in " ".join(block.value for block in page.markdown)
    page.slider(key="layer").set_value(2).run()
    assert_healthy(page)
    assert (page.query_params["layer"], page.query_params["head"]) == ("2", "11")
    assert (page.query_params["source"], page.query_params["seed"], page.query_params["scaling"]) == (
        "random", "7", "none")
    page.slider(key="head").set_value(3).run()
    assert_healthy(page)
    assert "Layer 2, head 3, one query's row of scores." in " ".join(block.value for block in page.markdown)
    assert page.query_params["head"] == "3"


def test_a_layer_beyond_the_model_is_refused_with_a_notice():
    page = open_page(view="block", layer="9")
    assert_healthy(page)
    assert any("layer" in warning.value for warning in page.warning), [w.value for w in page.warning]
    assert charts(page), "the block of a layer the model has is drawn"


# ---- The next token, layer by layer ----

def test_the_lens_draws_the_cores_top_tokens_and_downloads_its_table(decoder):
    query, folder = decoder
    page, made = open_keeping_downloads({**query, "view": "lens"})
    assert_healthy(page)
    model = load_language_model(str(folder))
    lens = logit_lens(model, encode(model.model, TEXT))
    shown = chart_matrix(chart_keyed(page, "Top next token"))  # (L + 1, P shown): the last positions
    np.testing.assert_allclose(shown, lens.top_probabilities[:, -shown.shape[1]:, 0], **CLOSE)
    table = pd.read_csv(io.StringIO(made["logit-lens.csv"]()), keep_default_na=False)
    assert tuple(table.columns) == TABLE_COLUMNS
    expected = pd.DataFrame(lens.table(), columns=list(TABLE_COLUMNS))
    assert table["token"].tolist() == expected["token"].tolist()
    np.testing.assert_allclose(table["probability"], expected["probability"], rtol=1e-5)
    assert len(table) == lens.top_ids.shape[0] * len(lens.positions) * 5
    last = html_table(page, "lens-last-position")  # the guess after the last token, layer by layer
    assert last["top token"].tolist() == [per_layer[-1][0] for per_layer in lens.top_tokens]
    np.testing.assert_allclose(last["P(final guess)"], lens.prediction_probability[:, -1], **CLOSE)


def test_the_lens_rings_the_first_layer_of_the_final_guess(decoder):
    query, folder = decoder
    page = open_page({**query, "view": "lens"})
    model = load_language_model(str(folder))
    lens = logit_lens(model, encode(model.model, TEXT))
    spec = chart_keyed(page, "Top next token").proto
    frames = [chart_values_of(data.data.data) for data in spec.datasets]
    [rings] = [frame for frame in frames if list(frame.columns) == ["row", "column"]]
    assert rings["row"].tolist() == lens.first_layer[-len(rings):].tolist()


def chart_values_of(blob: bytes) -> pd.DataFrame:
    import pyarrow as pa

    return pa.ipc.open_stream(blob).read_all().to_pandas()


def test_a_model_without_a_head_gets_a_notice_and_no_lens():
    page = open_page(view="lens")
    assert_healthy(page)
    notice = " ".join(info.value for info in page.info)
    assert "no language-model head" in notice and "load gpt2, a smollm2 or bert-base-uncased" in notice.lower()
    assert not charts(page)


def test_a_bert_with_its_head_asks_for_its_mask(tmp_path, monkeypatch):
    from tests.conftest import save_tiny_bert

    save_tiny_bert(tmp_path, with_mlm_head=True)
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tmp_path))
    page = open_page(view="lens", model=str(tmp_path), text="no mask here")
    assert_healthy(page)
    assert page.warning and "[MASK]" in " ".join(warning.value for warning in page.warning)


# ---- Generation with a KV cache ----

def test_generation_draws_each_steps_row_and_the_cache_growing(decoder):
    query, folder = decoder
    page = open_page({**query, "view": "generate"})
    assert_healthy(page)
    model = load_language_model(str(folder))
    generation = generate(model, TEXT, GenerationSettings(max_new_tokens=8, stop_at_end=False))
    shape = model.shape
    steps = html_table(page, "generate-steps")
    assert steps["cache (bytes)"].tolist() == [step.cache_bytes for step in generation.steps]
    [body] = [html.proto.body for html in page.get("html") if 'data-testid="generate-steps"' in html.proto.body]
    largest = max(step.cache_bytes for step in generation.steps)
    assert f'title="{largest}">{largest:,}</td>' in body, "a count of bytes is written with its thousands apart"
    prompt = len(generation.prompt_ids)
    assert steps["K and V cached (per layer)"].tolist() == [
        str((1, shape.kv_heads, prompt + index, shape.head_size)) for index in range(len(generation.steps))]
    assert steps["Q (per layer)"].tolist()[1:] == [str((1, shape.num_heads, 1, shape.head_size))] * 7
    # Every step on the last step's keys, those not cached yet empty (NaN): one spec for every step
    last = prompt + len(generation.steps) - 1
    first = chart_keyed(page, "The new token's query row")
    row = chart_matrix(first, fill=np.nan)
    assert row.shape == (shape.num_heads, last) and np.isnan(row[:, prompt:]).all()
    np.testing.assert_allclose(row[:, :prompt], generation.steps[0].weights[0], **CLOSE)
    pick_on_chart(page, "generate_row", decode_step=5)
    page.slider(key="generate_layer").set_value(1).run()
    assert_healthy(page)
    moved = chart_keyed(page, "The new token's query row")
    row = chart_matrix(moved, fill=np.nan)
    assert row.shape == (shape.num_heads, last) and np.isnan(row[:, prompt + 5:]).all()
    np.testing.assert_allclose(row[:, :prompt + 5], generation.steps[5].weights[1], **CLOSE)
    pick_on_chart(page, "generate_row", decode_step=6)
    assert chart_keyed(page, "The new token's query row").proto.spec == moved.proto.spec, "a step's own spec"
    assert any(caption.value.startswith("Step 6, layer 1: ") for caption in page.caption), "the caption follows it"
    kind = "grouped-query" if shape.kv_heads < shape.num_heads else "multi-head"
    assert any(kind in caption.value for caption in page.caption)


def test_streaming_what_if_shows_the_cores_two_continuations(decoder):
    query, folder = decoder
    page = open_page({**query, "view": "generate", "sinks": "2"})
    page.slider(key="recent").set_value(3).run()
    assert page.query_params["recent"] == "3" and page.query_params["sinks"] == "2", "the link holds the cache's"
    assert_healthy(page)
    model = load_language_model(str(folder))
    what_if = streaming_what_if(model, TEXT, StreamingSettings(sinks=2, window=3),
                                GenerationSettings(max_new_tokens=8, stop_at_end=False))
    prompt = len(what_if.kept.prompt_ids)
    shown = html_table(page, "generate-streaming")["continuation"].tolist()
    assert shown == [" · ".join(run.tokens[prompt:]) for run in (what_if.kept, what_if.evicted)]
    kept = chart_matrix(chart_keyed(page, "Last step, first tokens kept"))
    np.testing.assert_allclose(kept, what_if.kept.steps[-1].weights[0], **CLOSE)
    assert kept.shape[1] == 5, "2 sinks and a window of 3"


def test_an_encoder_is_told_it_does_not_generate():
    page = open_page(view="generate")
    assert_healthy(page)
    assert any("does not generate" in info.value for info in page.info)
    assert not charts(page)


def test_a_text_that_fills_the_models_positions_gets_a_notice(decoder):
    query, _ = decoder
    page = open_page({**query, "view": "generate", "text": " ".join(["rain"] * 400)})
    assert_healthy(page)
    assert any("no room" in warning.value or "positions" in warning.value for warning in page.warning)


def test_the_links_new_tokens_are_generated_and_a_count_past_the_pages_range_is_refused(decoder):
    query, _ = decoder
    page = open_page({**query, "view": "generate", "new_tokens": "3"})
    assert_healthy(page)
    assert len(html_table(page, "generate-steps")) == 3, "the prefill and two fed tokens: three guesses"
    page = open_page({**query, "view": "generate", "new_tokens": "99"})
    assert_healthy(page)
    assert any("new_tokens=`99` was ignored" in warning.value for warning in page.warning)
    assert len(html_table(page, "generate-steps")) == 8, "the default instead"
