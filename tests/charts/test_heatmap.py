"""The heatmap builder on its own: valid Vega-Lite specs, its cells, its pictures, and how it is drawn.

The page hands Streamlit the builder's specs without checking them again (components/charts/draw.py),
so they are checked against the Vega-Lite schema here, once.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from attention.stages.dot_product import MASKED_SCORE
from components.charts.colour_ranges import UNIFORM_TIMES, colour_domain, head_domains, robust_bound
from components.charts.colours import colour_ramp
from components.charts.draw import spec_and_frames
from components.charts.heatmap import MAX_VECTOR_CELLS, heatmap, heatmap_frames
from components.charts.masked import MASKED_COLOUR
from components.charts.pictures import picture_url, pooled
from components.charts.scrub import panel_frames
from components.charts.token_axes import LABEL_COLOUR, SENTENCE_B_COLOUR
from tests import rendered
from tests.pages import cell_labels, picture_values


@pytest.mark.parametrize("size", [7, 70], ids=["cells", "raster"])
@pytest.mark.parametrize("canvas", [False, True], ids=["default", "canvas"])
def test_every_kind_of_heatmap_is_a_valid_spec(size, canvas):
    matrix = np.random.default_rng(0).random((size, size), dtype=np.float32)
    labels = [f"t{i}" for i in range(size)]
    spec = heatmap(matrix, labels, labels, title="Attention weights", canvas=canvas).to_dict()  # validates

    assert spec["description"] == "Attention weights"  # the chart's aria-label in the browser
    assert spec.get("usermeta", {}).get("embedOptions", {}).get("renderer") == ("canvas" if canvas else None)
    assert ("layer" in spec) == (size * size > MAX_VECTOR_CELLS)


@pytest.mark.parametrize("canvas", [False, True], ids=["svg", "canvas"])
def test_cells_are_described_one_by_one_only_where_they_are_elements(canvas):
    """On SVG each cell is an element a screen reader can reach, with its ARIA description; on a canvas there is
    none, and a description Vega would format for every cell at every redraw is left out (the chart keeps its
    own)."""
    matrix = np.random.default_rng(0).random((7, 7), dtype=np.float32)
    spec = heatmap(matrix, list("abcdefg"), list("abcdefg"), title="Attention weights", canvas=canvas).to_dict()
    [rect] = [layer["mark"] for layer in spec.get("layer", [spec]) if isinstance(layer.get("mark"), dict)
              and layer["mark"].get("type") == "rect"]
    assert rect.get("aria", True) is not canvas
    assert spec["description"] == "Attention weights"


def test_small_matrices_send_one_row_per_cell():
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    chart = heatmap(matrix, ["a", "b", "c"], ["w", "x", "y", "z"], title="t")
    cells = chart.data
    assert len(cells) == 12
    np.testing.assert_array_equal(cells["0"].to_numpy().reshape(3, 4), matrix)  # the one head's column
    assert (cells["row"].tolist()[:4], cells["column"].tolist()[:4]) == ([0] * 4, [0, 1, 2, 3])
    assert cell_labels(chart.to_dict()) == (["a", "b", "c"], ["w", "x", "y", "z"])  # named on hover


@pytest.mark.parametrize(("shape", "scheme"), [((7, 7), "blues"), ((80, 80), "blues"), ((5, 384), "redblue")])
def test_a_picture_shows_each_cell_in_its_colour_of_the_ramp(shape, scheme):
    matrix = np.random.default_rng(0).random(shape).astype(np.float32) - (0.5 if scheme == "redblue" else 0.0)
    domain = colour_domain(matrix, scheme)
    shown = picture_values(picture_url(matrix, domain, scheme), shape, domain, scheme)
    np.testing.assert_allclose(shown, matrix, atol=3 * (domain[1] - domain[0]) / 255)


# Scores of one row of lesson step 2 (E·Eᵀ): far more above zero than below it.
LOPSIDED = np.array([[-11.0, 0.0, 130.0, 37.0], [5.0, -3.0, 2.0, -1.5]], dtype=np.float32)


def test_a_signed_matrix_is_coloured_symmetrically_around_zero():
    drawn = rendered.svg(heatmap(LOPSIDED, ["a", "b"], list("wxyz"), title="scores", scheme="redblue").to_dict())
    colours = rendered.cell_colours(drawn, LOPSIDED.shape)
    white = colour_ramp("redblue")[128]
    assert np.abs(colours[1, 1] - white).max() <= 6, "white is 0"
    # -11 lies a twelfth of the way from 0 to -130: pale, where a scale stretched to -11 drew it deepest red.
    assert rendered.darkness(colours[0, 0]) < rendered.darkness(colours[0, 3]) < rendered.darkness(colours[0, 2])
    np.testing.assert_allclose(colours[0, 0], colour_ramp("redblue")[round(255 * (130 - 11) / 260)], atol=2)


@pytest.mark.parametrize("scheme", ["blues", "redblue"])
def test_a_value_has_one_colour_whether_drawn_as_cells_or_as_a_picture(scheme):
    values = LOPSIDED if scheme == "redblue" else np.abs(LOPSIDED) / 130
    side = int(np.sqrt(MAX_VECTOR_CELLS)) + 6  # above the cells' limit: a picture
    large = np.zeros((side, side), dtype=np.float32)
    large[:2, :4] = values  # the same numbers, among zeros
    labels = [str(i) for i in range(side)]
    cells = rendered.cell_colours(rendered.svg(heatmap(values, ["a", "b"], list("wxyz"), title="t",
                                                       scheme=scheme).to_dict()), values.shape)
    picture = rendered.picture_colours(rendered.svg(heatmap(large, labels, labels, title="t",
                                                            scheme=scheme).to_dict()), large.shape)
    np.testing.assert_allclose(picture[:2, :4], cells, atol=2)


@pytest.mark.parametrize("side", [4, 70], ids=["cells", "picture"])
def test_zero_weight_is_drawn_white_and_the_largest_in_the_deepest_blue(side):
    weights = np.zeros((side, side), dtype=np.float32)
    weights[0, 1] = 0.6  # every other weight is 0
    labels = [str(i) for i in range(side)]
    drawn = rendered.svg(heatmap(weights, labels, labels, title="t").to_dict())
    colours = (rendered.cell_colours(drawn, weights.shape) if side == 4 else
               rendered.picture_colours(drawn, weights.shape))
    assert colours[0, 0].tolist() == [255, 255, 255], "no attention looks like none"
    assert colours[0, 1].tolist() == colour_ramp("blues")[-1].tolist()


def test_a_domain_given_to_a_signed_matrix_is_made_symmetric_too():
    assert colour_domain(LOPSIDED, "redblue") == [-130.0, 130.0]
    assert colour_domain(LOPSIDED, "redblue", [-200.0, 10.0]) == [-200.0, 200.0]
    assert colour_domain(np.abs(LOPSIDED) / 130, "blues", [0.0, 1.0]) == [0.0, 1.0]


def test_a_reversed_scale_draws_the_small_values_darkest():
    entropy = np.array([[0.2, 1.5], [0.9, 2.0]], dtype=np.float32)
    colours = rendered.cell_colours(rendered.svg(heatmap(entropy, ["0", "1"], ["0", "1"], title="t",
                                                         reverse=True).to_dict()), entropy.shape)
    darkness = rendered.darkness(colours).ravel()
    assert list(np.argsort(-darkness)) == list(np.argsort(entropy.ravel())), "darkest first = smallest first"


@pytest.mark.parametrize("size", [4, 70], ids=["cells", "picture"])
def test_sentence_b_is_marked_on_both_axes(size):
    labels = [f"a{i}" for i in range(size // 2)] + [f"b{i}" for i in range(size - size // 2)]
    matrix = np.random.default_rng(0).random((size, size), dtype=np.float32)
    drawn = rendered.svg(heatmap(matrix, labels, labels, title="t", second_sentence=(size // 2, size // 2)).to_dict())
    shown = rendered.label_colours(drawn)
    drawn_labels = [label for label in shown if label in labels]
    assert {label[0] for label in drawn_labels} == {"a", "b"}, "labels of both sentences drawn"
    for label in drawn_labels:
        assert shown[label] == ((SENTENCE_B_COLOUR, "bold") if label[0] == "b" else (LABEL_COLOUR, "normal")), label
    assert "query token (sentence B in orange)" in shown and "key token (sentence B in orange)" in shown
    plain = rendered.label_colours(rendered.svg(heatmap(matrix, labels, labels, title="t").to_dict()))
    assert SENTENCE_B_COLOUR not in {fill for fill, _ in plain.values()}


@pytest.mark.parametrize("scheme", ["blues", "redblue"])
def test_a_chart_carrying_its_colour_range_keeps_a_gradient_legend(scheme):
    drawn = rendered.svg(heatmap(LOPSIDED, ["a", "b"], list("wxyz"), title="t", scheme=scheme,
                                 domain=[0.0, 200.0]).to_dict())
    assert 'aria-label="Gradient legend for fill color' in drawn


def test_a_long_heads_picture_is_pooled_to_its_largest_weights():
    weights = np.zeros((512, 512), dtype=np.float32)
    weights[np.arange(1, 512), np.arange(511)] = 1.0  # a previous-token head: one-token diagonal
    small = pooled(weights, 110)
    assert small.shape == (103, 103), "blocks of 5 tokens, the last one short"
    assert (np.diag(small) == 1.0).all(), "the diagonal stays at its full weight, not a fifth of it"
    assert small.max() == weights.max() and pooled(weights[:100, :100], 110) is not None
    np.testing.assert_array_equal(pooled(weights[:100, :100], 110), weights[:100, :100])


@pytest.mark.parametrize("side", [4, 70], ids=["cells", "picture"])
def test_a_masked_cell_is_grey_and_left_out_of_the_colour_range(side):
    """The core's −∞ (float32's lowest number) or no number at all: drawn grey, in cells and pictures alike, and
    never the end of the legend, which it would stretch to ±3.4e38 and wash every other cell out."""
    scores = np.random.default_rng(0).normal(size=(side, side)).astype(np.float32)
    scores[np.triu_indices(side, 1)] = MASKED_SCORE  # a causal mask
    scores[-1, 0] = np.nan
    masked = np.triu(np.ones((side, side), dtype=bool), 1)
    masked[-1, 0] = True
    largest = np.abs(scores[~masked]).max()
    assert colour_domain(scores, "redblue") == [-largest, largest]
    labels = [str(i) for i in range(side)]
    chart = heatmap(scores, labels, labels, title="t", scheme="redblue")
    drawn = rendered.svg(chart.to_dict())  # validates, too
    grey = [int(MASKED_COLOUR[i:i + 2], 16) for i in (1, 3, 5)]
    if side == 4:
        assert drawn.count(f'fill="{MASKED_COLOUR}"') == masked.sum()
        assert np.isnan(chart.layer[0].data["0"].to_numpy()[masked.ravel()]).all(), "sent as no number"
    else:
        colours = rendered.picture_colours(drawn, scores.shape)
        assert (colours[masked] == grey).all() and not (colours[~masked] == grey).all(axis=-1).any()
        shown = picture_values(picture_url(scores, [-largest, largest], "redblue"), scores.shape,
                               [-largest, largest], "redblue")
        np.testing.assert_allclose(shown[~masked], scores[~masked], atol=3 * 2 * largest / 255)


def test_masked_cells_reach_every_sent_head_as_no_number_with_finite_ranges():
    values = np.random.default_rng(1).normal(size=(2, 3, 5, 5)).astype(np.float32)  # (nl, h, R, K)
    values[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] = MASKED_SCORE
    frames = panel_frames(values, (0, 1), (0, 1, 2), "redblue", raster=False, name="p0")
    cells, ranges = frames["p0-cells"], frames["p0-ranges"]
    above = (cells["column"] > cells["row"]).to_numpy()
    heads = [str(place) for place in range(6)]
    assert cells.loc[above, heads].isna().all().all() and cells.loc[~above, heads].notna().all().all()
    assert np.isfinite(ranges["value"]).all() and ranges["value"].abs().max() < 10
    table = pa.Table.from_pandas(cells)  # as the page sends it: Arrow, where NaN stays no number
    assert np.isnan(table.column("0").to_numpy(zero_copy_only=False)[above]).all()


@pytest.mark.parametrize(("scheme", "domain", "clip"), [("blues", None, False), ("redblue", None, False),
                                                      ("blues", [0.0, 2.0], False), ("redblue", None, True)])
@pytest.mark.parametrize("size", [320, 1000], ids=["small-cells", "marked-cells"])
def test_a_kept_heatmap_spec_takes_the_frames_of_any_matrix_of_its_size(scheme, domain, clip, size):
    """Marked cells: large enough for the signs' marks over them (cell_marks), which draw the cells' own dataset."""
    rng = np.random.default_rng(0)
    first, second = rng.normal(size=(2, 3, 40)).astype(np.float32)
    second[0, :5] = MASKED_SCORE  # masked cells in one matrix only
    labels = (["a", "b", "c"], [str(i) for i in range(40)])
    options = dict(title="t", scheme=scheme, domain=domain, size=size)
    drawn = [spec_and_frames(heatmap(matrix, *labels, **options, clip_at=robust_bound(matrix) if clip else None))
             for matrix in (first, second)]
    assert drawn[0][0] == drawn[1][0], "the numbers, the colours' ends and the clipped cells are data: the spec stays"
    for matrix, (_, theirs) in zip((first, second), drawn, strict=True):
        ours = heatmap_frames(matrix, scheme, domain, robust_bound(matrix) if clip else None)
        assert ours.keys() == theirs.keys()
        for name in ours:
            pd.testing.assert_frame_equal(ours[name], theirs[name])


def test_a_heatmap_drawn_as_a_picture_has_no_cells_to_send():
    with pytest.raises(ValueError, match="drawn as a picture"):
        heatmap_frames(np.zeros((65, 65)))


def test_the_weights_colours_end_no_lower_than_a_few_times_a_uniform_row():
    keys = 20
    uniform = np.full((1, 2, 5, keys), 1 / keys, dtype=np.float32)  # (nl, h, R, K): two heads spread evenly
    uniform[0, 0, 0, :2] += [0.01, -0.01]  # not quite even
    uniform[0, 1, :, 0] += 0.6 - 1 / keys  # the second head focused on its first key
    end = UNIFORM_TIMES / keys
    for scale in ("head", "layer"):
        domains = head_domains(uniform[:, :1], "blues", scale, weights=True)  # the even head alone in its layer
        assert domains[0, 0].tolist() == pytest.approx([0.0, end]), f"{scale}: an even spread ends at {end}"
    assert head_domains(uniform, "blues", "layer", weights=True)[0, 0].tolist() == pytest.approx([0.0, 0.6])
    assert head_domains(uniform, "blues", "head", weights=True)[0, 1].tolist() == pytest.approx([0.0, 0.6])
    assert head_domains(uniform, "blues", "one", weights=True)[0, 0].tolist() == [0.0, 1.0]
    assert head_domains(uniform, "blues", "head")[0, 0].tolist() == pytest.approx([0.0, 1 / keys + 0.01]), \
        "values that are not weights (what moves) keep their own largest"


def test_a_clipped_picture_draws_its_outliers_at_the_ends_and_rings_them():
    rng = np.random.default_rng(1)
    matrix = rng.normal(0.0, 0.1, size=(70, 70)).astype(np.float32)  # a picture, past MAX_VECTOR_CELLS
    matrix[3, 5], matrix[40, 60] = 4.0, -3.0  # two outlier cells
    bound = robust_bound(matrix)
    assert bound == pytest.approx(float(np.quantile(np.abs(matrix), 0.99)))
    labels = [str(i) for i in range(70)]
    drawn = rendered.svg(heatmap(matrix, labels, labels, title="t", scheme="redblue", clip_at=bound).to_dict())
    colours = rendered.picture_colours(drawn, matrix.shape)
    np.testing.assert_allclose(colours, picture_values_colours(matrix, bound), atol=2)
    rings = re.findall(r'<path transform="translate\(([\d.]+),([\d.]+)\)"[^>]*stroke="#000000"', drawn)
    assert len(rings) == int((np.abs(matrix) > bound).sum())


def picture_values_colours(matrix: np.ndarray, bound: float) -> np.ndarray:
    """(…, 3): each value's colour on the redblue ramp over ±bound, a value beyond it at the end colour."""
    steps = np.round(np.clip((matrix + bound) / (2 * bound), 0, 1) * 255).astype(int)
    return colour_ramp("redblue")[steps]
