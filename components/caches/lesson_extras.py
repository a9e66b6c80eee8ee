"""The guided lesson's numbers that no other view keeps: one query and one key of a rotary head placed at every pair
of positions, the model's guess of the token after the text, and an encoder's embedding of the text. Keys are plain
values (model name, texts, a head's two vectors); values numpy or the core's frozen records of numpy, each computed
holding a heavy-work slot.

Letters used in shape comments: B texts, T tokens, C hidden size, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention.analyses.logit_lens import LogitLens, logit_lens
from attention.analyses.rotary_distance import placed_scores as placed
from attention.experiments.embedding_switch import sentence_embeddings
from attention.text.encoding import encode
from components.caches.models import language_model, model
from components.caches.work import heavy_work

PLACED_ENTRIES = 64  # (T, T) floats: 1 MB at 512 tokens; a class's heads and texts
NEXT_TOKEN_ENTRIES = 64  # a few tokens and (L + 1) floats: a class's texts
EMBEDDING_ENTRIES = 64  # (B, C) floats: 3 kB on the bundled model
NEXT_TOKEN_TOP_K = 5  # the guesses the lesson lists


def placed_scores(name: str, query: np.ndarray, key: np.ndarray, tokens: int) -> np.ndarray:
    """(d,) a head's query and (d,) a key before their turn -> (T, T): the query turned to position p against the key
    turned to p', by the model's own rotation of `tokens` positions."""
    with heavy_work():
        return _placed_scores(name, query, key, tokens)


@st.cache_data(show_spinner=False, max_entries=PLACED_ENTRIES)
def _placed_scores(name: str, query: np.ndarray, key: np.ndarray, tokens: int) -> np.ndarray:
    loaded = model(name)
    return placed(query, key, loaded.family.rotation(loaded.model, tokens))  # (T, T)


@dataclass(frozen=True, eq=False)
class NextToken:
    """The model's guesses of the token after a text, and what its head is made of."""

    lens: LogitLens  # at the text's last token alone: top guesses at every layer read, the last row the model's own
    vocabulary: int  # V, the tokens the head scores
    tied: bool  # whether W_U is the token embeddings (tied) rather than a matrix of its own


def next_token(name: str, text: str, text_b: str) -> tuple[NextToken | None, str | None]:
    """The logit lens at the text's last token alone: the model's top guesses of the next token, and its final
    guess's probability at every layer. None and why for a model without a language-model head."""
    with heavy_work():
        head, why = language_model(name)
        if head is None:
            return None, why
        return _next_token(name, text, text_b), None


@st.cache_data(show_spinner=False, max_entries=NEXT_TOKEN_ENTRIES)
def _next_token(name: str, text: str, text_b: str) -> NextToken:
    head, _ = language_model(name)
    encoding = encode(head.model, text, text_b or None)  # every layer's input kept
    last = int(encoding.attention_mask[0].sum()) - 1  # the last real token's output guesses the one after it
    return NextToken(lens=logit_lens(head, encoding, NEXT_TOKEN_TOP_K, positions=(last,)),
                     vocabulary=head.model.model.config.vocab_size,
                     tied=getattr(head.head, "decoder_weight", None) is None)


def text_embeddings(name: str, texts: tuple[str, ...]) -> np.ndarray:
    """(B, C) each text's embedding as a sentence-embedding model gives it: its last layer's token vectors, mean
    pooled, then of length 1."""
    with heavy_work():
        return _text_embeddings(name, texts)


@st.cache_data(show_spinner=False, max_entries=EMBEDDING_ENTRIES)
def _text_embeddings(name: str, texts: tuple[str, ...]) -> np.ndarray:
    return sentence_embeddings(model(name), texts)  # (B, C)
