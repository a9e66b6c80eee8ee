"""The text alternatives of the switch, block, rotary, lens, generation and tiled-softmax charts where the page
tests do not reach: how a number is said, a lens of one position (a BERT's [MASK]), a row in one block, more blocks
rescaled than are named, an embedding no head moved, a key after its query, and a token that holds quotes and HTML.
The numbers on the page are held to transformers and the core in tests/page/test_chart_text_*.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from components.charts.generation import describe_rows
from components.charts.lens import describe_lens
from components.charts.rotary import describe_decay
from components.charts.spoken_numbers import figure, signed
from components.charts.switch_text import describe_embedding, describe_head_grid
from components.charts.tiled_softmax import describe_blocks


def test_a_number_is_said_to_two_decimals_or_two_significant_figures():
    assert [figure(value) for value in (0.414, 12.3, 0.0012, 0.05, -0.00031, 0.0, 0.1)] == [
        "0.41", "12.30", "0.0012", "0.050", "-0.00031", "0.00", "0.10"]
    assert [signed(value) for value in (12.3, -0.0012, 0.0)] == ["+12.30", "-0.0012", "+0.00"]


def test_a_lens_of_one_position_says_one_position():
    said = describe_lens(np.array([[0.2], [0.5], [0.9]]), [["a"], ["b"], ["paris"]], np.array([2]), ["[MASK]"], [6])
    assert said == ("The logit lens, rows 0 (the embeddings) to 2 read at 1 position. At position 6, '[MASK]': the "
                    "final top token 'paris' first becomes top at layer 2 of 2; at layer 2 its probability is 0.90. "
                    "The final guess is on top before the output at 0 of 1 position.")


def steps(maxima: list[float], block_size: int = 2) -> list[SimpleNamespace]:
    """Softmax steps with these running maxima: a block whose max grew rescales by exp(old − new)."""
    made, before = [], -np.inf
    for block, largest in enumerate(maxima):
        made.append(SimpleNamespace(block=block, keys=tuple(range(block * block_size, (block + 1) * block_size)),
                                    max_after=largest, sum_after=float(block + 1),
                                    rescale=float(np.exp(before - largest))))
        before = largest
    return made


def test_the_blocks_say_when_nothing_was_rescaled_and_name_a_few_rescales_of_many():
    assert describe_blocks(steps([1.0], block_size=7), 3) == (
        "Query 3 in 1 block of 7 keys: the running max m starts at +1.00 and ends at +1.00, the running sum ℓ ends "
        "at 1.00; no later block brought a larger max: nothing was rescaled.")
    said = describe_blocks(steps([0.0, 1.0, 2.0, 2.0, 3.0, 4.0], block_size=1), 5)
    assert said.startswith("Query 5 in 6 blocks of 1 key: ")
    assert said.endswith("4 later blocks brought a larger max, rescaling ℓ: block 1 0.37; block 2 0.37; block 4 "
                         "0.37; ….")


def test_an_embedding_no_head_moved_says_so_and_names_its_largest_values():
    before = np.array([0.1, -0.8, 0.3, 0.5], dtype=np.float32)
    assert describe_embedding(before, before.copy(), "all heads on") == (
        "Sentence A's embedding, 4 dimensions, all heads on: the row with heads off equals it and their difference "
        "is 0. Largest values: dimension 1 -0.80; dimension 3 +0.50; dimension 2 +0.30.")


def test_a_key_after_its_query_has_no_distance_on_the_curve():
    said = describe_decay(np.arange(4), np.array([1.0, 0.5, -0.25, 0.0]), np.array([1.0, 0.9, 0.7, 0.4]), None)
    assert said == ("Score of this q and k against distance n = 0 to 3: +1.00 at n = 0, highest +1.00 at n = 0, "
                    "lowest -0.25 at n = 2; the key comes after the query: no distance of theirs. A vector of ones "
                    "scored against itself: 1 at n = 0, +0.40 at n = 3.")


def test_tokens_are_quoted_as_data_and_a_grid_keeps_a_drops_sign():
    said = describe_rows("Last step, layer 0", np.array([[0.7, 0.3]]), ['<b>"it\'s"</b>', "${x}"], [0, 1])
    assert said.endswith("""Largest weights: head 0 → '<b>"it\\'s"</b>' (token 0) 0.70; """
                         "head 0 → '${x}' (token 1) 0.30.")
    grid = np.array([[1.5, -4.0], [0.0, 2.25]])
    assert describe_head_grid("Drop in P('paris') in points", grid, with_sign=True) == (
        "Drop in P('paris') in points, 2 layers × 2 heads. Largest: layer 0, head 1 -4.00; layer 1, head 1 +2.25; "
        "layer 0, head 0 +1.50.")
