"""The generation view's Layer slider, which stands in the step's fragment (views/generate.py) yet picks the layer of
the StreamingLLM maps outside it: after a move, the step's row and both maps are that layer's, the core's numbers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from attention.experiments.generation import GenerationSettings, StreamingSettings, generate, streaming_what_if
from attention.models.lm_heads import load_language_model
from tests.pages import (
    assert_healthy,
    chart_matrix,
    chart_title,
    charts,
    open_page,
    pick_on_chart,
    picture_values,
)

TEXT = "what if it rains tomorrow"
CLOSE = dict(rtol=1e-5, atol=1e-5)  # float32, through Arrow


def chart_titled(page, title: str):
    [chart] = [chart for chart in charts(page) if chart_title(chart).startswith(title)]
    return chart


def test_a_layer_move_shows_that_layer_in_the_step_and_in_both_streaming_maps(tmp_path, monkeypatch):
    from harness.checkpoints import tiny_gpt2

    folder = tiny_gpt2(tmp_path / "gpt2")
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(folder))
    page = open_page({"model": str(folder), "text": TEXT, "view": "generate"})
    pick_on_chart(page, "generate_row", decode_step=3)
    page.slider(key="generate_layer").set_value(1).run()
    assert_healthy(page)
    model = load_language_model(str(folder))
    settings = GenerationSettings(max_new_tokens=8, stop_at_end=False)
    generation = generate(model, TEXT, settings)
    cache = StreamingSettings(sinks=page.slider(key="sinks").value, window=page.slider(key="recent").value)
    what_if = streaming_what_if(model, TEXT, cache, settings)
    step = generation.steps[3]
    assert "Layer 1" in [caption.value for caption in page.caption], "the maps' layer, over them"
    row = chart_matrix(chart_titled(page, "The new token's query row"), fill=np.nan)
    np.testing.assert_allclose(row[:, list(step.cache_positions)], step.weights[1], **CLOSE)
    for run, name in ((what_if.kept, "kept"), (what_if.evicted, "evicted")):
        np.testing.assert_allclose(chart_matrix(chart_titled(page, f"Last step, first tokens {name}")),
                                   run.steps[-1].weights[1], **CLOSE)


def test_a_long_texts_step_row_is_drawn_as_a_picture_of_the_cores_weights(tmp_path, monkeypatch):
    """12 heads over 357 cached keys are 4,284 cells, past what is drawn as cells: the row is drawn as a picture,
    and the page stays whole."""
    from harness.checkpoints import tiny_gpt2

    folder = tiny_gpt2(tmp_path / "wide", n_head=12, n_embd=48, n_positions=512)
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(folder))
    text = "ab" * 175  # 350 tokens, a letter each (the tiny byte-level tokenizer has no merges)
    page = open_page({"model": str(folder), "text": text, "view": "generate"})
    assert_healthy(page)
    model = load_language_model(str(folder))
    generation = generate(model, text, GenerationSettings(max_new_tokens=8, stop_at_end=False))
    assert 12 * len(generation.steps[-1].cache_positions) > 64 * 64
    [chart] = [chart for chart in charts(page) if chart_title(chart).startswith("The new token's query row")]
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]
    [url] = [url for frame in frames if "url" in frame for url in frame["url"]]  # one picture, no cells
    step = generation.steps[0]
    drawn = picture_values(url, (12, len(generation.steps[-1].cache_positions)), [0.0, 1.0], "blues")
    np.testing.assert_allclose(drawn[:, list(step.cache_positions)], step.weights[0], atol=2 / 255)


def test_the_step_row_and_the_streaming_maps_keep_their_spec_for_another_layer_and_a_new_text(tmp_path, monkeypatch):
    """The charts' numbers and labels are data, and their layer is said beside them, not in their titles: another
    layer, or a new text as long, sends them alone, and the browser swaps them into the charts it drew (Altair built
    each map anew for every text before, and the step's row for every layer)."""
    from harness.checkpoints import tiny_gpt2
    from tests.page.test_charts_keep_their_spec import specs

    folder = tiny_gpt2(tmp_path / "gpt2")
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(folder))
    page = open_page({"model": str(folder), "text": TEXT, "view": "generate"})

    def maps() -> list[dict]:
        assert_healthy(page)
        return [spec for chart, spec in zip(charts(page), specs(page), strict=True)
                if chart_title(chart).startswith(("Last step", "The new token's query row"))]

    drawn = maps()
    assert len(drawn) == 3
    page.slider(key="generate_layer").set_value(1).run()
    assert maps() == drawn
    assert any(caption.value.startswith("Step 0, layer 1: ") for caption in page.caption), "the layer, under the row"
    page.text_area(key="text").set_value("what if it snows tonight").run()
    assert maps() == drawn
