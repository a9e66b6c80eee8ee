"""Two texts side by side through AppTest: each heatmap is its own text's trace, the difference is a − b."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention import TraceSettings, build_trace, encode
from attention.compare import aligned_difference, aligned_positions
from tests.pages import assert_healthy, chart_matrix, chart_title, open_page

TEXT_A, TEXT_B = "time flies like an arrow", "fruit flies like a banana"


def run_compare(**query: str) -> AppTest:
    return open_page({"view": "compare", **query})


def heatmaps(page: AppTest) -> dict[str, np.ndarray]:
    """The three matrices on the page by title: "Text A", "Text B" and "A − B"."""
    matrices = {}
    for chart in page.get("vega_lite_chart"):
        title = chart_title(chart)
        name = "A − B" if "A − weights B" in title else title.split(":")[0]
        matrices[name] = chart_matrix(chart)
    return matrices


def weights(bundled, text: str, **settings) -> np.ndarray:
    return build_trace(bundled, encode(bundled, text), TraceSettings(**settings))["weights"][0]


@pytest.fixture(scope="module")
def pair_page() -> AppTest:
    return run_compare(text_b=TEXT_B, layer="1", head="8")


def test_the_view_opens_from_its_link_with_three_heatmaps(pair_page):
    assert_healthy(pair_page)
    assert sorted(heatmaps(pair_page)) == ["A − B", "Text A", "Text B"]
    assert not pair_page.info, "a second text was given: no fallback notice"


def test_each_heatmap_is_its_own_texts_trace_not_the_pair(pair_page, bundled):
    shown = heatmaps(pair_page)
    np.testing.assert_allclose(shown["Text A"], weights(bundled, TEXT_A, layer=1, head=8), atol=1e-6)
    np.testing.assert_allclose(shown["Text B"], weights(bundled, TEXT_B, layer=1, head=8), atol=1e-6)


def test_the_difference_is_a_minus_b_on_the_shared_tokens(pair_page, bundled):
    a, b = weights(bundled, TEXT_A, layer=1, head=8), weights(bundled, TEXT_B, layer=1, head=8)
    shared_a, shared_b = [0, 2, 3, 6], [0, 2, 3, 6]  # [CLS] flies like [SEP]
    expected = a[np.ix_(shared_a, shared_a)] - b[np.ix_(shared_b, shared_b)]
    np.testing.assert_allclose(heatmaps(pair_page)["A − B"], expected, atol=1e-6)
    assert float(pair_page.metric[0].value) == pytest.approx(expected.flat[np.abs(expected).argmax()], abs=5e-4)


def test_it_follows_the_sidebars_layer_and_head(pair_page, bundled):
    page = run_compare(text_b=TEXT_B)
    page.slider(key="layer").set_value(3).run()
    page.slider(key="head").set_value(5).run()
    assert_healthy(page)
    shown = heatmaps(page)
    a, b = weights(bundled, TEXT_A, layer=3, head=5), weights(bundled, TEXT_B, layer=3, head=5)
    np.testing.assert_allclose(shown["Text A"], a, atol=1e-6)
    np.testing.assert_allclose(shown["Text B"], b, atol=1e-6)
    np.testing.assert_allclose(shown["A − B"], aligned_difference(a, b, *aligned_positions(
        list(encode(bundled, TEXT_A).tokens[0]), list(encode(bundled, TEXT_B).tokens[0]))), atol=1e-6)


def test_without_a_second_text_it_compares_with_the_notebooks_sentence(bundled):
    page = run_compare()
    assert_healthy(page)
    assert "fruit flies like a banana" in page.info[0].value
    np.testing.assert_allclose(heatmaps(page)["Text B"], weights(bundled, TEXT_B), atol=1e-6)


def test_tokens_in_markdown_are_code_spans():
    page = run_compare(text="**bold** <b>x</b>", text_b="plain words")
    assert_healthy(page)
    captions = "\n".join(c.value for c in page.caption)
    assert "`**bold** <b>x</b>`" in captions


def colour_ranges(page: AppTest) -> dict[str, list[float]]:
    """Each weights heatmap's colour range: the one-column dataset ("value") its invisible layer carries."""
    ranges = {}
    for chart in page.get("vega_lite_chart"):
        title = chart_title(chart)
        for dataset in chart.proto.datasets:
            frame = pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()
            if list(frame.columns) == ["value"]:
                ranges[title.split(":")[0]] = frame["value"].tolist()
    return ranges


def test_both_heatmaps_share_one_colour_scale_and_a_head_move_keeps_their_specs(bundled):
    page = run_compare(text_b=TEXT_B, layer="1", head="8")
    specs = [chart.proto.spec for chart in page.get("vega_lite_chart")]
    for head in (8, 3):
        largest = max(weights(bundled, TEXT_A, layer=1, head=head).max(), weights(bundled, TEXT_B, layer=1,
                                                                                  head=head).max())
        ranges = colour_ranges(page)
        assert sorted(ranges) == ["Text A", "Text B"]
        for covered in ranges.values():
            np.testing.assert_allclose(covered, [0.0, largest], rtol=1e-6)
        page.slider(key="head").set_value(3).run()
        assert_healthy(page)
    assert [chart.proto.spec for chart in page.get("vega_lite_chart")] == specs, "only the data changed"
