"""What the one-head view's Rotation stage draws of a head whose q and k turn by position (RoPE,
attention/stages/rotary.py): one pair of numbers of a query and a key before and after the turn, and the circle the
pair walks over the positions; the scores when every position moves along by Δ; the score against distance.

Every number is turned by the same Rotation as the trace (the model's own frequencies, float32 products in
transformers' order); tests/core/test_rotary_views.py holds them to transformers' apply_rotary_pos_emb. A
HeadTurn is read off a trace once (head_turn); the rest are functions of it and plain integers, returning numpy.

Letters used in shape comments: T tokens, d head size (even), N + 1 distances, R points of a drawn circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.dissect.outline import turns_by_position
from attention.dissect.trace import Trace, rotation_for
from attention.models.loading import LoadedModel
from attention.stages.kv_heads import shared_head
from attention.stages.limits import IntRange
from attention.stages.rotary import Rotation

# Δ, how far every position moves in the shift test, at most: 8 times the 512 tokens a text has here at most. The
# angles' float32 rounding grows with the position, and the test reports it as it is.
MAX_SHIFT = 4096
SHIFTS = IntRange(0, MAX_SHIFT)
DECAY_DISTANCES = 512  # N: the score against distance runs from 0 to N, or to the model's last position if nearer
RING_POINTS = 181  # R: points of the circle a pair walks, drawn as a line (one every 2°)


@dataclass(frozen=True, eq=False)
class HeadTurn:
    """One head's queries and its keys before their turn, and the frequencies that turn them (trace.rotation_for)."""

    tokens: tuple[str, ...]
    queries: np.ndarray  # (T, d) the head's q of every token, before the turn ("Q split")
    keys: np.ndarray  # (T, d) the k it reads (its shared key head's under grouped-query attention), before the turn
    frequencies: np.ndarray  # (d/2,) θ_i, float32: pair i turns by p·θ_i at position p
    scale: float  # what cos and sin are multiplied by: 1 for plain RoPE
    max_positions: int  # the positions the model was trained on (max_position_embeddings)

    @property
    def head_size(self) -> int:
        return self.queries.shape[1]

    def rotation(self, positions: np.ndarray | range) -> Rotation:
        """The turn of these positions (P,), angles (P, d/2)."""
        return Rotation.at_positions(torch.from_numpy(self.frequencies), torch.as_tensor(np.asarray(positions)),
                                     self.scale)


def head_turn(loaded: LoadedModel, trace: Trace) -> HeadTurn:
    """The trace's head (its first text) as the Rotation stage reads it. ValueError for a head that turns nothing:
    a family whose positions are added to the embeddings, the identity, a random head of odd size."""
    settings, shape = trace.settings, loaded.shape
    if not turns_by_position(shape, settings):
        raise ValueError(f"a {shape.family} model's {settings.source} heads are position-free here: nothing turns "
                         "by position (attention.dissect.outline.turns_by_position)")
    head = settings.head
    shared = shared_head(head, trace.num_heads, settings.num_kv_heads(shape))  # the key head it reads
    rotation = rotation_for(loaded, settings, 1)
    return HeadTurn(tokens=trace.tokens[0], queries=np.array(trace["Q split"][0, head]),  # (T, d)
                    keys=np.array(trace["K split"][0, shared]),  # (T, d)
                    frequencies=rotation.frequencies.numpy().astype(np.float32), scale=rotation.scale,
                    max_positions=int(getattr(loaded.model.config, "max_position_embeddings", DECAY_DISTANCES + 1)))


@dataclass(frozen=True, eq=False)
class PairPicture:
    """Pair i of one query's q and one key's k: numbers i and i + d/2, the two axes of the picture."""

    pair: int  # i, from 0 (turns fastest) to d/2 − 1 (slowest)
    numbers: tuple[int, int]  # (i, i + d/2): the pair's two numbers of the head, as rotate_half pairs them
    query: int  # the query's position p (its token)
    key: int  # the key's position p'
    frequency: float  # θ_i: radians the pair turns from one position to the next
    query_before: np.ndarray  # (2,) (q_i, q_{i+d/2}) as projected
    query_after: np.ndarray  # (2,) the same turned by p·θ_i
    key_before: np.ndarray  # (2,)
    key_after: np.ndarray  # (2,) turned by p'·θ_i
    query_circle: np.ndarray  # (T, 2) where the query's pair would stand at each position 0..T−1
    key_circle: np.ndarray  # (T, 2) the key's
    query_ring: np.ndarray  # (R, 2) the whole circle the query's pair walks: radius its length (times the scale)
    key_ring: np.ndarray  # (R, 2)
    pair_score: float  # this pair's share of the raw score: q_after · k_after over its two numbers
    score: float  # the raw score q · k over every pair, turned: what the head's Q·Kᵀ holds at (p, p')


def pair_picture(turn: HeadTurn, query: int, key: int, pair: int) -> PairPicture:
    tokens, size = len(turn.tokens), turn.head_size
    IntRange(0, tokens - 1).require("query", query, f"the text has {tokens} tokens")
    IntRange(0, tokens - 1).require("key", key, f"the text has {tokens} tokens")
    IntRange(0, size // 2 - 1).require("pair", pair, f"a head of {size} numbers has {size // 2} pairs")
    numbers = [pair, pair + size // 2]  # rotate_half's pair: i and i + d/2
    with torch.inference_mode():
        rotation = turn.rotation(range(tokens))
        circles = [rotation.rotate(torch.from_numpy(vector).expand(tokens, -1)).numpy()[:, numbers]  # (T, 2)
                   for vector in (turn.queries[query], turn.keys[key])]
        turned_q = rotation.rotate(torch.from_numpy(turn.queries))[query]  # (d,) the query turned at its own position
        turned_k = rotation.rotate(torch.from_numpy(turn.keys))[key]  # (d,)
    around = np.linspace(0.0, 2 * np.pi, RING_POINTS)  # (R,)
    unit = np.stack([np.cos(around), np.sin(around)], axis=1)  # (R, 2)
    lengths = [float(np.linalg.norm(vector[numbers])) * turn.scale for vector in (turn.queries[query],
                                                                                 turn.keys[key])]
    return PairPicture(
        pair=pair, numbers=(numbers[0], numbers[1]), query=query, key=key, frequency=float(turn.frequencies[pair]),
        query_before=turn.queries[query, numbers], query_after=turned_q.numpy()[numbers],
        key_before=turn.keys[key, numbers], key_after=turned_k.numpy()[numbers],
        query_circle=circles[0], key_circle=circles[1],
        query_ring=unit * lengths[0], key_ring=unit * lengths[1],  # (R, 2) each
        pair_score=float(turned_q[numbers] @ turned_k[numbers]), score=float(turned_q @ turned_k))


@dataclass(frozen=True, eq=False)
class ShiftTest:
    """The head's raw scores q·k for every query and key position, and the same with every position moved by Δ."""

    shift: int  # Δ
    scores: np.ndarray  # (T, T) q turned at p against k turned at p', p and p' = 0..T−1
    moved_scores: np.ndarray  # (T, T) q at p + Δ against k at p' + Δ
    largest_change: float  # max |moved − scores|: float32's rounding of the angles, which grows with (p + Δ)·θ_i
    largest_score: float  # max |scores|, what the change is to be read against
    past_training: bool  # whether p + Δ reaches past the positions the model was trained on (the same arithmetic)


def shift_test(turn: HeadTurn, shift: int) -> ShiftTest:
    """RoPE's promise checked on this head: a score depends on p − p' alone, so moving the whole text along by Δ
    positions changes no score, but for the rounding of float32 angles (computed here, never assumed). Every pair of
    positions, the causal mask's hidden ones too: the promise is the turn's, not the mask's."""
    SHIFTS.require("shift", shift, "how far every position moves")
    tokens = len(turn.tokens)
    with torch.inference_mode():
        queries, keys = torch.from_numpy(turn.queries), torch.from_numpy(turn.keys)  # (T, d) each
        computed = []
        for rotation in (turn.rotation(range(tokens)), turn.rotation(range(shift, shift + tokens))):
            computed.append((rotation.rotate(queries) @ rotation.rotate(keys).T).numpy())  # (T, T)
    scores, moved = computed
    return ShiftTest(shift=shift, scores=scores, moved_scores=moved,
                     largest_change=float(np.abs(moved - scores).max()), largest_score=float(np.abs(scores).max()),
                     past_training=shift + tokens > turn.max_positions)


@dataclass(frozen=True, eq=False)
class Decay:
    """The score against the distance between a query and a key, n = 0..N."""

    distances: np.ndarray  # (N + 1,) n
    scores: np.ndarray  # (N + 1,) the chosen q and k's raw score with the key n positions before the query
    fixed: np.ndarray  # (N + 1,) q = k = (1, …, 1) scored against itself n apart, over its score at n = 0
    distance: int | None  # the chosen query and key's own distance p − p', None when the key comes after the query


def decay(turn: HeadTurn, query: int, key: int) -> Decay:
    """How a score changes with distance alone, for n = 0..N (DECAY_DISTANCES, or the model's last position):

    - scores: the chosen q turned to position n and the chosen k at position 0, as if the key stood n positions
      before the query (the score depends on n alone, so anywhere in the text gives the same, up to rounding);
    - fixed: the simpler curve of Su et al. (2021, §3.4.3)'s "long-term decay", rather than their bound on it: a
      vector of ones, q = k = (1, …, 1), scored against itself n apart. Each pair of it contributes 2·cos(n·θ_i), so
      over its score at n = 0 (d) it is the mean of cos(n·θ_i) over the pairs: 1 at n = 0, then lower as the fast
      pairs stop agreeing, while the slow ones (θ_i·n still small) hold it up. It shows what RoPE does to a vector
      that agrees with itself everywhere; a trained head's own q and k can rise with distance instead.
    """
    tokens = len(turn.tokens)
    IntRange(0, tokens - 1).require("query", query, f"the text has {tokens} tokens")
    IntRange(0, tokens - 1).require("key", key, f"the text has {tokens} tokens")
    most = min(DECAY_DISTANCES, turn.max_positions - 1)
    distances = np.arange(most + 1)  # (N + 1,)
    ones = torch.ones(turn.head_size)  # (d,)
    with torch.inference_mode():
        far, near = turn.rotation(distances), turn.rotation([0])

        def scores(query_vector: torch.Tensor, key_vector: torch.Tensor) -> np.ndarray:  # (N + 1,)
            turned_q = far.rotate(query_vector.expand(most + 1, -1))  # (N + 1, d): the query at position n
            return (turned_q @ near.rotate(key_vector[None])[0]).numpy()  # the key at position 0

        chosen = scores(torch.from_numpy(turn.queries[query]), torch.from_numpy(turn.keys[key]))
        fixed = scores(ones, ones)
    return Decay(distances=distances, scores=chosen, fixed=fixed / fixed[0],
                 distance=query - key if query >= key else None)
