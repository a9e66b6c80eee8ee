"""Attention Anatomy's core: BERT self-attention dissected step by step, with no Streamlit.

    from attention import TraceSettings, build_trace, encode, load_model

    bert = load_model()                                  # the bundled all-MiniLM-L6-v2
    encoding = encode(bert, "time flies like an arrow")  # one forward pass, reused below
    trace = build_trace(bert, encoding, TraceSettings(layer=2, head=5))
    trace["weights"].shape                               # (1, 7, 7)
"""

from attention.encoding import Encoding, encode, encode_batch
from attention.layer_inputs import next_layer_input
from attention.models import (
    BUNDLED_MODEL,
    LoadedModel,
    ModelLoadError,
    allowed_hub_ids,
    check_fits,
    load_model,
    weights_path,
)
from attention.outline import Outline, OutlineStep, build_outline, outline_steps
from attention.parity import LayerReference, layer_reference, parity_report, transformers_weights
from attention.settings import SCALINGS, SIMILARITIES, SOURCES, ModelShape, TraceSettings
from attention.trace import LayerAttention, Step, Trace, build_trace, layer_attention, layer_projections

__all__ = [
    "BUNDLED_MODEL",
    "SCALINGS",
    "SIMILARITIES",
    "SOURCES",
    "Encoding",
    "LayerAttention",
    "LayerReference",
    "LoadedModel",
    "ModelLoadError",
    "ModelShape",
    "Outline",
    "OutlineStep",
    "Step",
    "Trace",
    "TraceSettings",
    "allowed_hub_ids",
    "build_outline",
    "build_trace",
    "layer_attention",
    "layer_projections",
    "check_fits",
    "encode",
    "encode_batch",
    "layer_reference",
    "load_model",
    "outline_steps",
    "next_layer_input",
    "parity_report",
    "transformers_weights",
    "weights_path",
]
