"""The generation view's Layer slider, which stands in the step's fragment (views/generate.py) yet picks the layer of
the StreamingLLM maps outside it: after a move, the step's row and both maps are that layer's, the core's numbers."""

from __future__ import annotations

import numpy as np

from attention.experiments.generation import GenerationSettings, StreamingSettings, generate, streaming_what_if
from attention.models.lm_heads import load_language_model
from tests.pages import assert_healthy, chart_matrix, chart_title, charts, open_page

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
    page.slider(key="generate_step").set_value(3).run()
    page.slider(key="generate_layer").set_value(1).run()
    assert_healthy(page)
    model = load_language_model(str(folder))
    settings = GenerationSettings(max_new_tokens=8, stop_at_end=False)
    generation = generate(model, TEXT, settings)
    cache = StreamingSettings(sinks=page.slider(key="sinks").value, window=page.slider(key="recent").value)
    what_if = streaming_what_if(model, TEXT, cache, settings)
    step = generation.steps[3]
    row = chart_matrix(chart_titled(page, "Layer 1: the new token's query row"), fill=np.nan)
    np.testing.assert_allclose(row[:, list(step.cache_positions)], step.weights[1], **CLOSE)
    for run, name in ((what_if.kept, "kept"), (what_if.evicted, "evicted")):
        np.testing.assert_allclose(chart_matrix(chart_titled(page, f"Last step, layer 1, first tokens {name}")),
                                   run.steps[-1].weights[1], **CLOSE)
