"""Where a chart's colours start and end: 0 to a weights' largest (no lower than a uniform row's few times), ±the
largest |value| of a signed matrix, a head's, its layer's or 0 to 1; and a signed matrix's outliers clipped to the
end colours and ringed."""

from __future__ import annotations

import numpy as np

from attention.stages.dot_product import MASKED_SCORE
from components.charts.masked import unmasked

# A weights' colours end, under a head's or a layer's own largest weight, no lower than UNIFORM_TIMES times the
# weight a uniform row gives each of its K keys (1/K): a head that spreads its attention evenly (random projections:
# about 1/K everywhere) is then drawn pale and flat, where its own largest weight, 1.3/K, made it a dark square.
UNIFORM_TIMES = 4

# A signed matrix with a few outlier dimensions (the token embeddings, the heads' concatenated contexts) is coloured
# out to this quantile of its |values| (robust_bound): the outliers, beyond it, drawn at the end colours and ringed,
# where their ±1 to ±4 made every other value pale.
CLIP_QUANTILE = 0.99
CLIPPED_RING = "#000000"  # the ring round a clipped cell: black on both end colours and on the light cells near it


def colour_domain(matrix: np.ndarray, scheme: str, covering: list[float] | None = None) -> list[float]:
    """The colour scale's [low, high] for matrix (and covering, a range it must reach across too), the same
    for a picture and for cells: from 0 (or below) to the largest value; for "redblue" from -m to m, m the
    largest |value|, so that white is zero and -11 is as pale as +11, never as deep as +130."""
    low, high = _finite_range(matrix)
    if covering:
        low, high = min(low, *covering), max(high, *covering)
    if low > high:  # nothing finite to colour
        return [0.0, 1.0]
    if scheme == "redblue":
        bound = max(abs(low), abs(high)) or 1.0
        return [-bound, bound]
    return [min(low, 0.0), high if high > low else low + 1.0]


def _finite_range(matrix: np.ndarray) -> tuple[float, float]:
    """The smallest and largest value of matrix's unmasked cells; (inf, -inf) when none is. Read without a copy
    when none is masked (the rule: a head of a 474-token text is 0.9 MB, and every head is read)."""
    if matrix.size:
        low, high = float(matrix.min()), float(matrix.max())  # nan or ±inf as soon as one value is
        if low > MASKED_SCORE and np.isfinite(high):  # no NaN, no ±∞, no −∞ of a mask
            return low, high
    shown = matrix[unmasked(matrix)]  # (n,)
    return (float(shown.min()), float(shown.max())) if shown.size else (np.inf, -np.inf)


def head_domains(values: np.ndarray, scheme: str, weight_scale: str = "head",
                 layer_values: np.ndarray | None = None, weights: bool = False) -> np.ndarray:
    """values (nl, h, R, K) of some heads of some layers -> (nl, h, 2): each head's colour domain under the
    weight scale: "head" its own (colour_domain), "layer" its layer's, read over layer_values (nl, every
    head, R, K; values when omitted), "one" at least 0 to 1 (±1 for "redblue": a difference of weights).
    weights: the values are attention weights (rows of K keys summing to 1 at most), whose "head" and "layer"
    scales end no lower than uniform_end(K), so that a head no more focused than that is drawn pale.
    Carried as data, so that another scale swaps numbers and leaves a chart's spec alone."""
    layer_values = values if layer_values is None else layer_values
    covering = [0.0, 1.0] if weight_scale == "one" else None
    if weights and scheme == "blues" and covering is None:
        covering = [0.0, uniform_end(values.shape[-1])]
    domains = np.empty((*values.shape[:2], 2), dtype=np.float32)  # (nl, h, 2)
    for layer, heads in enumerate(values):  # (h, R, K)
        shared = colour_domain(layer_values[layer], scheme, covering) if weight_scale == "layer" else None
        for head, matrix in enumerate(heads):  # (R, K)
            domains[layer, head] = shared or colour_domain(matrix, scheme, covering)
    return domains


def uniform_end(keys: int) -> float:
    """The lowest end of a weights' colour scale over rows of `keys` keys: UNIFORM_TIMES times a uniform row's
    weight, 1 at most. A uniform row is drawn a quarter of the way to the dark end, pale and flat."""
    return min(1.0, UNIFORM_TIMES / max(keys, 1))


def robust_bound(matrix: np.ndarray) -> float:
    """How far a signed matrix's colours reach either side of zero: the CLIP_QUANTILE quantile of its unmasked
    |values| (1 when it has none, or all are 0). A few outliers beyond it are drawn at the end colours, ringed
    (clipped_cells), and the rest keep their colours."""
    shown = np.abs(matrix[unmasked(matrix)])  # (n,)
    bound = float(np.quantile(shown, CLIP_QUANTILE)) if shown.size else 0.0
    return bound if bound > 0 else (float(shown.max()) if shown.size and shown.max() > 0 else 1.0)


def clipped_cells(matrix: np.ndarray, clip_at: float) -> np.ndarray:
    """(n, 3) the row, column and value of each cell of matrix whose |value| lies beyond clip_at."""
    rows, columns = np.nonzero(unmasked(matrix) & (np.abs(matrix) > clip_at))  # (n,) each
    return np.stack([rows, columns, matrix[rows, columns]], axis=1) if rows.size else np.empty((0, 3))
