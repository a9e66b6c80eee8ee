"""The `bert` source against transformers itself, on the real bundled model, every layer and head.

The reference numbers come from the model's own full forward pass (output_attentions=True
and a forward hook on each BertAttention), not from anything in attention/.
Shapes: B batch, T tokens, C hidden size, L layers, nh heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from attention.dissect.parity import layer_reference, parity_report, transformers_weights
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode, encode_batch
from harness.reference import transformers_model

TOLERANCE = 1e-5

TEXTS = {
    "single": ("time flies like an arrow", None),
    "longer": ("I am looking for a hot job in a city where the coffee is strong", None),
    "pair": ("I am looking for a hot job", "The bakery down the street is hiring."),
}


@dataclass(frozen=True)
class ModelRun:
    """What transformers computed for an encoded batch in one full forward pass."""

    attentions: tuple[np.ndarray, ...]  # L x (B, nh, T, T)
    attention_outputs: tuple[np.ndarray, ...]  # L x (B, T, C): each BertAttention's output


def run_model(loaded, encoding) -> ModelRun:
    """The whole model once, with attentions on, catching every BertAttention's output."""
    reference = transformers_model(loaded)
    layers = reference.encoder.layer
    caught: dict[int, torch.Tensor] = {}

    def catch(index):
        def hook(_module, _inputs, output):
            caught[index] = output[0] if isinstance(output, tuple) else output  # (B, T, C)
        return hook

    handles = [layer.attention.register_forward_hook(catch(i)) for i, layer in enumerate(layers)]
    try:
        with torch.inference_mode():
            outputs = reference(
                input_ids=torch.from_numpy(encoding.input_ids),
                token_type_ids=torch.from_numpy(encoding.token_type_ids),
                attention_mask=torch.from_numpy(encoding.attention_mask),
                output_attentions=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    assert len(outputs.attentions) == len(layers) == len(caught)
    return ModelRun(
        attentions=tuple(a.numpy() for a in outputs.attentions),
        attention_outputs=tuple(caught[i].numpy() for i in range(len(layers))),
    )


@pytest.fixture(scope="module", params=list(TEXTS), ids=list(TEXTS))
def encoded(request, bundled):
    text, text_b = TEXTS[request.param]
    encoding = encode(bundled, text, text_b)
    return encoding, run_model(bundled, encoding)


@pytest.fixture(scope="module")
def padded(bundled):
    """Two texts of different lengths in one padded batch, and the short one alone."""
    short, long = "time flies like an arrow", "I am looking for a hot job and a warm place to live this winter"
    batch = encode_batch(bundled, [(short, None), (long, None)])
    alone = encode(bundled, short)
    return batch, run_model(bundled, batch), alone, run_model(bundled, alone)


def real_tokens(encoding) -> np.ndarray:
    return encoding.attention_mask.astype(bool)  # (B, T)


def test_the_reference_run_has_the_bundled_shape(bundled, encoded):
    encoding, run = encoded
    batch, tokens = encoding.input_ids.shape
    assert bundled.shape.num_layers == 6 and bundled.shape.num_heads == 12 and bundled.shape.hidden_size == 384
    assert all(a.shape == (batch, 12, tokens, tokens) for a in run.attentions)
    assert all(o.shape == (batch, tokens, 384) for o in run.attention_outputs)


def test_weights_match_transformers_for_every_layer_and_head(bundled, encoded):
    encoding, run = encoded
    shape = bundled.shape
    worst = {}
    for layer in range(shape.num_layers):
        for head in range(shape.num_heads):
            trace = build_trace(bundled, encoding, TraceSettings(layer=layer, head=head))
            worst[layer, head] = float(np.abs(trace["weights"] - run.attentions[layer][:, head]).max())
    assert len(worst) == 72
    (layer, head), largest = max(worst.items(), key=lambda item: item[1])
    assert largest <= TOLERANCE, f"layer {layer} head {head} differs from transformers by {largest:.2e}"


def test_embeddings_are_the_models_own_bit_for_bit(bundled, encoded):
    encoding, _ = encoded
    trace = build_trace(bundled, encoding, TraceSettings())
    np.testing.assert_array_equal(trace["embeddings"], encoding.hidden_states[0])


def test_concat_through_dense_and_layernorm_is_bert_attention_output(bundled, encoded):
    encoding, run = encoded
    real = real_tokens(encoding)
    for layer in range(bundled.shape.num_layers):
        trace = build_trace(bundled, encoding, TraceSettings(layer=layer, head=layer))
        self_output = transformers_model(bundled).encoder.layer[layer].attention.output
        with torch.inference_mode():
            concat = torch.tensor(trace["concat"])  # (B, T, C)
            layer_input = torch.from_numpy(trace["layer_input"])  # (B, T, C)
            ours = self_output.LayerNorm(self_output.dense(concat) + layer_input).numpy()  # (B, T, C)
        theirs = run.attention_outputs[layer]
        assert np.abs(ours - theirs)[real].max() <= TOLERANCE, f"layer {layer}"
        assert np.abs(trace["attention output"] - theirs)[real].max() <= TOLERANCE, f"layer {layer}"


def test_parity_report_is_within_tolerance(bundled, encoded):
    encoding, _ = encoded
    for layer in (0, 3, 5):
        reference = layer_reference(bundled, encoding, layer)
        for head in (0, 7, 11):
            report = parity_report(build_trace(bundled, encoding, TraceSettings(layer=layer, head=head)), reference)
            assert len(report) == 6
            too_far = {name: value for name, value in report.items() if not value <= TOLERANCE}
            assert not too_far, f"layer {layer} head {head}: {too_far}"


def test_transformers_weights_helper_is_what_the_full_forward_returns(bundled, encoded):
    encoding, run = encoded
    for layer in (0, 5):
        weights = transformers_weights(bundled, encoding, layer)  # (B, nh, T, T)
        assert np.abs(weights - run.attentions[layer]).max() <= TOLERANCE


def test_parity_report_refuses_settings_it_cannot_compare(bundled, encoded):
    encoding, _ = encoded
    reference = layer_reference(bundled, encoding, 0)
    for settings in (TraceSettings(scaling="none"), TraceSettings(similarity="cosine"),
                     TraceSettings(heads_off=(1,)), TraceSettings(source="random")):
        with pytest.raises(ValueError, match="parity"):
            parity_report(build_trace(bundled, encoding, settings), reference)


def test_a_padded_batch_matches_transformers_on_the_real_tokens(bundled, padded):
    batch, run, _, _ = padded
    real = real_tokens(batch)  # (B, T)
    assert real.sum(axis=1).tolist()[0] < real.sum(axis=1).tolist()[1], "the first text must be the shorter one"
    padding = ~real[0]  # (T,) the short text's padding keys
    for layer in range(bundled.shape.num_layers):
        for head in range(bundled.shape.num_heads):
            trace = build_trace(bundled, batch, TraceSettings(layer=layer, head=head))
            ours, theirs = trace["weights"], run.attentions[layer][:, head]  # (B, T, T)
            assert np.abs(ours - theirs)[real].max() <= TOLERANCE, f"layer {layer} head {head}"
            assert np.all(ours[0][:, padding] == 0.0) and np.all(theirs[0][real[0]][:, padding] == 0.0)
        assert np.abs(trace["attention output"] - run.attention_outputs[layer])[real].max() <= TOLERANCE


def test_padding_does_not_change_the_short_texts_attention(bundled, padded):
    batch, _, alone, run_alone = padded
    length = alone.num_tokens
    assert batch.attention_mask[0].sum() == length
    for layer in range(bundled.shape.num_layers):
        for head in range(bundled.shape.num_heads):
            trace = build_trace(bundled, batch, TraceSettings(layer=layer, head=head))
            short = trace["weights"][0, :length, :length]  # (T_short, T_short)
            assert np.abs(short - run_alone.attentions[layer][0, head]).max() <= TOLERANCE, f"{layer}/{head}"
