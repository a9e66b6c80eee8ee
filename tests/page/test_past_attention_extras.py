"""Past the attention layer, two more things through AppTest: the block view's softmax in blocks of keys (one query's
row of the side column's layer and head, as the core computes it, against the softmax of the whole row), and the
logit lens of the induction lab's last trained model in this session, whose numbers are a direct forward pass of
that model (or, before any, a notice and a button to the lab)."""

from __future__ import annotations

import numpy as np
import torch

from attention.dissect.trace import build_trace
from attention.labs.induction import InductionConfig, training
from attention.stages.settings import TraceSettings
from attention.stages.tiled_softmax import tiled_context
from attention.text.encoding import encode
from components.views.parts.induction_training import STOPPED
from tests.core.test_induction_lens import direct_rows
from tests.pages import (
    TEXT,
    assert_healthy,
    chart_matrix,
    chart_title,
    chart_values,
    charts,
    html_table,
    open_page,
)

CLOSE = dict(rtol=1e-6, atol=1e-7)  # float32, through Arrow
# The lab's smallest settings but one, a seed of this module's own: a finished run of these would be every page's.
LAB = {"view": "induction", "steps": "100", "heads": "2", "vocab": "16", "seed": "4242"}
LAB_CONFIG = InductionConfig(vocab_size=16, heads=2, steps=100, seed=4242)
STOPPED_AT = 6  # steps trained before the run is stopped: the page shows a stopped run as it shows a finished one


def chart_keyed(page, title: str):
    [chart] = [chart for chart in charts(page) if chart_title(chart).startswith(title)]
    return chart


# ---- The tiled softmax, in the block view ----

def test_the_block_view_takes_one_query_row_in_blocks_as_the_core_does(bundled):
    page = open_page({"view": "block", "layer": "0", "head": "3"})
    assert_healthy(page)
    page.selectbox(key="tiled_query").set_value(3)
    page.slider(key="tiled_block").set_value(2).run()
    assert_healthy(page)
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=0, head=3))
    row = torch.from_numpy(trace["masked"][0, 3])  # (T,) query 3's masked scores
    tiled = tiled_context(row, torch.from_numpy(trace["V"][0]), 2)
    assert len(tiled.steps) == 4, "7 keys in blocks of 2"
    assert "Query 3, 4 blocks of 2 keys:" in [block.value for block in page.markdown]
    panels = chart_values(chart_keyed(page, "m, ℓ and the rescale"))
    for column in ("max_after", "sum_after", "rescale"):
        np.testing.assert_allclose(panels[column][1:], [getattr(step.softmax, column) for step in tiled.steps[1:]],
                                   **CLOSE)
    np.testing.assert_allclose(panels[["max_after", "sum_after"]].iloc[0],
                               [tiled.steps[0].softmax.max_after, tiled.steps[0].softmax.sum_after], **CLOSE)
    assert np.isnan(panels["rescale"][0]), "the first block has nothing to rescale, and draws no factor"
    assert (panels["rescale"][1:] < 1).sum() >= 2, "later blocks brought a larger max: the sum so far was rescaled"
    table = html_table(page, "tiled-steps")
    np.testing.assert_allclose(table[["m", "ℓ", "rescale"]].to_numpy(),
                               [[step.softmax.max_after, step.softmax.sum_after, step.softmax.rescale]
                                for step in tiled.steps], **CLOSE)
    drawn = chart_values(chart_keyed(page, "The softmax of the whole row"))
    np.testing.assert_allclose(drawn["tiled"], tiled.weights, **CLOSE)
    np.testing.assert_allclose(drawn["plain"], torch.softmax(row, dim=-1), **CLOSE)
    np.testing.assert_array_equal(drawn["block"], np.arange(7) // 2)
    weights, context = (metric.value for metric in page.metric)
    assert weights == f"{(tiled.weights - torch.softmax(row, dim=-1)).abs().max().item():.1e}"
    assert context == f"{np.abs(tiled.context.numpy() - trace['context'][0, 3]).max():.1e}"
    words = " ".join(block.value for block in page.markdown)
    assert "running" in words and "exp(m_old − m_new)" in words and "fast on-chip memory" in words


def test_a_shorter_text_brings_the_query_and_the_block_back_within_its_tokens():
    page = open_page({"view": "block"})
    page.selectbox(key="tiled_query").set_value(6)
    page.slider(key="tiled_block").set_value(7).run()
    page.text_area(key="text").set_value("hello").run()  # 3 tokens with [CLS] and [SEP]
    assert_healthy(page)
    assert page.selectbox(key="tiled_query").value == 2 and page.slider(key="tiled_block").value == 3


# ---- The lens on the induction lab's last trained model ----

def test_the_lens_before_any_induction_model_is_trained_says_to_train_one_and_opens_the_lab():
    page = open_page({"view": "lens"})
    page.radio(key="lens_source").set_value("induction").run()
    assert_healthy(page)
    assert "train one first in the induction lab" in " ".join(info.value for info in page.info)
    assert not charts(page)
    page.button(key="lens_to_induction").click().run()
    assert_healthy(page)
    assert page.radio(key="view").value == "induction"


def test_the_lens_reads_the_labs_last_trained_model_as_a_direct_forward_pass():
    steps = training(LAB_CONFIG)
    for _ in range(STOPPED_AT):
        progress = next(steps)
    run = progress.finish()  # stopped at step 6: the session keeps it, as a press of Stop does
    page = open_page(LAB)
    page.session_state[STOPPED] = {LAB_CONFIG: run}
    page.run()
    assert_healthy(page)
    assert f"Stopped at step {STOPPED_AT}" in " ".join(caption.value for caption in page.caption)
    page.radio(key="view").set_value("lens").run()
    page.radio(key="lens_source").set_value("induction").run()
    assert_healthy(page)
    for layers, model in zip((1, 2), progress.models, strict=True):
        page.radio(key="lens_induction_layers").set_value(layers).run()
        page.slider(key="lens_layer").set_value(layers).run()
        assert_healthy(page)
        example = run.example
        rows = direct_rows(model, example)  # L + 1 x (P, V)
        top = torch.stack(rows).max(dim=-1)  # (L + 1, P) values and indices
        matrix = chart_matrix(chart_keyed(page, "Top next token at each layer"))  # (L + 1, P shown)
        np.testing.assert_allclose(matrix, top.values[:, -matrix.shape[1]:].numpy(), **CLOSE)
        last_layer = html_table(page, "lens-one-layer")
        assert last_layer["after"].astype(str).tolist() == [str(token) for token in example]
        assert last_layer["1st"].astype(str).tolist() == [str(token) for token in top.indices[-1].tolist()]
        np.testing.assert_allclose(last_layer["P 1st"], top.values[-1].numpy(), **CLOSE)
        by_layer = html_table(page, "lens-last-position")
        np.testing.assert_allclose(by_layer["P(final guess)"],
                                   [row[-1, top.indices[-1, -1]].item() for row in rows], **CLOSE)
        assert f"The {layers}-layer attention-only decoder" in " ".join(block.value for block in page.markdown)
