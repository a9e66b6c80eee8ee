"""Greedy generation with a key/value cache, step by step, and StreamingLLM's what-if (Xiao et al. 2023).

The text is read at once (the prefill), which fills every layer's cache and guesses the first new token; then
each step feeds the token just guessed: its one query row (1 × d per head) reads every cached key, and K and V
gain one row per layer (attention/experiments/kv_cache.py). tests/core/test_generation.py holds the tokens equal
to transformers' generate(do_sample=False) and each step's row equal to the last row of the whole text recomputed.

StreamingLLM keeps a cache of fixed size: the first `sinks` tokens (where a trained decoder parks the attention it
spends nowhere else) and a window of the last `window`, evicting the rest; positions are re-assigned within the
cache (0 to S − 1) for RoPE, as the paper does (kv_cache.py says how). With a window, the text too is read a token
at a time, so that every token, of the prompt too, sees only the cache. streaming_what_if runs it twice on the
same budget: with the first tokens kept, and with them evicted (sinks 0, the window longer by as many).

Letters used in shape comments: T tokens, S cached tokens, nh query heads, n_kv key/value heads, d head size,
L layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.experiments.kv_cache import KeyValueCache, StepReading, forward_step
from attention.models.lm_heads import LanguageModel
from attention.stages.limits import MAX_NEW_TOKENS, STREAMING_SINKS, STREAMING_WINDOW
from attention.text.encoding import encode


@dataclass(frozen=True)
class GenerationSettings:
    # A handful of tokens shows the cache growing row by row; each costs one step through every layer.
    max_new_tokens: int = 8
    # Stop once the model writes its end-of-text token, as transformers' generate does (the token is kept).
    stop_at_end: bool = True

    def validate(self) -> GenerationSettings:
        MAX_NEW_TOKENS.require("max_new_tokens", self.max_new_tokens, "one forward step each")
        return self


@dataclass(frozen=True)
class StreamingSettings:
    # StreamingLLM's paper keeps 4 initial tokens: one is enough for most models, 4 for all it tried.
    sinks: int = 4
    # The recent tokens kept beside them; the paper's caches hold hundreds, the page's texts tens.
    window: int = 8

    def validate(self) -> StreamingSettings:
        STREAMING_SINKS.require("sinks", self.sinks, "the first tokens kept; 0 evicts the first token too")
        STREAMING_WINDOW.require("window", self.window, "the last tokens kept")
        return self

    def keep(self, size: int) -> list[int]:
        """The entries of a cache of `size` that stay: the first sinks and the last window, in order."""
        if size <= self.sinks + self.window:
            return list(range(size))
        return [*range(self.sinks), *range(size - self.window, size)]


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One step: the token fed in, what its query row read in the cache, and the token guessed next."""

    position: int  # the fed token's position in the text (the prefill's: its last token)
    cache_positions: tuple[int, ...]  # (S,) the text positions of the cache's entries, after any eviction
    queries: np.ndarray  # (L, nh, d) the fed token's query row at each layer (turned, for RoPE)
    weights: np.ndarray  # (L, nh, S) its attention over the cache, a row over cache_positions
    cache_bytes: int  # 2 · L · n_kv · S · d · 4 (float32) after the step
    next_id: int  # the greedy guess: the head's top token
    next_probability: float


@dataclass(frozen=True, eq=False)
class Generation:
    prompt_ids: tuple[int, ...]
    new_ids: tuple[int, ...]
    tokens: tuple[str, ...]  # prompt and new tokens, as the page shows them
    steps: tuple[DecodeStep, ...]  # the prefill, then one step a fed token
    keys: np.ndarray  # (L, n_kv, S, d) the last cache's keys, as cached: before the turn (RoPE)
    values: np.ndarray  # (L, n_kv, S, d)
    streaming: StreamingSettings | None


@dataclass(frozen=True, eq=False)
class StreamingWhatIf:
    kept: Generation  # the first `sinks` tokens kept
    evicted: Generation  # the same cache size, the first tokens evicted (sinks 0, window + sinks)
    sink_weight: np.ndarray  # (steps, L, nh): the weight kept's rows put on the first tokens
    diverges_at: int | None  # the first new token the two guess differently, None when they agree


def generate(model: LanguageModel, text: str, settings: GenerationSettings = GenerationSettings(),
             streaming: StreamingSettings | None = None) -> Generation:
    """Greedy decoding of `text`'s continuation by a decoder with its head, recording every step."""
    settings.validate()
    if streaming is not None:
        streaming.validate()
    family = model.family
    if family.own_mask != "causal":
        raise ValueError(f"{family.label} reads every token both ways: only a decoder (GPT-2, Llama) generates")
    prompt = encode(model.model, text, layers=()).input_ids[0].tolist()  # the tokens alone, no forward pass
    room = model.max_tokens - len(prompt)
    if room < 1:
        raise ValueError(f"the text fills the model's {model.max_tokens} positions: no room for a new token")
    MAX_NEW_TOKENS.narrowed(1, room).require("max_new_tokens", settings.max_new_tokens,
                                             f"the text's {len(prompt)} tokens leave {room} positions")
    ends = _end_ids(model)
    rotation = family.rotation(model.model.model, len(prompt) + settings.max_new_tokens)  # None: positions added
    cache, ids, steps = KeyValueCache(), torch.tensor([prompt]), []  # ids (1, T)
    with torch.inference_mode():
        if streaming is None:
            reading = forward_step(model, cache, ids, len(prompt), rotation=rotation)
        elif rotation is None:  # positions added to the input: the token-at-a-time reading below, in one pass
            reading = forward_step(model, cache, ids, len(prompt), band=(streaming.sinks, streaming.window))
        else:
            for tokens in range(1, len(prompt) + 1):  # the text too a token at a time, every one within the cache
                reading = forward_step(model, cache, ids[:, :tokens], 1, streaming.keep(len(cache) + 1),
                                       reassign=True, rotation=rotation)
        steps.append(_step(reading, cache, len(prompt) - 1))
        while len(steps) < settings.max_new_tokens and not (settings.stop_at_end and steps[-1].next_id in ends):
            ids = torch.cat((ids, torch.tensor([[steps[-1].next_id]])), dim=1)  # (1, T + 1)
            keep = None if streaming is None else streaming.keep(len(cache) + 1)
            reading = forward_step(model, cache, ids, 1, keep, reassign=streaming is not None, rotation=rotation)
            steps.append(_step(reading, cache, ids.shape[1] - 1))
    new_ids = tuple(step.next_id for step in steps)
    every_id = [*prompt, *new_ids]
    return Generation(prompt_ids=tuple(prompt), new_ids=new_ids,
                      tokens=family.readable(model.tokenizer.tokens(every_id)), steps=tuple(steps),
                      keys=torch.cat(cache.keys).numpy(), values=torch.cat(cache.values).numpy(),  # (L, n_kv, S, d)
                      streaming=streaming)


def streaming_what_if(model: LanguageModel, text: str, streaming: StreamingSettings,
                      settings: GenerationSettings = GenerationSettings()) -> StreamingWhatIf:
    """The same text generated under StreamingLLM's cache with its first tokens kept, and with the same number of
    entries but the first tokens evicted; what the kept ones' rows give them, and where the guesses part."""
    streaming.validate()
    kept = generate(model, text, settings, streaming)
    evicted = generate(model, text, settings, StreamingSettings(sinks=0, window=streaming.window + streaming.sinks))
    first = range(streaming.sinks)
    sink_weight = np.stack([step.weights[:, :, [step.cache_positions.index(p) for p in first
                                                if p in step.cache_positions]].sum(-1)
                            for step in kept.steps])  # (steps, L, nh)
    parted = [index for index, (a, b) in enumerate(zip(kept.new_ids, evicted.new_ids, strict=False)) if a != b]
    return StreamingWhatIf(kept=kept, evicted=evicted, sink_weight=sink_weight,
                           diverges_at=parted[0] if parted else None)


def _step(reading: StepReading, cache: KeyValueCache, position: int) -> DecodeStep:
    chances = reading.logits.softmax(-1)  # (V,)
    best = int(chances.argmax())
    return DecodeStep(position=position, cache_positions=tuple(cache.positions), queries=reading.queries,
                      weights=reading.weights, cache_bytes=cache.size_bytes(), next_id=best,
                      next_probability=float(chances[best]))


def _end_ids(model: LanguageModel) -> set[int]:
    """The ids that end a text: the config's eos_token_id (one id or several)."""
    ends = model.model.model.config.eos_token_id
    return set() if ends is None else {ends} if isinstance(ends, int) else set(ends)
