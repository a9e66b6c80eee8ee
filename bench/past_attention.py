"""The views past the attention layer in the bench: a step of the generation view (its chart's own Step input) and a
layer of the logit lens (its Layer read slider), on the GPT-2 of the bundled model's shape (random weights, its
tokenizer trained offline: bench/checkpoints.py) at 32 tokens, each against the floor plus transformers' own bare time
for what the view stands on: one decode step with a key/value cache for generation, one forward pass with the
language-model head for the lens. Both bare times are measured in this process, on one thread as the app's.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.page_speed import Case, chart_input, slider
from components.charts.generation import STEP

DECODE_REFERENCE = "GPT-2 decode step + floor"  # a Case.reference: one decode step's bare time, plus the floor
FORWARD_REFERENCE = "GPT-2 forward + floor"  # a Case.reference: the bare forward pass with the head, plus the floor
# A Case.reference: what a new text costs the generation view, generating the page's default 8 tokens: the prefill's
# forward and one decode step a token after the first, bare, plus the floor.
GENERATE_REFERENCE = "GPT-2 prefill + 7 decode steps + floor"
TARGET = 2.0  # the median's largest ratio to its reference, for either
LAST_STEP = 7  # the generation view's default 8 new tokens: its Step slider runs 0 (the prefill) to 7
LAYERS = 6  # the bench's GPT-2 of the bundled model's shape: the lens reads rows 0 to 6
REPEATS = 30  # bare times measured, each
WARM_UP = 3


def cases(gpt2_model: str, gpt2_text: str) -> list[Case]:
    """The two cases, in the views group, on the GPT-2 folder and its 32-token text."""
    gpt2 = {"text": gpt2_text, "model": gpt2_model}
    there_and_back = ["ArrowRight"] * LAST_STEP + ["ArrowLeft"] * LAST_STEP
    return [
        # Every step's rows at the layer are in the browser: the press repaints the chart, the rerun comes after.
        Case("generation step, GPT-2, 32 tokens", "views", f"the step chart's `Step` input 0 → {LAST_STEP} → 0",
             {**gpt2, "view": "generate"}, chart_input(STEP, there_and_back), TARGET, reference=DECODE_REFERENCE,
             in_browser=True),
        Case("lens layer, GPT-2, 32 tokens", "views", f"the lens's `lens_layer` 0 → {LAYERS} → 0",
             {**gpt2, "view": "lens"}, slider("lens_layer", ["ArrowRight"] * LAYERS + ["ArrowLeft"] * LAYERS),
             TARGET, reference=FORWARD_REFERENCE),
    ]


def bare_seconds(folder: Path | str, text: str) -> dict[str, list[float]]:
    """transformers' GPT2LMHeadModel from folder on text, eager, one thread: REPEATS forward passes with the head
    (the lens's reference), and REPEATS decode steps of one token against the text's cached keys and values
    (generation's), each from a fresh prefill. Seconds, by reference name."""
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    torch.set_num_threads(1)
    model = GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    ids = torch.tensor([AutoTokenizer.from_pretrained(str(folder))(text)["input_ids"]])  # (1, T)
    forward, decode = [], []
    with torch.inference_mode():
        for repeat in range(WARM_UP + REPEATS):
            started = time.perf_counter()
            prefill = model(ids, use_cache=True)  # logits (1, T, V), the cache of T tokens
            prefilled = time.perf_counter()
            model(prefill.logits[:, -1:].argmax(-1), past_key_values=prefill.past_key_values, use_cache=True)
            if repeat >= WARM_UP:
                forward.append(prefilled - started)
                decode.append(time.perf_counter() - prefilled)
    return {FORWARD_REFERENCE: forward, DECODE_REFERENCE: decode}


def reference_ms(seconds: dict[str, list[float]] | None) -> dict[str, float]:
    """The median bare time in ms by reference name (none when they were not measured), generation's from its
    forward and decode step."""
    medians = {name: 1000 * statistics.median(times) for name, times in (seconds or {}).items()}
    if medians:
        medians[GENERATE_REFERENCE] = medians[FORWARD_REFERENCE] + LAST_STEP * medians[DECODE_REFERENCE]
    return medians
