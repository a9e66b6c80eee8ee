"""The guided lesson's claims, computed: every sentence the lesson says about its numbers comes from here.

Matrices are one text's (batch row 0): scores and weights (T, T), tokens and special-token
flags (T,); No Streamlit, so each claim can be checked in a notebook or a test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.models.readable import SPACE
from attention.stages.dot_product import MASKED_SCORE
from attention.text.encoding import Encoding

# The notebooks' homonym example: "flies" is a verb in one sentence and a noun in the other.
NOTEBOOK_PAIR = ("time flies like an arrow", "fruit flies like a banana")
# Words too common to show context at work: the default token to compare is a shared word not in here.
STOP_WORDS = frozenset((
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "as", "of", "at", "by", "for", "from", "in", "into",
    "on", "onto", "to", "with", "without", "about", "over", "under", "up", "down", "out", "off", "again", "is",
    "am", "are", "was", "were", "be", "been", "being", "do", "does", "did", "have", "has", "had", "having", "i",
    "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they", "them", "their",
    "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "when", "where",
    "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not",
    "only", "own", "same", "than", "too", "very", "can", "will", "just", "should", "would", "could", "may", "might",
    "must", "shall", "s", "t", "don",
))
# What a row's largest weight can land on, checked in this order (the first that fits wins).
STRONGEST_KEY_KINDS = ("sink", "self", "previous", "next", "other")


@dataclass(frozen=True)
class SharedWord:
    """One whole-word token found in two texts, and where it sits in each."""

    word: str
    first_index: int
    second_index: int


def whole_word_positions(encoding: Encoding) -> list[int]:
    """Positions of tokens that are whole words: not special, not a piece of a word, not followed by one.

    A piece is a WordPiece "##…" (BERT's) or, in a byte-level text (GPT-2's, whose words start with a space,
    read "␣"), a token that goes on from the letter or digit before it with no space between: "s" of "␣rain"+"s".
    """
    tokens = encoding.tokens[0]
    special = encoding.special_tokens_mask[0]
    byte_level = any(token.startswith(SPACE) for token in tokens)

    def piece(position: int) -> bool:
        token = tokens[position]
        return token.startswith("##") or (byte_level and position > 0 and token[:1].isalnum()
                                          and tokens[position - 1][-1:].isalnum())

    positions = []
    for position, token in enumerate(tokens):
        continued = position + 1 < len(tokens) and piece(position + 1)
        if not special[position] and not piece(position) and not continued and any(ch.isalnum() for ch in token):
            positions.append(position)
    return positions


def word_text(word: str) -> str:
    """The text that a whole-word token is read from on its own: "␣bank" (a byte-level token) is " bank"."""
    return word.replace(SPACE, " ")


def shared_word(first: Encoding, second: Encoding) -> SharedWord | None:
    """The first whole word of the first text that the second text has too (its first place there)."""
    words = shared_words(first, second)
    return words[0] if words else None


def shared_words(first: Encoding, second: Encoding) -> list[SharedWord]:
    """Every whole word of the first text that the second text has too, once each, in the first text's order
    (each at its first place in either text)."""
    second_positions: dict[str, int] = {}
    for position in whole_word_positions(second):
        second_positions.setdefault(second.tokens[0][position], position)
    found: dict[str, SharedWord] = {}
    for position in whole_word_positions(first):
        word = first.tokens[0][position]
        if word in second_positions and word not in found:
            found[word] = SharedWord(word, position, second_positions[word])
    return list(found.values())


def telling_word(words: list[SharedWord]) -> SharedWord | None:
    """The word to compare unless the reader picks another: the first that is not a stop word, else the first."""
    return next((w for w in words if word_text(w.word).strip().lower() not in STOP_WORDS), words[0] if words else None)


def diagonal_wins(scores: np.ndarray) -> int:
    """How many rows of a (T, T) score matrix have their largest value on the diagonal."""
    return int((scores.argmax(axis=-1) == np.arange(scores.shape[0])).sum())


def twin_wins(scores: np.ndarray, tokens: tuple[str, ...]) -> tuple[int, int]:
    """(rows whose token occurs again elsewhere, those of them whose largest off-diagonal score is on a copy)."""
    same_token = np.equal.outer(np.asarray(tokens, dtype=object), np.asarray(tokens, dtype=object))  # (T, T)
    np.fill_diagonal(same_token, False)
    rows = np.flatnonzero(same_token.any(axis=-1))
    off_diagonal = scores.astype(np.float64)  # (T, T), a copy
    np.fill_diagonal(off_diagonal, -np.inf)
    best = off_diagonal.argmax(axis=-1)  # (T,)
    return len(rows), int(sum(same_token[row, best[row]] for row in rows))


def masked_cells(masked: np.ndarray) -> np.ndarray:
    """(..., T, T) masked scores -> bool: where the mask set the score to −∞ (MASKED_SCORE), so its weight is 0."""
    return masked <= MASKED_SCORE


def row_sum_error(weights: np.ndarray) -> float:
    """Largest |row sum − 1| of a (T, T) weights matrix."""
    return float(np.abs(weights.sum(axis=-1, dtype=np.float64) - 1.0).max())


def strongest_keys(weights: np.ndarray, sinks: np.ndarray) -> dict[str, int]:
    """How many rows put their largest weight on a sink token (Encoding.sinks: [CLS] and [SEP], or GPT-2's first
    token), on themselves, the previous or next token."""
    counts = dict.fromkeys(STRONGEST_KEY_KINDS, 0)
    for row, key in enumerate(weights.argmax(axis=-1)):
        kind = ("sink" if sinks[key] else "self" if key == row else "previous" if key == row - 1
                else "next" if key == row + 1 else "other")
        counts[kind] += 1
    return counts


def head_block(concat: np.ndarray, head: int, head_size: int) -> np.ndarray:
    """(..., T, nh·d) -> (..., T, d): the columns of the concatenation that hold one head's context."""
    return concat[..., head * head_size:(head + 1) * head_size]


def falling_layers(similarities: np.ndarray) -> int:
    """In how many layers the similarity went down from the one before."""
    return int((np.diff(similarities) < 0).sum())


@dataclass(frozen=True)
class SinkShare:
    """How much of some heads' attention one kind of sink token takes, as weight and as what it moves."""

    token: str  # as the text reads it: "[CLS]", "[SEP]", or GPT-2's first token
    weight: float  # its share of the heads' weights, 0 to 1
    moved: float  # its share of what the heads move, Σ α_ij·‖f(x_j)‖ over its keys against over all keys


def sink_shares(weights: np.ndarray, amounts: np.ndarray, tokens: tuple[str, ...],
                sinks: np.ndarray) -> list[SinkShare]:
    """(h, T, T) weights and amounts α·‖f(x)‖ of some heads, the (T,) tokens and (T,) sink flags -> one SinkShare
    per distinct sink token, in the order they first occur (a pair's two [SEP] count as one)."""
    positions: dict[str, list[int]] = {}
    for position in np.flatnonzero(sinks):
        positions.setdefault(tokens[position], []).append(int(position))
    weight_total, moved_total = float(weights.sum(dtype=np.float64)), float(amounts.sum(dtype=np.float64))
    return [SinkShare(token, float(weights[..., keys].sum(dtype=np.float64)) / weight_total,
                      float(amounts[..., keys].sum(dtype=np.float64)) / moved_total if moved_total else 0.0)
            for token, keys in positions.items()]


def diagonal_spread(matrix: np.ndarray) -> float:
    """Largest difference between two cells on one diagonal (the same p − p') of a (T, T) matrix: under RoPE, the
    scores of one query and one key placed at every pair of positions differ by float32 rounding alone."""
    size = matrix.shape[0]
    return max((float(np.ptp(np.diagonal(matrix, offset))) for offset in range(1 - size, size)), default=0.0)


def by_distance(matrix: np.ndarray) -> np.ndarray:
    """(T, T) scores that depend on p − p' alone -> (T,): the score at distance 0, 1, …, T − 1 (a query and the
    keys before it, read off the first column of each diagonal)."""
    return np.array([matrix[distance, 0] for distance in range(matrix.shape[0])])  # (T,)


def shared_by(mapping: np.ndarray, num_kv_heads: int) -> np.ndarray:
    """(nh,) the shared key/value head of each query head -> (nh, n_kv) 1 where a query head reads that head."""
    return (mapping[:, None] == np.arange(num_kv_heads)[None, :]).astype(np.float32)  # (nh, n_kv)
