"""Attention Anatomy's core: BERT self-attention dissected step by step, with no Streamlit.

    from attention import TraceSettings, build_trace, encode, load_model

    bert = load_model()                                  # the bundled all-MiniLM-L6-v2
    encoding = encode(bert, "time flies like an arrow")  # one forward pass, reused below
    trace = build_trace(bert, encoding, TraceSettings(layer=2, head=5))
    trace["weights"].shape                               # (1, 7, 7)
"""

from __future__ import annotations

from attention.lazy_names import lazy_names

# Each name the package offers, by the module that holds it. Imported when first asked for (PEP 562): the page
# reads the settings' names and ranges before torch is imported, and most of the core imports torch.
_HOMES = {
    "Encoding": "encoding",
    "encode": "encoding",
    "encode_batch": "encoding",
    "next_layer_input": "layer_inputs",
    "BUNDLED_MODEL": "model_list",
    "allowed_hub_ids": "model_list",
    "LoadedModel": "models",
    "ModelLoadError": "models",
    "check_fits": "models",
    "load_model": "models",
    "weights_path": "models",
    "Outline": "outline",
    "OutlineStep": "outline",
    "build_outline": "outline",
    "outline_steps": "outline",
    "LayerReference": "parity",
    "layer_reference": "parity",
    "parity_report": "parity",
    "transformers_weights": "parity",
    "SCALINGS": "settings",
    "SIMILARITIES": "settings",
    "SOURCES": "settings",
    "ModelShape": "settings",
    "TraceSettings": "settings",
    "LayerAttention": "trace",
    "Step": "trace",
    "Trace": "trace",
    "build_trace": "trace",
    "layer_attention": "trace",
    "layer_projections": "trace",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
