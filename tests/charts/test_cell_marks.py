"""Meaning never rides on colour alone: a masked cell carries a "×" and a negative cell of a signed scale a bar,
where cells are big enough to hold them, and a picture's masked cells are hatched (components/charts/cell_marks.py,
masked.hatched). Drawn by Vega itself (tests/rendered.py) and read back by where each mark sits."""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from attention.stages.dot_product import MASKED_SCORE
from components.charts.cell_marks import MARK_MIN_PX, MASKED_MARK, MASKED_MARK_COLOUR, SIGN_EDGE
from components.charts.draw import spec_and_frames
from components.charts.heatmap import heatmap
from components.charts.masked import HATCH_COLOUR, MASKED_COLOUR
from components.charts.pictures import picture_url
from tests import rendered

# A cross: Vega's symbol of the cross's path, scaled (M-r,-rLr,rM-r,rLr,-r), at its centre.
_CROSS_PATH = r'd="M-[\d.]+,-[\d.]+L[\d.]+,[\d.]+M-[\d.]+,[\d.]+L[\d.]+,-[\d.]+"'
_MASKED_MARK = re.compile(rf'<path transform="translate\((-?[\d.]+),(-?[\d.]+)\)" {_CROSS_PATH} '
                          rf'stroke="{MASKED_MARK_COLOUR}"')
_SIGN_BAR = re.compile(rf'<path d="M(-?[\d.]+),(-?[\d.]+)h([\d.]+)v([\d.]+)h[^"]*" fill="#ffffff" stroke="{SIGN_EDGE}"')


def causal_scores(tokens: int, seed: int = 0) -> np.ndarray:
    """(T, T) signed scores, −∞ (the core's MASKED_SCORE) above the diagonal."""
    scores = np.random.default_rng(seed).normal(size=(tokens, tokens)).astype(np.float32)
    scores[np.triu_indices(tokens, 1)] = MASKED_SCORE
    return scores


def drawn(matrix: np.ndarray, scheme: str, size: int = 400) -> tuple[str, float, float]:
    """The heatmap of matrix as Vega draws it (SVG), and its cells' width and height in px."""
    labels = [f"t{i}" for i in range(matrix.shape[0])]
    spec, frames = spec_and_frames(heatmap(matrix, labels, labels, title="scores", scheme=scheme, size=size))
    spec["datasets"] = {name: frame.to_dict("records") for name, frame in frames.items()}
    return rendered.svg(spec), spec["width"] / matrix.shape[1], spec["height"] / matrix.shape[0]


def cells_marked(svg: str, pattern: re.Pattern, width: float, height: float, centred: bool) -> set[tuple[int, int]]:
    """The (row, column) of each cell a mark sits in: a cross by its centre (centred), a bar by its corner."""
    cells = set()
    for match in pattern.findall(svg):
        x, y = float(match[0]), float(match[1])
        if not centred:  # a bar: its middle
            x, y = x + float(match[2]) / 2, y + float(match[3]) / 2
        cells.add((int(y // height), int(x // width)))
    return cells


def test_every_masked_cell_and_only_those_carries_a_cross():
    scores = causal_scores(8)
    svg, width, height = drawn(scores, "redblue")
    assert min(width, height) >= MARK_MIN_PX
    crossed = cells_marked(svg, _MASKED_MARK, width, height, centred=True)
    assert crossed == {tuple(cell) for cell in np.argwhere(scores == MASKED_SCORE)}


def test_every_negative_cell_of_a_signed_scale_and_only_those_carries_a_bar():
    scores = causal_scores(8)
    svg, width, height = drawn(scores, "redblue")
    barred = cells_marked(svg, _SIGN_BAR, width, height, centred=False)
    assert barred == {tuple(cell) for cell in np.argwhere((scores < 0) & (scores > MASKED_SCORE))}


def test_weights_carry_no_bar_and_a_text_without_a_mask_no_cross():
    weights = np.random.default_rng(1).dirichlet(np.ones(8), size=8).astype(np.float32)  # (8, 8), rows sum to 1
    svg, width, height = drawn(weights, "blues")
    assert not _SIGN_BAR.findall(svg) and not _MASKED_MARK.findall(svg)
    svg, *_ = drawn(weights - weights.mean(), "redblue")
    assert _SIGN_BAR.findall(svg) and not _MASKED_MARK.findall(svg)


def test_cells_too_small_to_hold_a_mark_carry_none():
    scores = causal_scores(48)
    svg, width, height = drawn(scores, "redblue", size=300)
    assert max(width, height) < MARK_MIN_PX
    assert not _MASKED_MARK.findall(svg) and not _SIGN_BAR.findall(svg)
    labels = [f"t{i}" for i in range(48)]
    spec = json.dumps(spec_and_frames(heatmap(scores, labels, labels, title="scores", scheme="redblue", size=300))[0])
    assert MASKED_MARK not in spec and SIGN_EDGE not in spec, "no layer of marks at all: nothing to evaluate on a move"


@pytest.mark.parametrize("tokens", [80, 300])
def test_a_pictures_masked_cells_are_hatched_and_the_others_untouched(tokens):
    scores = causal_scores(tokens)
    picture = np.asarray(Image.open(io.BytesIO(base64.b64decode(picture_url(scores, [-3, 3], "redblue")
                                                                .split(",", 1)[1]))).convert("RGB"))
    rows = np.arange(picture.shape[0]) * tokens // picture.shape[0]  # each pixel's cell
    masked = rows[None, :] > rows[:, None]  # (H, W): above the diagonal, by cell
    hatch = np.all(picture == [int(HATCH_COLOUR[i:i + 2], 16) for i in (1, 3, 5)], axis=-1)
    grey = np.all(picture == [int(MASKED_COLOUR[i:i + 2], 16) for i in (1, 3, 5)], axis=-1)
    assert not hatch[~masked].any(), "a hatch line strays into a cell that holds a number"
    assert np.all((hatch | grey)[masked]), "a masked cell is grey and hatched, nothing else"
    assert 0.1 < hatch[masked].mean() < 0.25, "lines, not a fill: one pixel in HATCH_EVERY"
