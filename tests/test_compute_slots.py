"""The page's heavy-work slots (components/compute.py): what waits for one, and what does not."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from attention import BUNDLED_MODEL, encode
from components import compute

# Long enough for any machine to tokenize a sentence: the call either returns or waits for a slot that never frees.
NOT_STUCK_S = 120


def test_the_tokens_of_a_text_are_read_while_other_sessions_hold_every_heavy_slot(bundled):
    text = "tokens read while every heavy slot is taken"
    holding, release = threading.Barrier(compute.HEAVY_SLOTS + 1), threading.Event()

    def hold_a_slot() -> None:
        with compute.heavy_work():
            holding.wait()
            release.wait()

    with ThreadPoolExecutor(compute.HEAVY_SLOTS + 1) as pool:
        holders = [pool.submit(hold_a_slot) for _ in range(compute.HEAVY_SLOTS)]
        try:
            holding.wait(timeout=NOT_STUCK_S)
            tokens = pool.submit(compute.encoding, BUNDLED_MODEL, text, "").result(timeout=NOT_STUCK_S)
        finally:
            release.set()
        for holder in holders:
            holder.result()
    assert tokens.tokens == encode(bundled, text, layers=()).tokens
    assert all(hidden is None for hidden in tokens.hidden_states), "the tokenizer alone: no layer run"
