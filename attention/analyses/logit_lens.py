"""The logit lens (nostalgebraist 2020): every layer's residual stream read as if it were the last.

The language-model head turns the last layer's output into a score for every token of the vocabulary. Put each
earlier layer's residual stream through the same head (the decoders': their final norm, then the unembedding;
BERT's: its masked-language-model head's transform and decoder) and the page can show when, layer by layer, the
model's final guess rises to the top. Row ℓ < L is the stream entering layer ℓ (row 0 the embeddings); row L is
the last layer's output before any final norm, so that the head's reading of it is the model's own logits
(tests/core/test_logit_lens.py: GPT2LMHeadModel's, LlamaForCausalLM's and BertForMaskedLM's).

A checkpoint without a head (the bundled all-MiniLM-L6-v2) cannot be read so: logit_lens raises
attention.models.lm_heads.NoLanguageModelHead, whose message says what it lacks and what to load instead; the
rest of the page works without it.

The induction lab's attention-only decoders are read the same way from what their run keeps of them (residual_lens):
their streams on the run's probe sequence and their unembedding, which is their whole head (they have no final norm).

Letters used in shape comments: B batch (1 here), T tokens, P positions read, C hidden size, V vocabulary,
L layers, k tokens kept at each layer and position.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from attention.models.lm_heads import LanguageModel, load_head
from attention.models.loading import LoadedModel
from attention.stages.limits import LENS_TOP_K
from attention.text.encoding import Encoding

TABLE_COLUMNS = ("layer", "position", "token", "probability")  # the CSV's header, one row a kept token
TABLE_TOP_K = 5  # the tokens a table lists at each layer and position
# Positions scored at once: P·V floats of logits (SmolLM2's 49,152 tokens: 64 positions are 13 MB)
CHUNK_FLOATS = 4_000_000


@dataclass(frozen=True, eq=False)
class LogitLens:
    """Each layer's top-k tokens at each position read, and where the model's final guess first tops them."""

    tokens: tuple[str, ...]  # the text's tokens, as the page shows them
    positions: tuple[int, ...]  # the positions read (P): a decoder's every token, BERT's [MASK]
    top_ids: np.ndarray  # (L + 1, P, k) int64, most probable first
    top_tokens: tuple[tuple[tuple[str, ...], ...], ...]  # [layer][position][rank], as the page shows them
    top_probabilities: np.ndarray  # (L + 1, P, k) softmax over the vocabulary
    prediction_probability: np.ndarray  # (L + 1, P): each layer's probability of the final guess
    # (P,) the first layer whose top token is the final guess (L when only the last layer's is)
    first_layer: np.ndarray

    @property
    def prediction_ids(self) -> np.ndarray:
        """(P,) the model's own guess at each position: the last layer's top token."""
        return self.top_ids[-1, :, 0]

    def table(self, top: int = TABLE_TOP_K) -> list[tuple[int, int, str, float]]:
        """Rows of TABLE_COLUMNS: layer, position in the text, token, probability, the `top` most probable first."""
        LENS_TOP_K.narrowed(1, self.top_ids.shape[2]).require("top", top, "the tokens this lens kept")
        return [(layer, position, self.top_tokens[layer][index][rank],
                 float(self.top_probabilities[layer, index, rank]))
                for layer in range(self.top_ids.shape[0]) for index, position in enumerate(self.positions)
                for rank in range(top)]


def logit_lens(model: LanguageModel | LoadedModel, encoding: Encoding, top_k: int = TABLE_TOP_K,
               positions: tuple[int, ...] | None = None) -> LogitLens:
    """The lens of one text (an encoding of batch 1 that keeps every layer's input). model: with its head, or
    loaded alone, whose head is then read from its checkpoint (NoLanguageModelHead when it has none).
    positions: the tokens to read, by default every real token of a decoder and the [MASK] of BERT's."""
    if isinstance(model, LoadedModel):
        model = LanguageModel(model, load_head(model.name, model))  # NoLanguageModelHead: no head to read through
    LENS_TOP_K.require("top_k", top_k, "tokens kept at each layer and position")
    if encoding.input_ids.shape[0] != 1:
        raise ValueError(f"the logit lens reads one text; this encoding holds {encoding.input_ids.shape[0]}")
    ids = encoding.input_ids[0, encoding.attention_mask[0].astype(bool)].tolist()
    if positions is None:
        positions = (model.head.position(ids),) if model.head.objective == "masked" else tuple(range(len(ids)))
    if not positions or any(not 0 <= position < len(ids) for position in positions):
        raise ValueError(f"positions must be from 0 to {len(ids) - 1}; got {positions!r}")
    read = list(positions)
    streams = [stream[0, read] for stream in _residual_streams(model.model, encoding)]  # L + 1 x (P, C)
    tokenizer, family = model.tokenizer, model.family
    return _lens(streams, model.logits, model.model.model.config.vocab_size, tuple(positions), top_k,
                 lambda token_ids: family.readable(tokenizer.tokens(token_ids)), ids)


def residual_lens(streams: np.ndarray | torch.Tensor, unembedding: np.ndarray | torch.Tensor, ids: list[int],
                  top_k: int = TABLE_TOP_K) -> LogitLens:
    """The lens of a model whose head is one matrix, with no norm before it (the induction lab's attention-only
    decoders, attention.labs.induction.TrainedStreams): streams (L + 1, T, C), the residual stream entering each
    layer and after the last, on the tokens ids (T,), read at every position through unembedding (C, V). The
    tokens are numbers: a token is written as its id."""
    layers = torch.as_tensor(streams, dtype=torch.float32)  # (L + 1, T, C)
    head = torch.as_tensor(unembedding, dtype=torch.float32)  # (C, V)
    if layers.dim() != 3 or head.dim() != 2 or layers.shape[2] != head.shape[0] or layers.shape[1] != len(ids):
        raise ValueError(f"streams must be (L + 1, T, C) with T = {len(ids)} and unembedding (C, V) with the same C; "
                         f"got {tuple(layers.shape)} and {tuple(head.shape)}")
    LENS_TOP_K.narrowed(1, head.shape[1]).require("top_k", top_k, "tokens kept, at most the vocabulary")
    return _lens(list(layers), lambda hidden: hidden @ head, head.shape[1], tuple(range(len(ids))), top_k,
                 lambda token_ids: tuple(str(token) for token in token_ids), ids)


def _lens(streams: list[torch.Tensor], logits: Callable[[torch.Tensor], torch.Tensor], vocab_size: int,
          positions: tuple[int, ...], top_k: int, names: Callable[[list[int]], tuple[str, ...]],
          ids: list[int]) -> LogitLens:
    """streams L + 1 x (P, C) at the positions read, through logits ((p, C) -> (p, V)); names writes token ids."""
    with torch.inference_mode():
        guess = _read(logits, vocab_size, streams[-1], 1)[0][:, 0]  # (P,) the model's own guess
        tops, probabilities, prediction = zip(*(_read(logits, vocab_size, stream, top_k, guess)
                                                for stream in streams), strict=True)  # L + 1 x (P, k), (P, k), (P,)
    top_ids = torch.stack(tops).numpy()  # (L + 1, P, k)
    is_top = top_ids[:, :, 0] == top_ids[-1, :, 0]  # (L + 1, P)
    return LogitLens(
        tokens=names(ids),
        positions=positions,
        top_ids=top_ids,
        top_tokens=tuple(tuple(names(row) for row in layer.tolist()) for layer in top_ids),
        top_probabilities=torch.stack(probabilities).numpy(),  # (L + 1, P, k)
        prediction_probability=torch.stack(prediction).numpy(),  # (L + 1, P)
        first_layer=is_top.argmax(axis=0),  # (P,): the first True (the last row is always True)
    )


def _residual_streams(loaded: LoadedModel, encoding: Encoding) -> list[torch.Tensor]:
    """L + 1 x (1, T, C): each layer's input, then the last layer's output before any final norm (a decoder's
    encoding keeps it after its final norm: the last layer is run again on its input)."""
    layers = loaded.shape.num_layers
    streams = [torch.from_numpy(encoding.layer_input(layer)) for layer in range(layers)]  # L x (1, T, C)
    with torch.inference_mode():
        streams.append(loaded.family.run_layer(loaded.model, layers - 1, streams[-1],
                                               torch.from_numpy(encoding.attention_mask)))  # (1, T, C)
    return streams


def _read(logits: Callable[[torch.Tensor], torch.Tensor], vocab_size: int, hidden: torch.Tensor, top_k: int,
          guess: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(P, C) streams through the head, a few positions at a time: the top_k ids (P, k) and probabilities (P, k),
    and the probability of guess (P,) ids at each position (None without a guess)."""
    step = max(1, CHUNK_FLOATS // vocab_size)
    ids, values, guessed = [], [], []
    for start in range(0, hidden.shape[0], step):
        chances = logits(hidden[start:start + step]).softmax(-1)  # (p, V)
        top = chances.topk(top_k, dim=-1)  # (p, k) values and indices
        ids.append(top.indices)
        values.append(top.values)
        if guess is not None:
            guessed.append(chances.gather(-1, guess[start:start + step, None])[:, 0])  # (p,)
    return torch.cat(ids), torch.cat(values), torch.cat(guessed) if guess is not None else None
