"""What a trace costs against the bare transformers forward pass with attentions.

    python -m bench.trace_overhead [--tokens 32] [--repeats 30] [--threads 1]

Prints medians (ms) and ratios; the reference is measured in the same run, interleaved
with the trace, so that a busy machine slows both alike. Target: full trace ≤ 1.2×.
torch runs on one thread by default, as the app's server does (components/server/process.py).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from attention.dissect.trace import build_trace
from attention.models.loading import LoadedModel, load_model
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.reference import bare_forward

TARGET = 1.2
BARE = "bare forward with attentions"
FULL = "full trace (new text)"
CACHED = "trace from cached encoding (slider move)"


def text_of(loaded, tokens: int) -> str:
    """A natural-looking text that tokenizes to exactly `tokens` tokens, [CLS] and [SEP] included."""
    words = ("time flies like an arrow and fruit flies like a banana while students look at attention " * 40).split()
    for count in range(1, len(words)):
        text = " ".join(words[:count])
        if len(loaded.tokenizer.encode(text)) >= tokens:
            return text
    raise ValueError(f"cannot make a text of {tokens} tokens")


def interleaved(cases: dict[str, Callable[[], None]], repeats: int) -> dict[str, list[float]]:
    """Seconds per call of each case: one warm-up each, then `repeats` rounds of every case in turn."""
    for run in cases.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def forward_seconds(loaded: LoadedModel, texts: list[str], repeats: int = 5) -> list[float]:
    """Seconds of the bare forward pass, `repeats` times over each text."""
    times = interleaved({text: bare_forward(loaded, text) for text in texts}, repeats)
    return [seconds for samples in times.values() for seconds in samples]


def measure(loaded: LoadedModel, tokens: int = 32, repeats: int = 30) -> tuple[int, dict[str, list[float]]]:
    """(the text's token count, seconds per call of the bare forward, a full trace and a cached-encoding trace)."""
    text = text_of(loaded, tokens)
    settings = TraceSettings(layer=loaded.shape.num_layers // 2, head=1)
    encoding = encode(loaded, text)
    cases = {
        BARE: bare_forward(loaded, text),
        FULL: lambda: build_trace(loaded, encode(loaded, text), settings),  # tokenize, forward once, one head
        CACHED: lambda: build_trace(loaded, encoding, settings),  # same text, another head: no forward pass
    }
    return encoding.num_tokens, interleaved(cases, repeats)


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's server uses 1)")
    parser.add_argument("--model", default=BUNDLED_MODEL)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    tokens, times = measure(load_model(args.model), args.tokens, args.repeats)
    reference = median_ms(times[BARE])
    print(f"model {args.model}, {tokens} tokens, {args.repeats} repeats, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'case':44} {'median ms':>10} {'max ms':>8} {'ratio':>7}")
    for name, samples in times.items():
        ratio = median_ms(samples) / reference
        print(f"{name:44} {median_ms(samples):10.2f} {1000 * max(samples):8.2f} {ratio:6.2f}×")
    verdict = "meets" if median_ms(times[FULL]) / reference <= TARGET else "MISSES"
    print(f"full trace {verdict} the target of ≤ {TARGET}× the bare forward")


if __name__ == "__main__":
    main()
