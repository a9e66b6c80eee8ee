"""The block view's softmax in blocks of keys in a real Chromium: its Keys per block slider, pressed from the
keyboard, reruns the section (a fragment of its own) and the table of running numbers comes back with the core's
blocks, the largest score m and the sum ℓ after each, to float32's digits (the cells' tooltips)."""

from __future__ import annotations

import numpy as np
import torch

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.stages.tiled_softmax import tiled_context
from attention.text.encoding import encode
from harness.browser import load_page, slider_thumb, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

TEXT = "time flies like an arrow"  # 7 tokens with [CLS] and [SEP]: the query row is the last, 6
LAYER, HEAD = 0, 3
PANELS = '[data-testid="stVegaLiteChart"][aria-label^="m, ℓ and the rescale"]'  # the running numbers' chart


def test_the_keys_per_block_slider_brings_the_cores_blocks(page, base_url, bundled):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?view=block&text={TEXT.replace(' ', '+')}&layer={LAYER}&head={HEAD}",
              drawn=lambda tab: tab.locator(f"{PANELS} canvas, {PANELS} svg").first)
    expect(page.get_by_text("Query 6, 3 blocks of 3 keys:")).to_be_visible()  # the section opens at 3 keys a block
    slider_thumb(page, "tiled_block").press("ArrowLeft")
    expect(page.get_by_text("Query 6, 4 blocks of 2 keys:")).to_be_visible()
    wait_until_settled(page)

    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=LAYER, head=HEAD))
    row = torch.from_numpy(trace["masked"][0, 6])  # (T,) the last query's masked scores, of the head traced
    tiled = tiled_context(row, torch.from_numpy(trace["V"][0]), 2)
    header = page.locator('[data-testid="tiled-steps"] thead th').all_inner_texts()
    cells = page.locator('[data-testid="tiled-steps"] tbody tr').evaluate_all(  # a number's tooltip is its float32
        "rows => rows.map(row => [...row.children].map(cell => cell.title || cell.textContent))")
    shown = {name: [float(line[index]) for line in cells] for index, name in enumerate(header) if name in ("m", "ℓ")}
    np.testing.assert_allclose(shown["m"], [step.softmax.max_after for step in tiled.steps], rtol=1e-6)
    np.testing.assert_allclose(shown["ℓ"], [step.softmax.sum_after for step in tiled.steps], rtol=1e-6)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
