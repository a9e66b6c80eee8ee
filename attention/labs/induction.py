"""Watch an induction head form: two tiny attention-only decoders, one layer and two, trained side by side.

The data are random tokens repeated with a random period (4 to 12 by default): 7 3 9 7 3 9 7 3 … Once a
period has gone by, every next token is known, for a model that can find where the current token occurred
before and copy what followed it. That takes two heads in two layers (Elhage et al. 2021; Olsson et al. 2022):
a previous-token head in the first writes "the token before me was A" into each position, and an induction
head in the second matches the current token A against it, looks at the position after A's last occurrence
and copies its token. One layer cannot compose two heads, and its loss on the repeated part stays high.

The period varies from sequence to sequence: with one fixed period p, a single layer solves the task by
position alone (look p − 1 tokens back). Measured on the defaults with every period 12: the one-layer model's
loss on the repeated part fell to 0.00 and its best head scored 0.85 as an induction head.

Both models train on the same batches, step by step, on the loss of the targets that can be known: those of
the repeated part. A period's first tokens are random, their loss stays log V whatever a model does, and their
gradient only adds noise: with it the first induction head formed after 500 steps or more (or not within
1,000), without it at step 260 to 280, on four seeds (in batches of 64). Every `measure_every` steps both are
measured: their loss on the repeated part of held-out sequences, and every head's scores (head_scores.py) on a
probe of n random tokens repeated once. Every `keep_every` steps the attention of every head on one probe
sequence is kept, for a reader to scrub through training. A run keeps none of the models' weights; of each model
at its last step it keeps what the logit lens reads (TrainedStreams): the residual stream on that probe sequence
entering every layer and after the last, and the unembedding, 26 kB for the two-layer model at the defaults.

Letters used in shape comments: B batch, T tokens, C width (the residual stream), nh heads, d head size,
V vocabulary, L layers, M measurements, K kept checkpoints, P the probe's tokens (2n).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attention.analyses import head_scores
from attention.labs.induction_config import InductionConfig
from attention.labs.threads import one_thread
from attention.stages.dot_product import AttentionStages, attend, merge_heads, split_heads
from attention.stages.limits import SEED
from attention.stages.masks import additive

LAYER_COUNTS = (1, 2)  # the two models, trained side by side
# Each model's weights, the held-out sequences and the probes come from generators of their own, seeded this far
# from the run's seed (the training batches from the seed itself): changing one never changes the others.
SEED_OFFSETS = {1: 1_000_003, 2: 2_000_003, "held_out": 3_000_017, "probe": 4_000_037}
EMBEDDING_STD = 0.1  # embeddings start small beside what attention adds, as GPT-2's do (0.02 at its width)


class AttentionOnlyDecoder(nn.Module):
    """Token and position embeddings, `layers` layers of causal multi-head attention each added to the residual
    stream, and an unembedding: no MLP, no LayerNorm. Attention is the page's own (dot_product.attend) under the
    causal mask (masks.additive).

    Parameters are drawn from the generator given, never the global one, so that two sessions training at once
    neither disturb nor depend on each other.
    """

    def __init__(self, config: InductionConfig, layers: int, generator: torch.Generator):
        super().__init__()
        vocab, tokens, width, inner = config.vocab_size, config.tokens, config.width, config.heads * config.head_size
        self.heads, self.head_size = config.heads, config.head_size
        self.token_embedding = _normal((vocab, width), EMBEDDING_STD, generator)  # (V, C)
        self.position_embedding = _normal((tokens, width), EMBEDDING_STD, generator)  # (T, C)
        # Per layer W_Q, W_K, W_V (C, nh·d) and W_O (nh·d, C), drawn as nn.Linear's default scale would.
        self.query = nn.ParameterList(_normal((width, inner), width**-0.5, generator) for _ in range(layers))
        self.key = nn.ParameterList(_normal((width, inner), width**-0.5, generator) for _ in range(layers))
        self.value = nn.ParameterList(_normal((width, inner), width**-0.5, generator) for _ in range(layers))
        self.output = nn.ParameterList(_normal((inner, width), inner**-0.5, generator) for _ in range(layers))
        self.unembedding = _normal((width, vocab), width**-0.5, generator)  # (C, V)
        ones = torch.ones(1, tokens)  # (1, T): every position a token, no padding
        self.register_buffer("mask", additive("causal", ones)[:, None], persistent=False)  # (1, 1, T, T)

    @property
    def num_layers(self) -> int:
        return len(self.query)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, tuple[AttentionStages, ...]]:
        """tokens (B, T') with T' ≤ T -> next-token logits (B, T', V) and every layer's attention stages (weights
        (B, nh, T', T'))."""
        streams, stages = self.residual_streams(tokens)
        return streams[-1] @ self.unembedding, stages  # (B, T', V)

    def residual_streams(self, tokens: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], tuple[AttentionStages, ...]]:
        """tokens (B, T') -> the residual stream entering each layer and after the last, L + 1 x (B, T', C), and
        every layer's attention stages. No final norm: the last stream times the unembedding is the logits."""
        length = tokens.shape[1]
        stream = self.token_embedding[tokens] + self.position_embedding[:length]  # (B, T', C)
        mask = self.mask[..., :length, :length]  # (1, 1, T', T'): key j > query i at MASKED_SCORE
        streams, stages = [stream], []
        for w_q, w_k, w_v, w_o in zip(self.query, self.key, self.value, self.output, strict=True):
            query = split_heads(stream @ w_q, self.heads)  # (B, nh, T', d)
            key = split_heads(stream @ w_k, self.heads)  # (B, nh, T', d)
            value = split_heads(stream @ w_v, self.heads)  # (B, nh, T', d)
            attention = attend(query, key, value, mask, math.sqrt(self.head_size))  # weights (B, nh, T', T')
            stream = stream + merge_heads(attention.context) @ w_o  # (B, T', nh·d) -> (B, T', C)
            streams.append(stream)
            stages.append(attention)
        return tuple(streams), tuple(stages)


def periodic_sequences(config: InductionConfig, count: int, generator: torch.Generator
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """(count, T) sequences, each of random tokens repeated with its own period, and the periods (count,)."""
    periods = torch.randint(config.period_low, config.period_high + 1, (count,), generator=generator)  # (B,)
    fresh = torch.randint(0, config.vocab_size, (count, config.tokens), generator=generator)  # (B, T)
    place = torch.arange(config.tokens)[None, :] % periods[:, None]  # (B, T): position t repeats t mod p
    return torch.gather(fresh, 1, place), periods  # (B, T), (B,)


def repeated_part(periods: torch.Tensor, tokens: int) -> torch.Tensor:
    """(B, T − 1) True where a next-token target lies in the repeated part: target t (1 … T − 1) with t ≥ p, a
    copy of the token one period back."""
    return torch.arange(1, tokens)[None, :] >= periods[:, None]  # (B, T − 1)


def probe_sequences(config: InductionConfig, count: int, generator: torch.Generator) -> torch.Tensor:
    """(count, 2n): n distinct random tokens, then the same n again. Distinct, so that the token after an earlier
    occurrence is one position (head_scores.induction_score's stripe), not several."""
    half = config.probe_half
    first = torch.stack([torch.randperm(config.vocab_size, generator=generator)[:half]
                         for _ in range(count)])  # (count, n)
    return torch.cat([first, first], dim=1)  # (count, 2n)


def next_token_losses(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """logits (B, T, V), tokens (B, T) -> (B, T − 1) cross-entropy of each position's guess of the next token."""
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), tokens[:, 1:].reshape(-1),  # (B·(T − 1), V)
                           reduction="none").view(tokens.shape[0], -1)  # (B, T − 1)


@dataclass(frozen=True, eq=False)
class TrainedStreams:
    """What the logit lens reads of one model at its run's last step, instead of its weights: its residual stream on
    the run's example probe entering each layer and after the last, and its unembedding. The model has no final
    norm, so that streams[-1] @ unembedding are its own logits on the probe. (L + 1)·P·C + C·V floats: 26 kB for
    the two-layer model at the defaults (3·24·64 + 64·32), 34 kB at the page's largest vocabulary (64)."""

    layers: int
    steps_run: int  # the step these streams were read at
    example: np.ndarray  # (P,) the probe sequence read
    streams: np.ndarray  # (L + 1, P, C) float32
    unembedding: np.ndarray  # (C, V) float32

    @property
    def nbytes(self) -> int:
        return self.example.nbytes + self.streams.nbytes + self.unembedding.nbytes


@dataclass(frozen=True, eq=False)
class ModelHistory:
    """One model's run: what was measured, and its heads' attention kept along the way."""

    layers: int
    losses: np.ndarray  # (steps_run,) training loss per step (every target of the batch)
    repeated_loss: np.ndarray  # (M,) held-out loss on the repeated part at each measured step
    previous_token: np.ndarray  # (M, L, nh) every head's previous-token score
    induction: np.ndarray  # (M, L, nh) every head's induction score
    kept: np.ndarray  # (K, L, nh, P, P) every head's attention on the example probe, at each kept step
    kept_previous_token: np.ndarray  # (K, L, nh) every head's previous-token score on the example alone
    kept_induction: np.ndarray  # (K, L, nh) and its induction score there
    streams: TrainedStreams  # what the logit lens reads of the model at the last step run

    def events(self, steps: np.ndarray) -> list[head_scores.HeadEvent]:
        """Heads that became previous-token or induction heads, and when (steps: the run's measured steps)."""
        found = [*head_scores.first_crossings(self.layers, "previous_token", steps, self.previous_token),
                 *head_scores.first_crossings(self.layers, "induction", steps, self.induction)]
        return sorted(found, key=lambda event: (event.step, event.layer, event.head))


@dataclass(frozen=True, eq=False)
class InductionRun:
    """A run of both models: its config, when it measured and kept, and each model's history. steps_run <
    config.steps if it was stopped."""

    config: InductionConfig
    steps_run: int
    measured_steps: np.ndarray  # (M,) from 0, before training
    kept_steps: np.ndarray  # (K,) from 0
    example: np.ndarray  # (P,) the probe sequence whose attention is kept
    models: tuple[ModelHistory, ...]  # one layer, then two
    seconds: float  # wall time of the training loop

    @property
    def finished(self) -> bool:
        return self.steps_run == self.config.steps

    def model(self, layers: int) -> ModelHistory:
        return self.models[LAYER_COUNTS.index(layers)]

    def events(self) -> list[head_scores.HeadEvent]:
        """Every model's heads that became previous-token or induction heads, in the order they did."""
        found = [event for history in self.models for event in history.events(self.measured_steps)]
        return sorted(found, key=lambda event: (event.step, event.layers, event.layer, event.head))


@dataclass(frozen=True)
class InductionProgress:
    """What training() yields after every optimiser step."""

    step: int  # 1 to total
    total: int
    losses: tuple[float, ...]  # this step's training loss of each model, one layer then two
    measured: bool  # whether the models were measured on this step
    # The models themselves, as trained so far, for a caller that runs them (a test's forward pass): no run keeps them.
    models: tuple[AttentionOnlyDecoder, ...] = field(repr=False)
    snapshot: Callable[[], InductionRun] = field(repr=False)  # the run so far, as train() would return it now
    finish: Callable[[], InductionRun] = field(repr=False)  # the same, measured and kept at this step if it was not


def training(config: InductionConfig = InductionConfig()) -> Iterator[InductionProgress]:
    """Train both models from config.seed, yielding after every step; stop iterating to stop the run.

    Deterministic for a given config on a given machine: the weights, the batches, the held-out sequences and the
    probes all come from private generators, and it runs on one thread.
    """
    config.validate()
    batches = torch.Generator().manual_seed(config.seed)
    models = tuple(AttentionOnlyDecoder(config, layers, _generator(config.seed, layers)) for layers in LAYER_COUNTS)
    optimisers = [torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
                  for model in models]
    recorder = _Recorder(config, models)
    with one_thread():
        recorder.measure(0)
        recorder.keep(0)
        for step in range(1, config.steps + 1):
            tokens, periods = periodic_sequences(config, config.batch_size, batches)  # (B, T)
            known = repeated_part(periods, config.tokens)  # (B, T − 1): the targets that can be known
            losses = []
            with torch.enable_grad():
                for model, optimiser in zip(models, optimisers, strict=True):
                    loss = next_token_losses(model(tokens)[0], tokens)[known].mean()  # (B, T − 1) -> ()
                    optimiser.zero_grad()
                    loss.backward()
                    optimiser.step()
                    losses.append(loss.item())
            recorder.step(step, losses)
            measured = step % config.measure_every == 0 or step == config.steps
            if measured:
                recorder.measure(step)
            if step % config.keep_every == 0 or step == config.steps:
                recorder.keep(step)
            yield InductionProgress(step, config.steps, tuple(losses), measured, models, recorder.snapshot,
                                    recorder.finish)


def train(config: InductionConfig = InductionConfig(),
          on_step: Callable[[InductionProgress], bool | None] | None = None) -> InductionRun:
    """Train both models to the end, or until on_step returns False (the run then ends measured at that step)."""
    for progress in training(config):
        if on_step is not None and on_step(progress) is False:
            return progress.finish()
    return progress.snapshot()


def untrained(config: InductionConfig = InductionConfig()) -> InductionRun:
    """Both models as training() starts them, measured at step 0: what the heads do by chance."""
    config.validate()
    recorder = _Recorder(config, tuple(AttentionOnlyDecoder(config, layers, _generator(config.seed, layers))
                                       for layers in LAYER_COUNTS))
    with one_thread():
        recorder.measure(0)
        recorder.keep(0)
    return recorder.snapshot()


def history_rows(run: InductionRun) -> dict[str, np.ndarray]:
    """The scores over training as columns: one row per model, measured step and head (layers 1 then 2, then step,
    layer, head), with that model's loss on the repeated part at that step on each of its rows."""
    columns: dict[str, list[np.ndarray]] = {name: [] for name in
                                            ("layers", "step", "layer", "head", "previous_token", "induction", "loss")}
    for history in run.models:
        measured, layers, heads = history.induction.shape  # (M, L, nh)
        step, layer, head = np.meshgrid(np.arange(measured), np.arange(layers), np.arange(heads), indexing="ij")
        columns["layers"].append(np.full(step.size, history.layers))
        columns["step"].append(run.measured_steps[step.ravel()])
        columns["layer"].append(layer.ravel())
        columns["head"].append(head.ravel())
        columns["previous_token"].append(history.previous_token.ravel())
        columns["induction"].append(history.induction.ravel())
        columns["loss"].append(history.repeated_loss[step.ravel()])
    return {name: np.concatenate(parts) for name, parts in columns.items()}


class _Recorder:
    """What a run measures and keeps as it goes, and the run so far on request."""

    def __init__(self, config: InductionConfig, models: tuple[AttentionOnlyDecoder, ...]):
        self.config, self.models = config, models
        self.started = time.perf_counter()
        held_out = torch.Generator().manual_seed(_offset(config.seed, "held_out"))
        self.held_out, periods = periodic_sequences(config, config.held_out, held_out)  # (H, T), (H,)
        self.repeated = repeated_part(periods, config.tokens)  # (H, T − 1)
        self.probes = probe_sequences(config, config.probes,
                                      torch.Generator().manual_seed(_offset(config.seed, "probe")))  # (N, P)
        self.losses: list[list[float]] = [[] for _ in models]
        self.measured: list[int] = []
        self.kept: list[int] = []
        self.scores: list[list[tuple[float, np.ndarray, np.ndarray]]] = [[] for _ in models]
        self.attention: list[list[np.ndarray]] = [[] for _ in models]
        self.steps_run = 0

    def step(self, step: int, losses: list[float]) -> None:
        self.steps_run = step
        for kept, loss in zip(self.losses, losses, strict=True):
            kept.append(loss)

    def measure(self, step: int) -> None:
        """Every model's loss on the repeated part and every head's scores, at this step."""
        with torch.inference_mode():
            for model, scores in zip(self.models, self.scores, strict=True):
                losses = next_token_losses(model(self.held_out)[0], self.held_out)  # (H, T − 1)
                weights = torch.stack([stage.weights for stage in model(self.probes)[1]])  # (L, N, nh, P, P)
                scores.append((float(losses[self.repeated].mean()),
                               head_scores.previous_token_score(weights).mean(dim=1).numpy(),  # (L, nh)
                               head_scores.induction_score(weights).mean(dim=1).numpy()))  # (L, nh)
        self.measured.append(step)

    def keep(self, step: int) -> None:
        """Every head's attention on the first probe, at this step."""
        with torch.inference_mode():
            for model, kept in zip(self.models, self.attention, strict=True):
                stages = model(self.probes[:1])[1]
                kept.append(torch.stack([stage.weights[0] for stage in stages]).numpy())  # (L, nh, P, P)
        self.kept.append(step)

    def streams(self, model: AttentionOnlyDecoder) -> TrainedStreams:
        """What the logit lens reads of the model as it is now, on the first probe."""
        with torch.inference_mode():
            streams = model.residual_streams(self.probes[:1])[0]  # L + 1 x (1, P, C)
            return TrainedStreams(model.num_layers, self.steps_run, self.probes[0].numpy(),
                                  torch.cat(streams).numpy(),  # (L + 1, P, C)
                                  model.unembedding.detach().clone().numpy())  # (C, V)

    def finish(self) -> InductionRun:
        """The run, measured and kept at the last step run if it was not: a stopped run ends on a measurement."""
        if self.measured[-1] != self.steps_run:
            self.measure(self.steps_run)
        if self.kept[-1] != self.steps_run:
            self.keep(self.steps_run)
        return self.snapshot()

    def snapshot(self) -> InductionRun:
        histories = tuple(
            ModelHistory(model.num_layers, np.array(losses, dtype=np.float32),
                         np.array([loss for loss, _, _ in scores], dtype=np.float32),
                         np.stack([previous for _, previous, _ in scores]).astype(np.float32),
                         np.stack([induction for _, _, induction in scores]).astype(np.float32),
                         *_kept_arrays(attention), self.streams(model))
            for model, losses, scores, attention in zip(self.models, self.losses, self.scores, self.attention,
                                                        strict=True))
        return InductionRun(self.config, self.steps_run, np.array(self.measured), np.array(self.kept),
                            self.probes[0].numpy(), histories, time.perf_counter() - self.started)


def _kept_arrays(attention: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept attention (K, L, nh, P, P), and each head's scores on it (K, L, nh) twice: what a reader scrubbing
    through training sees, in numbers."""
    kept = torch.from_numpy(np.stack(attention).astype(np.float32))  # (K, L, nh, P, P)
    return (kept.numpy(), head_scores.previous_token_score(kept).numpy(),
            head_scores.induction_score(kept).numpy())


def _offset(seed: int, what: int | str) -> int:
    return (seed + SEED_OFFSETS[what]) % (SEED.high + 1)


def _generator(seed: int, layers: int) -> torch.Generator:
    return torch.Generator().manual_seed(_offset(seed, layers))


def _normal(shape: tuple[int, ...], std: float, generator: torch.Generator) -> nn.Parameter:
    return nn.Parameter(torch.randn(shape, generator=generator) * std)
