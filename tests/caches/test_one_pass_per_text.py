"""A new text costs the model once: one forward pass (the embeddings, then each layer once, on the way to the
layers the page reads) and every head of each layer attended once, however many parts of the page read that layer
(the chart's stack of every layer, the proof, the all-heads view's entropies and rollout).

The bundled model and the tests' tiny GPT-2, through the page (AppTest) and its real caches, with the core's
functions counted where they are called: the numbers are computed as ever, and a second computation of the same
layer shows as a second count.
"""

from __future__ import annotations

import collections
import functools

import pytest

from attention.dissect import trace
from attention.models.families.bert import BertFamily
from attention.models.families.gpt2 import GPT2Family
from tests.pages import assert_healthy, open_page

BUNDLED_LAYERS = 6
# Texts this test alone types: the caches are the process's, and a text another test opened would be kept.
TEXTS = ("the one pass test reads a short story about a small town by the sea",
         "a second new text for the one pass test, where every house had a blue door")


@pytest.fixture
def counted(monkeypatch) -> collections.Counter:
    """How many times the page ran the embeddings, a layer of the model, and every head of a layer's attention."""
    counts: collections.Counter = collections.Counter()

    def counting(owner, name: str) -> None:
        native = getattr(owner, name)

        @functools.wraps(native)
        def count(*arguments, **keywords):
            counts[name] += 1
            return native(*arguments, **keywords)

        monkeypatch.setattr(owner, name, count)

    for family in (BertFamily, GPT2Family):
        counting(family, "embed")
        counting(family, "run_layer")
    counting(trace, "attend_every_head")
    return counts


@pytest.mark.parametrize("view", ["head", "heads"])
def test_a_new_text_runs_the_model_once_and_attends_each_layer_once(view, counted):
    page = open_page(text=TEXTS[0], view=view)
    assert_one_pass(page, counted, f"{TEXTS[1]} ({view})", BUNDLED_LAYERS)


def test_a_new_text_on_gpt2_runs_it_once_and_attends_each_layer_once(tiny_gpt2_checkpoint, counted, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = open_page(text=TEXTS[0], model=str(tiny_gpt2_checkpoint))
    assert_one_pass(page, counted, f"{TEXTS[1]} (GPT-2)", 2)  # the tiny GPT-2's layers


def assert_one_pass(page, counted: collections.Counter, new_text: str, layers: int) -> None:
    """Type new_text on the open page: the model runs once, and each of its layers is attended once."""
    assert_healthy(page)
    counted.clear()
    page.text_area(key="text").set_value(new_text).run()
    assert_healthy(page)
    assert counted["embed"] == 1, f"the embeddings were computed {counted['embed']} times for one new text"
    assert counted["run_layer"] == layers - 1, (f"{counted['run_layer']} layers were run for one new text: the "
                                                f"inputs of layers 1 to {layers - 1} take {layers - 1}")
    attended = counted["attend_every_head"]
    assert attended == layers, f"every head was attended {attended} times for the {layers} layers of one new text"
