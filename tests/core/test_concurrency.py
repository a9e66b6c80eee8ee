"""One model, several threads at once: the same numbers as one call after another, bit for bit.

The server runs every session's script in a thread of its own, and st.cache_resource hands them
all the same LoadedModel (and its tokenizer). Here THREADS threads encode texts and build traces
with the bundled model at the same moment, each starting on a different input so that different
kinds of call meet (a short text, a sentence pair, a text cut at 512 tokens, random projections
from a seed); every array must equal the one the same call returned when nothing else ran.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from attention.dissect.parity import transformers_weights
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode

THREADS = 8
CALLS_PER_THREAD = 4  # each input is then in flight in 4 threads at once
LONG = "the students read a long story about a small town by the sea where every house had a blue door " * 28
INPUTS = [  # (text, text_b): a text and its second sentence, as the page's two text boxes
    ("time flies like an arrow", ""),
    ("time flies like an arrow", "fruit flies like a banana"),
    (LONG, ""),  # about 550 tokens: cut to 512, and tokenized again uncut to count what was dropped
    ("let's tokenize something?", ""),
    ("I am looking for a hot job", "and a warm flat near the river"),
    ("the quick brown fox jumps over the lazy dog", ""),
    (LONG[:400], "a second sentence after a longer first one"),
    ("attention is all you need", ""),
]
SETTINGS = [
    TraceSettings(layer=2, head=5),
    TraceSettings(layer=5, head=11, scaling="temperature", temperature=0.37),
    TraceSettings(layer=0, source="identity", scaling="linear"),
    TraceSettings(layer=3, head=2, source="random", head_dim=16, seed=7),
    TraceSettings(layer=1, head=0, similarity="cosine", heads_off=(3, 4)),
]


def everything(loaded, text: str, text_b: str) -> dict[str, np.ndarray]:
    """Every array the page could show for one text: the encoding, each trace's steps, transformers' weights."""
    encoding = encode(loaded, text, text_b or None)
    arrays = {"tokens": np.array(encoding.tokens), "dropped": np.array(encoding.dropped_tokens),
              "input_ids": encoding.input_ids, "token_type_ids": encoding.token_type_ids}
    arrays.update({f"hidden_states[{i}]": hidden for i, hidden in enumerate(encoding.hidden_states)})
    for settings in SETTINGS:
        trace = build_trace(loaded, encoding, settings)
        arrays.update({f"{settings} {step.name}": step.value for step in trace.steps})
    arrays["transformers weights, layer 4"] = transformers_weights(loaded, encoding, 4)
    return arrays


@pytest.fixture(scope="module")
def one_by_one(bundled):
    return [everything(bundled, text, text_b) for text, text_b in INPUTS]


def test_threads_at_once_equal_one_by_one(bundled, one_by_one):
    start = threading.Barrier(THREADS)

    def worker(first: int) -> list[tuple[int, dict[str, np.ndarray]]]:
        """A few inputs, from a different one in each thread; all threads released together."""
        start.wait()
        order = [(first + step) % len(INPUTS) for step in range(CALLS_PER_THREAD)]
        return [(index, everything(bundled, *INPUTS[index])) for index in order]

    with ThreadPoolExecutor(THREADS) as pool:
        results = [result for future in [pool.submit(worker, first) for first in range(THREADS)]
                   for result in future.result()]

    assert len(results) == THREADS * CALLS_PER_THREAD
    for index, arrays in results:
        expected = one_by_one[index]
        assert arrays.keys() == expected.keys()
        for name, value in arrays.items():
            assert value.dtype == expected[name].dtype, f"{INPUTS[index][0][:30]!r}: {name}"
            assert np.array_equal(value, expected[name]), f"{INPUTS[index][0][:30]!r}: {name} differs"
