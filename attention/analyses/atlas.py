"""A head atlas: what every head of a model does, in a few numbers each (Clark et al. 2019, "What does BERT look at?").

For a text of T tokens and one head's weights α (T × T), as Clark et al.'s code computes them:

- previous = Σ_i α[i, i−1] / T, next = Σ_i α[i, i+1] / T, self = Σ_i α[i, i] / T;
- cls, sep, punct: the weight on the first token ([CLS] for BERT, GPT-2's first), on [SEP], on "." and ","
  tokens, summed over those keys and averaged over the queries (no [SEP] in GPT-2: its column is NaN);
- entropy: the mean over the queries of −Σ_j α_ij ln α_ij, each row divided by ln of the number of keys the mask
  lets it look at (T under BERT's mask; i + 1 for GPT-2's query i, which looks back only). Clark et al.'s 3.8 nats
  for "broad" assumed 128-token texts, which a 12-token sentence could never reach; divided, 1 is a uniform row at
  any length and under any mask (divided by ln T, a uniform causal head reached about 0.7 at 17 tokens, and no
  decoder's head could be called broad). A query allowed one key has no spread to measure: it is left out of the
  mean, and a text with no other query (one token) has no entropy (NaN), left out of the corpus's mean.

Over a corpus each number is the mean over its sentences. A head is labelled by its strongest behaviour above
its threshold (0.5 for previous, next and self, 0.6 for cls, sep and punct), else "broad" above 0.8 normalised
entropy, else "mixed". Clark et al.'s plotting code swaps "previous" and "next"; the definitions above are their
computation's (tests/core/test_atlas.py holds them against synthetic diagonals).

Heads that attend alike: the mean Jensen–Shannon divergence between every two heads' rows (over the queries and
the sentences), placed on a plane by classical multidimensional scaling (their Fig. 6).

Padding is no token: left out of every behaviour, of T and of the divergences.
Shapes: B batch (sentences), T tokens, L layers, nh heads, H = L·nh every head of the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attention.dissect.trace import layer_attention
from attention.models.loading import LoadedModel
from attention.models.readable import SPACE
from attention.stages import masks
from attention.stages.settings import TraceSettings
from attention.text.encoding import Encoding, encode_batch

BEHAVIOURS = ("previous", "next", "self", "cls", "sep", "punct")
COLUMNS = (*BEHAVIOURS, "entropy")
THRESHOLDS = {"previous": 0.5, "next": 0.5, "self": 0.5, "cls": 0.6, "sep": 0.6, "punct": 0.6}
BROAD_ENTROPY = 0.8  # normalised entropy above which a head with no behaviour is "broad"
LABELS = (*BEHAVIOURS, "broad", "mixed")
PUNCTUATION = frozenset({".", ","})
# The divergences of one text take H²/2 · T² floats of work: above this (a 512-token text on bert-base) they are
# left out, and the atlas has no plane.
MAX_DIVERGENCE_WORK = 2**29
BATCH_SENTENCES = 32  # sentences run through the model at once, sorted by length so that few are padding
# A few hundred sentences of varied English written for this project (CC0): short and long, questions, lists
# with commas, dialogue. One a line; "#" starts a comment.
CORPUS = Path(__file__).parent / "data" / "atlas_corpus.txt"
MODEL_OWN = TraceSettings()  # the trained heads as the model runs them: Clark et al. measured those


@dataclass(frozen=True, eq=False)
class HeadAtlas:
    """Every head's behaviours, averaged over `sentences` texts, and how alike the heads attend."""

    scores: np.ndarray  # (L, nh, len(COLUMNS)) float64; sep NaN when the model has no [SEP], entropy on one token
    divergence: np.ndarray | None  # (H, H) the mean Jensen–Shannon divergence (nats) between heads; None: too long
    sentences: int

    @property
    def num_layers(self) -> int:
        return self.scores.shape[0]

    @property
    def num_heads(self) -> int:
        return self.scores.shape[1]

    def column(self, name: str) -> np.ndarray:
        """(L, nh) one of COLUMNS."""
        return self.scores[..., COLUMNS.index(name)]

    def labels(self) -> np.ndarray:
        """(L, nh) str: each head's label (LABELS)."""
        return np.vectorize(lambda layer, head: label(self.scores[layer, head]))(
            *np.indices(self.scores.shape[:2])).astype(str)

    def strength(self) -> np.ndarray:
        """(L, nh): the share behind each head's label: its behaviour's score, its normalised entropy if broad,
        its largest behaviour if mixed."""
        return np.vectorize(lambda layer, head: strength(self.scores[layer, head]))(
            *np.indices(self.scores.shape[:2]))

    def plane(self) -> np.ndarray | None:
        """(H, 2): every head placed by classical MDS of the divergences (head h of layer ℓ at row ℓ·nh + h)."""
        return None if self.divergence is None else classical_mds(self.divergence)

    def rows(self) -> list[dict[str, object]]:
        """One row per head for the CSV: layer, head, the COLUMNS, label."""
        labels = self.labels()
        return [{"layer": layer, "head": head, **{name: float(self.scores[layer, head, index])
                                                  for index, name in enumerate(COLUMNS)},
                 "label": str(labels[layer, head])}
                for layer in range(self.num_layers) for head in range(self.num_heads)]


def label(scores: np.ndarray) -> str:
    """A head's label from its scores (len(COLUMNS),): its strongest behaviour above its threshold, by how far
    above it is; else broad or mixed."""
    above = {name: scores[index] - THRESHOLDS[name] for index, name in enumerate(BEHAVIOURS)
             if np.isfinite(scores[index]) and scores[index] > THRESHOLDS[name]}
    if above:
        return max(above, key=above.get)
    return "broad" if scores[COLUMNS.index("entropy")] > BROAD_ENTROPY else "mixed"


def strength(scores: np.ndarray) -> float:
    name = label(scores)
    if name == "broad":
        return float(scores[COLUMNS.index("entropy")])
    if name == "mixed":
        return float(np.nanmax(scores[:len(BEHAVIOURS)]))
    return float(scores[COLUMNS.index(name)])


def sentence_scores(weights: np.ndarray, attention_mask: np.ndarray, separators: np.ndarray | None,
                    punctuation: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """(B, H, len(COLUMNS)): the behaviours of every head on every sentence of a batch.

    weights (B, H, T, T); attention_mask (B, T), 1 for a token, 0 for padding; separators (B, T) bool, the [SEP]
    tokens (None: the model has none, the column is NaN); punctuation (B, T) bool; allowed (B, T, T) or (B, 1, T)
    bool, the keys each query may look at (attention.stages.masks.allowed_keys; None: every real key, BERT's mask). The
    first token is the first real one of each row."""
    real = attention_mask.astype(bool)  # (B, T)
    counts = real.sum(axis=1).astype(np.float64)[:, None]  # (B, 1): T of each sentence
    weights = _without_padding(weights, real)  # (B, H, T, T)
    rows = np.arange(weights.shape[0])
    first = real.argmax(axis=1)  # (B,)
    diagonal = {offset: weights.diagonal(offset, axis1=-2, axis2=-1).sum(axis=-1)  # (B, H)
                for offset in (-1, 0, 1)}
    on_keys = weights.sum(axis=-2)  # (B, H, T): each key's weight summed over the queries
    scores = {
        "previous": diagonal[-1] / counts,
        "next": diagonal[1] / counts,
        "self": diagonal[0] / counts,
        "cls": on_keys[rows, :, first] / counts,
        "sep": (np.full(on_keys.shape[:2], np.nan) if separators is None
                else (on_keys * separators[:, None, :]).sum(axis=-1) / counts),
        "punct": (on_keys * punctuation[:, None, :]).sum(axis=-1) / counts,
        "entropy": _spread(weights, real, real[:, None, :] if allowed is None else allowed),
    }
    return np.stack([scores[name] for name in COLUMNS], axis=-1)  # (B, H, len(COLUMNS))


def _spread(weights: np.ndarray, real: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """(B, H): the mean over each sentence's real queries of their rows' entropy divided by ln of the number of
    keys the mask allows them, the queries allowed a single key left out (their entropy is 0 and can be nothing
    else); NaN for a sentence with no other query. weights (B, H, T, T) without padding, real (B, T), allowed
    (B, T, T) or (B, 1, T)."""
    batch, tokens = real.shape
    keys = (np.broadcast_to(allowed, (batch, tokens, tokens)) & real[:, None, :]).sum(axis=-1)  # (B, T)
    measured = real & (keys > 1)  # (B, T): the queries whose row can spread
    normalised = _row_entropy(weights) / np.log(np.maximum(keys, 2))[:, None, :]  # (B, H, T)
    rows = measured.sum(axis=1).astype(np.float64)[:, None]  # (B, 1)
    total = (normalised * measured[:, None, :]).sum(axis=-1)  # (B, H)
    return np.divide(total, rows, out=np.full(total.shape, np.nan), where=rows > 0)


def divergence_sums(weights: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """(H, H): for every two heads, the Jensen–Shannon divergence (nats) of their rows, averaged over each
    sentence's queries and summed over the sentences. weights (B, H, T, T), attention_mask (B, T).

    JS(p, q) = H(m) − (H(p) + H(q)) / 2 with m = (p + q) / 2 and H the entropy; with s = p + q,
    H(m) = ln 2 − ½ Σ s ln s on a real row. The heads' own entropies once, then each head summed with the heads
    after it, in torch (its log is several times numpy's on one thread)."""
    real = torch.from_numpy(attention_mask.astype(bool))  # (B, T)
    counts = real.sum(dim=1, keepdim=True).to(torch.float32)  # (B, 1)
    heads = weights.shape[1]
    sums = np.zeros((heads, heads))
    with torch.inference_mode():
        weights = torch.from_numpy(_without_padding(weights, attention_mask.astype(bool)).astype(np.float32))
        own = _x_log_x(weights)  # (B, H, T): −H(p) of each row, 0 on padded rows
        for head in range(heads - 1):
            summed = weights[:, head:head + 1] + weights[:, head + 1:]  # (B, H − head − 1, T, T): s = p + q
            # JS = ln 2 − ½ Σ s ln s + ½ (Σ p ln p + Σ q ln q), on the real rows
            divergence = (own[:, head:head + 1] + own[:, head + 1:] - _x_log_x(summed, in_place=True)) * 0.5
            divergence += np.log(2.0) * real[:, None, :]
            per_sentence = divergence.sum(dim=-1) / counts  # (B, ·): the mean over the real queries
            sums[head, head + 1:] = per_sentence.sum(dim=0).numpy()
    return np.clip(sums + sums.T, 0.0, None)  # float32 rounding can leave −1e-7 where two heads are alike


def _x_log_x(weights: torch.Tensor, in_place: bool = False) -> torch.Tensor:
    """(..., T, T) -> (..., T): Σ_j α_ij ln α_ij of each row, 0·ln 0 as 0; in_place spends weights on it (a
    temporary of the caller's: one pass over memory fewer)."""
    kept = weights.clamp_min_(1e-30) if in_place else weights.clamp_min(1e-30)
    terms = torch.log(kept)
    terms.mul_(kept if in_place else weights)
    return terms.sum(dim=-1)


def classical_mds(distances: np.ndarray, dimensions: int = 2) -> np.ndarray:
    """(N, N) dissimilarities -> (N, dimensions) points whose distances come closest to them (Torgerson's MDS:
    the double-centred squared distances' largest eigenvectors, each times the root of its eigenvalue)."""
    count = distances.shape[0]
    centring = np.eye(count) - np.full((count, count), 1.0 / count)  # (N, N) J = I − 11ᵀ/N
    inner = -0.5 * centring @ (distances ** 2) @ centring  # (N, N) B, the points' Gram matrix
    values, vectors = np.linalg.eigh(inner)  # ascending
    order = np.argsort(values)[::-1][:dimensions]
    points = vectors[:, order] * np.sqrt(np.clip(values[order], 0.0, None))  # (N, dimensions)
    return points * np.where(points.sum(axis=0) < 0, -1.0, 1.0)  # a fixed orientation, the same on every run


def corpus_sentences(path: Path = CORPUS) -> tuple[str, ...]:
    """The corpus's sentences, in the file's order."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


def punctuation_mask(tokens: Sequence[Sequence[str]]) -> np.ndarray:
    """(B, T) bool: the "." and "," tokens (readable tokens: GPT-2's leading-space mark left aside)."""
    return np.array([[token.removeprefix(SPACE) in PUNCTUATION for token in row] for row in tokens], dtype=bool)


def separator_mask(encoding: Encoding, has_separator: bool) -> np.ndarray | None:
    """(B, T) bool: the sink tokens after the first ([SEP]), or None for a family without them (GPT-2)."""
    if not has_separator:
        return None
    sinks = encoding.sinks.copy()  # (B, T)
    sinks[np.arange(len(sinks)), encoding.attention_mask.astype(bool).argmax(axis=1)] = False
    return sinks


def head_atlas(loaded: LoadedModel, pairs: Sequence[tuple[str, str | None]], settings: TraceSettings = MODEL_OWN,
               on_batch: Callable[[int, int], None] | None = None, batch_sentences: int = BATCH_SENTENCES
               ) -> HeadAtlas:
    """The atlas of the model's heads over the texts (text, second text or None), every layer under settings
    (its layer and head are not read). The texts run through the model in batches of similar length;
    on_batch(done, total) is told the sentences done after each."""
    shape = loaded.shape
    has_separator = loaded.family.separator is not None  # BERT's [SEP]; GPT-2 has none
    order = sorted(range(len(pairs)), key=lambda index: len(pairs[index][0]) + len(pairs[index][1] or ""))
    score_sum = score_count = divergence_sum = None
    alike = True  # whether the divergences are measured: every batch within MAX_DIVERGENCE_WORK
    for start in range(0, len(order), batch_sentences):
        batch = [pairs[index] for index in order[start:start + batch_sentences]]
        encoding = encode_batch(loaded, batch)
        weights = np.concatenate([  # (B, H, T, T): layer by layer, every head of each
            layer_attention(loaded, encoding, dataclasses.replace(settings, layer=layer, head=0)).weights
            for layer in range(shape.num_layers)], axis=1)
        allowed = masks.allowed_keys(settings.mask_kind(shape), torch.from_numpy(encoding.attention_mask),
                                     settings.window).numpy()  # (B, T, T) or (B, 1, T)
        scores = sentence_scores(weights, encoding.attention_mask, separator_mask(encoding, has_separator),
                                 punctuation_mask(encoding.tokens), allowed)  # (B, H, len(COLUMNS))
        measured = np.isfinite(scores)  # a sentence without a number (NaN) is left out of its mean
        sums, counts = np.where(measured, scores, 0.0).sum(axis=0), measured.sum(axis=0)  # (H, len(COLUMNS))
        score_sum = sums if score_sum is None else score_sum + sums
        score_count = counts if score_count is None else score_count + counts
        heads, tokens = weights.shape[1], weights.shape[-1]
        alike = alike and heads * heads * tokens * tokens // 2 <= MAX_DIVERGENCE_WORK
        if alike:
            sums = divergence_sums(weights, encoding.attention_mask)  # (H, H)
            divergence_sum = sums if divergence_sum is None else divergence_sum + sums
        if on_batch is not None:
            on_batch(min(start + batch_sentences, len(order)), len(order))
    count = len(order)
    means = np.divide(score_sum, score_count, out=np.full(score_sum.shape, np.nan), where=score_count > 0)
    return HeadAtlas(scores=means.reshape(shape.num_layers, -1, len(COLUMNS)),
                     divergence=divergence_sum / count if alike else None,
                     sentences=count)


def _without_padding(weights: np.ndarray, real: np.ndarray) -> np.ndarray:
    """(B, H, T, T) with the rows and columns of padding at 0."""
    return weights * real[:, None, :, None] * real[:, None, None, :]


def _row_entropy(weights: np.ndarray) -> np.ndarray:
    """(..., T, T) -> (..., T): each row's entropy in nats, 0·ln 0 as 0."""
    terms = np.log(np.where(weights > 0, weights, 1.0))  # (..., T, T): ln α, 0 where α is 0
    terms *= weights
    return -terms.sum(axis=-1)
