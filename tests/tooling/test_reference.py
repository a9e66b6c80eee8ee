"""transformers' own model, tokenizer and forward pass of a loaded checkpoint (harness/reference.py): what the core is
tested against here and timed against by the bench (bench/trace_overhead.py).

The bench's bare forward pass called the core's tokenizer as if it were transformers' after the core stopped using
transformers' tokenizer and BertModel: `python -m bench` measured the page for eight minutes and fell over at its
last step, printing no table, and nothing ran it for sessions. It lives here now, where the tests run it.
"""

from __future__ import annotations

import numpy as np

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.reference import bare_forward, transformers_model


def test_the_bare_forward_is_transformers_own_model_with_the_cores_attention(bundled):
    assert type(transformers_model(bundled)).__module__.startswith("transformers.")
    text = "time flies like an arrow"
    attentions = bare_forward(bundled, text)().attentions
    assert len(attentions) == bundled.shape.num_layers
    trace = build_trace(bundled, encode(bundled, text), TraceSettings(layer=2, head=5))
    np.testing.assert_allclose(attentions[2][0, 5].numpy(), np.asarray(trace["weights"][0]), rtol=1e-5, atol=1e-6)
