"""The induction lab's core: the model's shapes and causal mask, its attention as the page's own, the data, the
run's records, stopping, reproducibility; and, on a small configuration, the mechanism itself: the two-layer
model grows an induction head and the one-layer model cannot."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention.labs.induction import (
    LAYER_COUNTS,
    AttentionOnlyDecoder,
    InductionConfig,
    history_rows,
    periodic_sequences,
    probe_sequences,
    repeated_part,
    train,
    training,
    untrained,
)

TINY = InductionConfig(vocab_size=11, tokens=10, period_low=2, period_high=5, heads=3, width=12, head_size=4,
                       steps=12, batch_size=8, held_out=16, probes=4)


def model(layers: int, config: InductionConfig = TINY, seed: int = 0) -> AttentionOnlyDecoder:
    return AttentionOnlyDecoder(config, layers, torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("layers", LAYER_COUNTS)
@pytest.mark.parametrize("length", [TINY.tokens, 4, 1])
def test_the_model_gives_logits_per_position_and_each_layers_weights_per_head(layers, length):
    tokens = torch.randint(0, TINY.vocab_size, (5, length))  # (B, T')
    with torch.no_grad():
        logits, stages = model(layers)(tokens)
    assert logits.shape == (5, length, TINY.vocab_size)
    assert len(stages) == layers
    for stage in stages:
        assert stage.weights.shape == (5, TINY.heads, length, length)
        assert stage.context.shape == (5, TINY.heads, length, TINY.head_size)


@pytest.mark.parametrize("layers", LAYER_COUNTS)
def test_no_query_looks_ahead_and_every_row_sums_to_1(layers):
    tokens = torch.randint(0, TINY.vocab_size, (6, TINY.tokens))
    with torch.no_grad():
        _, stages = model(layers)(tokens)
    above = torch.triu(torch.ones(TINY.tokens, TINY.tokens, dtype=torch.bool), diagonal=1)  # key j > query i
    for stage in stages:
        assert torch.all(stage.weights[..., above] == 0.0), "weight above the diagonal: a query saw a later token"
        assert torch.all(stage.weights[..., ~above] > 0.0)
        torch.testing.assert_close(stage.weights.sum(-1), torch.ones(6, TINY.heads, TINY.tokens))


def test_a_later_token_changes_nothing_before_it():
    decoder = model(2)
    tokens = torch.randint(0, TINY.vocab_size, (3, TINY.tokens))
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % TINY.vocab_size
    with torch.no_grad():
        torch.testing.assert_close(decoder(tokens)[0][:, :-1], decoder(changed)[0][:, :-1])


def test_each_layer_is_the_pages_attention_as_torch_computes_it_causally():
    """The first layer's heads against torch's scaled_dot_product_attention with is_causal, from the same weights."""
    decoder = model(1)
    tokens = torch.randint(0, TINY.vocab_size, (4, TINY.tokens))
    with torch.no_grad():
        stream = decoder.token_embedding[tokens] + decoder.position_embedding  # (B, T, C)

        def heads(weight):  # (B, T, C) @ (C, nh·d) -> (B, nh, T, d)
            return (stream @ weight).view(4, TINY.tokens, TINY.heads, TINY.head_size).transpose(1, 2)

        expected = F.scaled_dot_product_attention(heads(decoder.query[0]), heads(decoder.key[0]),
                                                  heads(decoder.value[0]), is_causal=True)  # (B, nh, T, d)
        logits, [stage] = decoder(tokens)
        torch.testing.assert_close(stage.context, expected, rtol=1e-5, atol=1e-6)
        merged = expected.transpose(1, 2).reshape(4, TINY.tokens, -1)  # (B, T, nh·d)
        torch.testing.assert_close(logits, (stream + merged @ decoder.output[0]) @ decoder.unembedding,
                                   rtol=1e-5, atol=1e-5)
    assert stage.scaled.shape == stage.scores.shape and torch.allclose(stage.scaled * math.sqrt(4), stage.scores)


def test_sequences_repeat_with_periods_that_vary_inside_the_range():
    sequences, periods = periodic_sequences(InductionConfig(), 500, torch.Generator().manual_seed(1))
    assert sequences.shape == (500, 24) and periods.shape == (500,)
    assert set(periods.tolist()) == set(range(4, 13)), "every period of 4 to 12 is drawn"
    for sequence, period in zip(sequences, periods, strict=True):
        p = int(period)
        assert torch.equal(sequence[p:], sequence[:-p]), "each token is the one a period back"
    assert sequences.min() >= 0 and sequences.max() < 32


def test_the_repeated_part_is_the_targets_a_period_or_more_in():
    known = repeated_part(torch.tensor([2, 4]), tokens=6)  # targets 1 … 5
    assert known.tolist() == [[False, True, True, True, True], [False, False, False, True, True]]


def test_a_probe_is_n_distinct_tokens_then_the_same_again():
    probes = probe_sequences(InductionConfig(), 50, torch.Generator().manual_seed(2))
    assert probes.shape == (50, 24)
    assert torch.equal(probes[:, :12], probes[:, 12:])
    assert all(len(set(row[:12].tolist())) == 12 for row in probes)
    assert InductionConfig(vocab_size=5).probe_half == 5, "a small vocabulary: n is all of it"


@pytest.mark.parametrize(("change", "message"), [
    ({"period_high": 24}, "period_high must be an integer from 4 to 23"),
    ({"period_low": 13, "period_high": 12}, "period_high must be an integer from 13 to 23"),
    ({"period_low": 0}, "period_low"),
    ({"heads": 0}, "heads must be an integer from 1 to 16"),
    ({"vocab_size": 1}, "vocab_size"),
    ({"steps": 0}, "steps"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"seed": -1}, "seed"),
])
def test_a_bad_config_raises_naming_the_valid_range(change, message):
    with pytest.raises(ValueError, match=message):
        replace(InductionConfig(), **change).validate()


def test_a_run_records_measurements_and_checkpoints_from_step_0_to_the_last():
    config = replace(TINY, steps=30)  # measured every 5 steps (no more often), kept every ceil(30 / 20) = 2
    run = train(config)
    assert run.finished and run.steps_run == 30
    assert run.measured_steps.tolist() == list(range(0, 31, 5))
    assert run.kept_steps.tolist() == list(range(0, 31, 2))
    assert run.example.shape == (10,) and np.array_equal(run.example[:5], run.example[5:])
    for layers, history in zip(LAYER_COUNTS, run.models, strict=True):
        assert history.layers == layers and run.model(layers) is history
        assert history.losses.shape == (30,)
        assert history.repeated_loss.shape == (7,)
        assert history.previous_token.shape == history.induction.shape == (7, layers, 3)
        assert history.kept.shape == (16, layers, 3, 10, 10)
        assert history.kept_induction.shape == history.kept_previous_token.shape == (16, layers, 3)
        assert np.all((history.induction >= 0) & (history.induction <= 1))
    assert untrained(config).models[1].previous_token[0].tolist() == run.models[1].previous_token[0].tolist()


def test_the_same_config_trains_the_same_run_and_another_seed_another():
    first, again, other = train(TINY), train(TINY), train(replace(TINY, seed=1))
    for a, b, c in zip(first.models, again.models, other.models, strict=True):
        np.testing.assert_array_equal(a.losses, b.losses)
        np.testing.assert_array_equal(a.kept, b.kept)
        assert not np.array_equal(a.losses, c.losses)


def test_stopping_ends_the_run_measured_and_kept_at_its_last_step():
    config = replace(TINY, steps=100)  # measured every 5 steps, kept every 5
    stopped = train(config, on_step=lambda progress: progress.step < 7)
    assert stopped.steps_run == 7 and not stopped.finished
    assert stopped.measured_steps[-1] == 7 and stopped.kept_steps[-1] == 7
    assert stopped.models[1].losses.shape == (7,)
    iterated = []
    for progress in training(config):  # iterating and letting go: the same run so far
        iterated.append(progress.step)
        if progress.step == 4:
            snapshot = progress.snapshot()
            break
    assert iterated == [1, 2, 3, 4] and snapshot.steps_run == 4 and snapshot.measured_steps.tolist() == [0]


def test_the_csv_rows_are_every_model_step_layer_and_head_with_that_models_loss():
    run = train(replace(TINY, steps=6))
    rows = history_rows(run)
    assert list(rows) == ["layers", "step", "layer", "head", "previous_token", "induction", "loss"]
    measured = len(run.measured_steps)
    assert len(rows["step"]) == measured * TINY.heads * (1 + 2)
    two = rows["layers"] == 2
    assert sorted(set(rows["layer"][two].tolist())) == [0, 1] and set(rows["layer"][~two].tolist()) == {0}
    at = two & (rows["step"] == run.measured_steps[-1]) & (rows["layer"] == 1) & (rows["head"] == 2)
    assert rows["induction"][at].tolist() == [run.models[1].induction[-1, 1, 2]]
    assert set(rows["loss"][at].tolist()) == {run.models[1].repeated_loss[-1]}
    assert len(set(rows["loss"][two & (rows["step"] == 0)].tolist())) == 1, "one loss per model and step"


# A small configuration that shows the mechanism in seconds on one core (the page's defaults are measured by
# `python -m bench.induction`).
SMALL = InductionConfig(vocab_size=20, tokens=20, period_low=3, period_high=10, heads=2, width=32, head_size=16,
                        steps=600, batch_size=32, learning_rate=6e-3, held_out=128, probes=32)


@pytest.fixture(scope="module")
def small_run():
    return train(SMALL)  # about 10 s on one thread


def test_two_layers_grow_an_induction_head_and_one_layer_cannot(small_run):
    one, two = small_run.models
    assert two.induction[-1].max() >= 0.5, f"the two-layer model's best induction score: {two.induction[-1].max()}"
    assert one.induction[-1].max() < 0.3, f"a one-layer head scored {one.induction[-1].max()} as an induction head"
    assert two.repeated_loss[-1] < 0.5 * one.repeated_loss[-1]
    events = [event for event in small_run.events() if event.kind == "induction"]
    assert events and all(event.layers == 2 and event.layer == 1 for event in events), events


def test_the_induction_head_comes_after_a_previous_token_head_in_the_first_layer(small_run):
    one, two = small_run.models
    first_layer = two.previous_token[:, 0]  # (M, nh)
    assert first_layer[-1].max() >= max(0.3, 2 * first_layer[0].max()), "more than twice its share by chance"
    assert first_layer[-1].max() > one.previous_token[-1].max(), "a previous-token head is the two layers' own"
    induction = min(e.step for e in small_run.events() if e.kind == "induction")
    loss_before = two.repeated_loss[small_run.measured_steps < induction].min()
    assert two.repeated_loss[-1] < 0.5 * loss_before, "the loss on the repeated part drops as it forms"


def test_with_one_fixed_period_one_layer_cheats_by_position():
    """Why the period varies: with every sequence of period 10, one layer looks 9 tokens back by position alone,
    scores as an induction head and predicts the repeated part: the contrast needs periods that vary."""
    fixed = replace(SMALL, period_low=10, period_high=10, steps=300)
    one = train(fixed).model(1)
    assert one.induction[-1].max() > 0.5 and one.repeated_loss[-1] < 0.1
