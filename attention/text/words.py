"""Whole words instead of tokens: a word's pieces merged into one row and one column of the weights.

A learner reads words, not WordPieces ("play ##ing") or byte-level pieces ("␣m" + "at"). Following Clark et al.
(2019, "What does BERT look at?", their get_word_word_attention), attention TO a word is the sum of the attention
to its pieces, and attention FROM a word the mean of its pieces' rows: a row that summed to 1 still does.

Which tokens make a word is the tokenizer's own answer where it gives one (Encoding.word_ids, recorded at encoding
time: its pre-tokenizer's words, so "let's" is three words for BERT, whose pre-tokenizer splits punctuation off);
else it is read off the tokens, as the lesson reads them (attention/analyses/lesson.py): a WordPiece "##…" goes on from
the token before, and so does a byte-level token that begins with a letter or digit right after one. A special token
([CLS], [SEP], padding) is always a word of its own, and no word crosses from sentence A into sentence B.

The page merges first and filters after: a sentence-pair block or hidden sink tokens (attention/text/segments.py) are
cut from the words' weights (Words.token_type_ids, Words.sinks), and the rows renormalised over the words kept.

Shapes: T tokens, W words (W ≤ T); spans are (start, stop) token positions, in order, covering every token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention.models.readable import MARKS
from attention.text.encoding import Encoding

Spans = tuple[tuple[int, int], ...]  # each word's tokens, tokens[start:stop], in order, covering every token
WORDPIECE_MARK = "##"  # how BERT's tokenizer writes a piece that goes on from the token before
BLANKS = tuple(MARKS.values())  # ␣ ↵ ⇥: a byte-level token that begins with one begins a new word


@dataclass(frozen=True)
class Words:
    """One text's words: which tokens each is made of, how it reads, its sentence, and whether it is a sink."""

    spans: Spans
    labels: tuple[str, ...]  # (W,) each word as it reads: "playing", "␣mat", "[CLS]"
    token_type_ids: tuple[int, ...]  # (W,) 0 for sentence A, 1 for sentence B (that of the word's first token)
    sinks: tuple[bool, ...]  # (W,) a word any of whose tokens is a sink (Encoding.sinks)

    def __len__(self) -> int:
        return len(self.spans)


def text_words(encoding: Encoding, byte_level: bool, whole: bool = True) -> Words:
    """The words of an encoding's first text; whole=False: every token a word of its own (nothing merged)."""
    tokens = encoding.tokens[0]
    special = encoding.special_tokens_mask[0]  # (T,)
    segments = encoding.token_type_ids[0]  # (T,)
    if not whole:
        spans = tuple((position, position + 1) for position in range(len(tokens)))
    elif encoding.word_ids is not None:
        spans = spans_from_word_ids(encoding.word_ids[0], segments)
    else:
        spans = spans_from_tokens(tokens, special, byte_level, segments)
    sinks = encoding.sinks[0]  # (T,)
    return Words(
        spans=spans,
        labels=tuple(word_label(tokens[start:stop], byte_level) for start, stop in spans),
        token_type_ids=tuple(int(segments[start]) for start, _ in spans),
        sinks=tuple(bool(sinks[start:stop].any()) for start, stop in spans),
    )


def spans_from_word_ids(word_ids: Sequence[int], segments: Sequence[int] | None = None) -> Spans:
    """Spans from a tokenizer's word ids (T,), −1 (or None) for a token of no word (a special token, padding): a
    word goes on while the id and the sentence (segments, (T,)) stay the same; a token of no word is its own."""
    ids = [-1 if word is None else int(word) for word in word_ids]
    segments = [0] * len(ids) if segments is None else [int(segment) for segment in segments]
    return _spans([position > 0 and ids[position] >= 0 and ids[position] == ids[position - 1]
                   and segments[position] == segments[position - 1] for position in range(len(ids))])


def spans_from_tokens(tokens: Sequence[str], special: Sequence[bool], byte_level: bool,
                      segments: Sequence[int] | None = None) -> Spans:
    """Spans read off the tokens themselves, for a tokenizer that gives no word ids: a WordPiece "##…" goes on
    from the token before; a byte-level token (as attention/models/readable.py shows it) goes on from the token before
    when both meet on a letter or digit ("␣m" + "at"). Special tokens, and a change of sentence, break a word."""
    segments = [0] * len(tokens) if segments is None else [int(segment) for segment in segments]

    def goes_on(position: int) -> bool:
        if position == 0 or special[position] or special[position - 1] or segments[position] != segments[position - 1]:
            return False
        token, before = tokens[position], tokens[position - 1]
        if byte_level:
            return not token.startswith(BLANKS) and token[:1].isalnum() and before[-1:].isalnum()
        return token.startswith(WORDPIECE_MARK) and len(token) > len(WORDPIECE_MARK)

    return _spans([goes_on(position) for position in range(len(tokens))])


def word_label(pieces: Sequence[str], byte_level: bool) -> str:
    """A word's pieces as one word: "play" "##ing" is "playing", "␣m" "at" is "␣mat" (byte-level pieces join as
    they are)."""
    if byte_level:
        return "".join(pieces)
    return pieces[0] + "".join(piece.removeprefix(WORDPIECE_MARK) for piece in pieces[1:])


def merge_weights(weights: np.ndarray, spans: Spans) -> np.ndarray:
    """(..., T, T) -> (..., W, W): attention to a word summed over its pieces (columns), from a word averaged over
    them (rows), as Clark et al.'s get_word_word_attention does. Each token in one span: the weights themselves."""
    starts, sizes = _starts_and_sizes(spans, weights.shape[-1])
    if len(starts) == weights.shape[-1]:
        return weights
    to_words = np.add.reduceat(weights, starts, axis=-1)  # (..., T, W): summed over each word's key pieces
    sizes = sizes.astype(to_words.dtype)[:, None]  # (W, 1), float32 weights stay float32
    return np.add.reduceat(to_words, starts, axis=-2) / sizes  # (..., W, W): averaged over its query pieces


def _spans(continues: list[bool]) -> Spans:
    """Spans from whether each token goes on from the one before."""
    starts = [position for position, goes_on in enumerate(continues) if not goes_on]
    return tuple(zip(starts, [*starts[1:], len(continues)], strict=True))


def _starts_and_sizes(spans: Spans, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """(W,) each word's first token and its number of tokens; ValueError unless the spans cover 0 … tokens − 1
    in order, each at least one token."""
    starts = np.asarray([start for start, _ in spans], dtype=np.intp)  # (W,)
    stops = np.asarray([stop for _, stop in spans], dtype=np.intp)  # (W,)
    if (not len(spans) or starts[0] != 0 or stops[-1] != tokens or (stops <= starts).any()
            or (starts[1:] != stops[:-1]).any()):
        raise ValueError(f"word spans must cover the {tokens} tokens in order, each word at least one token; "
                         f"got {list(spans)[:8]}{'…' if len(spans) > 8 else ''}")
    return starts, stops - starts
