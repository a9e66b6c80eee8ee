"""The chart texts of the switch, block, lens, generation and Rotation views in Chromium: a screen reader finds them,
and they are drawn nowhere (a box of 1 px at most, as the one-head view's). None of these views draws a chart that
brings the charts' style with it (a scrubbed one), so each loads it itself; without it every text stood on the page
as a paragraph. The models are the tests' tiny GPT-2 and tiny Llama (harness/checkpoints.py), offered to a server of
this module's own as configured folders, beside the bundled BERT."""

from __future__ import annotations

import pytest

from harness.server import APP, streamlit_server
from tests.browser.test_lesson_chart_text_e2e import drawn_boxes, read_aloud
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
TEXT = "what+if+it+rains+tomorrow"


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tiny_gpt2_checkpoint):
    from harness.checkpoints import tiny_llama

    return {"gpt2": tiny_gpt2_checkpoint, "llama": tiny_llama(tmp_path_factory.mktemp("llama-text"))}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory, folders):
    with streamlit_server(APP, env={"ATTENTION_ANATOMY_MODEL_DIRS": ":".join(str(f) for f in folders.values())},
                          log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


# (the link's query, the model's folder or none for the bundled BERT, words of a text the view says)
VIEWS = {
    "switch": ("view=switch", None, "A moved (1 − cos), each head switched off alone"),
    "block": ("view=block&layer=1", None, "Layer 1, what each sublayer writes into 7 tokens"),
    "lens": (f"view=lens&text={TEXT}", "gpt2", "The logit lens, rows 0 (the embeddings) to 2"),
    "generate": (f"view=generate&text={TEXT}", "gpt2", "Last step, layer 0, first tokens kept"),
    "rotation": (f"view=head&head_stage=rotation&text={TEXT}", "llama", "Score of this q and k against distance"),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_the_views_chart_texts_are_read_and_not_drawn(view, page, base_url, folders):
    query, model, words = VIEWS[view]
    link = f"{base_url}/?{query}" + (f"&model={folders[model]}" if model else "")
    said = page.locator(".aa-chart-text", has_text=words)
    page.goto(link)
    said.wait_for(state="attached")
    page.locator(".vega-embed").first.wait_for()
    assert words in read_aloud(page), "a screen reader finds it"
    boxes = drawn_boxes(page)
    assert boxes and all(width <= 1 and height <= 1 for width, height in boxes), boxes
