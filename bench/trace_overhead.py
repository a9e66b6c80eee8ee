"""What a trace costs against the bare transformers forward pass with attentions.

    python bench/trace_overhead.py [--tokens 32] [--repeats 30]

Prints medians (ms) and ratios; the reference is measured in the same run, interleaved
with the trace, so that a busy machine slows both alike. Target: full trace ≤ 1.2×.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from attention import TraceSettings, build_trace, encode, load_model  # noqa: E402

TARGET = 1.2


def text_of(loaded, tokens: int) -> str:
    """A natural-looking text that tokenizes to exactly `tokens` tokens, [CLS] and [SEP] included."""
    words = ("time flies like an arrow and fruit flies like a banana while students look at attention " * 40).split()
    for count in range(1, len(words)):
        text = " ".join(words[:count])
        if len(loaded.tokenizer(text)["input_ids"]) >= tokens:
            return text
    raise ValueError(f"cannot make a text of {tokens} tokens")


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    args = parser.parse_args()

    loaded = load_model(args.model)
    text = text_of(loaded, args.tokens)
    inputs = loaded.tokenizer(text, return_tensors="pt")
    settings = TraceSettings(layer=loaded.shape.num_layers // 2, head=1)
    encoding = encode(loaded, text)

    def bare_forward():
        with torch.inference_mode():
            loaded.model(**inputs, output_attentions=True)

    def full_trace():  # a new text: tokenize, forward once, dissect one head
        build_trace(loaded, encode(loaded, text), settings)

    def slider_move():  # same text, another head: no forward pass
        build_trace(loaded, encoding, settings)

    cases = {"bare forward with attentions": bare_forward, "full trace (new text)": full_trace,
             "trace from cached encoding (slider move)": slider_move}
    for run in cases.values():  # warm-up
        run()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, run in cases.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)

    reference = median_ms(times["bare forward with attentions"])
    print(f"model {args.model}, {encoding.num_tokens} tokens, {args.repeats} repeats, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'case':44} {'median ms':>10} {'max ms':>8} {'ratio':>7}")
    for name, samples in times.items():
        ratio = median_ms(samples) / reference
        print(f"{name:44} {median_ms(samples):10.2f} {1000 * max(samples):8.2f} {ratio:6.2f}×")
    verdict = "meets" if median_ms(times["full trace (new text)"]) / reference <= TARGET else "MISSES"
    print(f"full trace {verdict} the target of ≤ {TARGET}× the bare forward")


if __name__ == "__main__":
    main()
