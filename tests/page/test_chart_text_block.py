"""The block view's text alternatives on the bundled BERT: what each sublayer writes (charts/block.describe_written),
its norms as transformers' own layer computes them, and the softmax in blocks of keys (charts/tiled_softmax's
describe_blocks and describe_row), its running numbers the core's and its weights transformers'; each follows the
control that moves its chart (the layer; the query row and the keys per block)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.stages.tiled_softmax import tiled_context
from attention.text.encoding import encode
from harness.reference import bare_forward, transformers_model, transformers_tokenizer
from tests.page.test_chart_text_switch import NUMBER, close_to_two_figures, said_starting
from tests.pages import TEXT, assert_healthy, chart_texts, open_page

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def transformers_writes(bundled, layer: int) -> dict[str, np.ndarray]:
    """(T,) norms of transformers' own layer: the residual stream in, the attention block's output through W_O and
    the MLP's output (each before its add and LayerNorm), caught by hooks on its modules."""
    model = transformers_model(bundled)
    caught = {}
    modules = {"attention": model.encoder.layer[layer].attention.output.dense,
               "MLP": model.encoder.layer[layer].output.dense}
    hooks = [module.register_forward_hook(lambda _, __, output, name=name: caught.__setitem__(name, output))
             for name, module in modules.items()]
    try:
        with torch.inference_mode():
            hidden = model(**transformers_tokenizer(bundled)(TEXT, return_tensors="pt"),
                           output_hidden_states=True).hidden_states
    finally:
        for hook in hooks:
            hook.remove()
    return {"residual in": hidden[layer][0].norm(dim=-1).numpy(),
            **{name: value[0].norm(dim=-1).numpy() for name, value in caught.items()}}


def tokens_of(bundled) -> list[str]:
    return transformers_tokenizer(bundled).convert_ids_to_tokens(transformers_tokenizer(bundled)(TEXT)["input_ids"])


def block_at_layers(*layers: int):
    """The block view at each layer in turn, moved there by its Layer slider as a reader moves it: (page, layer)."""
    page = open_page(view="block", layer=str(layers[0]))
    for layer in layers:
        if layer != layers[0]:
            page.slider(key="layer").set_value(layer).run()
        assert_healthy(page)
        yield page, layer


def test_the_written_chart_says_where_each_sublayer_writes_most_as_transformers_layer_does(bundled):
    tokens = tokens_of(bundled)
    for page, layer in block_at_layers(1, 4):
        said = said_starting(page, f"Layer {layer}, what each sublayer writes into 7 tokens (‖·‖): ")
        norms = transformers_writes(bundled, layer)
        residual = norms["residual in"]
        for part, name in (("attention", "attention"), ("MLP", "the MLP")):
            top = int(np.argmax(norms[part]))
            found = re.search(rf"{name} writes most into {re.escape(repr(tokens[top]))}, ({NUMBER}) against its "
                              rf"residual's ({NUMBER})", said)
            assert found, (part, said)
            assert close_to_two_figures(float(found[1]), norms[part][top])
            assert close_to_two_figures(float(found[2]), residual[top])
        longest = int(np.argmax(residual))
        found = re.search(rf"The longest residual brought in: {re.escape(repr(tokens[longest]))}, ({NUMBER})\.$", said)
        assert found and close_to_two_figures(float(found[1]), residual[longest]), said


def test_the_tiled_charts_say_the_running_numbers_and_the_rows_weights_and_follow_the_query_and_the_blocks(bundled):
    page = open_page({"view": "block", "layer": "0", "head": "3"})
    assert_healthy(page)
    tokens = tokens_of(bundled)
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=0, head=3))  # one head: (B, T, T)
    said_before = chart_texts(page)
    for query, block_size in ((3, 2), (5, 7)):
        page.selectbox(key="tiled_query").set_value(query)
        page.slider(key="tiled_block").set_value(block_size).run()
        assert_healthy(page)
        tiled = tiled_context(torch.from_numpy(trace["masked"][0, query]), torch.from_numpy(trace["V"][0]),
                              block_size)
        steps = [step.softmax for step in tiled.steps]
        blocks = len(steps)
        said = said_starting(page, f"Query {query} in {blocks} block{'s' * (blocks > 1)} of {block_size} keys: the "
                                   "running max m starts at ")
        found = re.search(rf"starts at ({NUMBER}) and ends at ({NUMBER}), the running sum ℓ ends at ({NUMBER}); ",
                          said)
        assert found, said
        for value, expected in zip(found.groups(), (steps[0].max_after, steps[-1].max_after, steps[-1].sum_after),
                                   strict=True):
            assert close_to_two_figures(float(value), expected)
        rescaled = [step for step in steps[1:] if step.rescale < 1]
        if rescaled:
            assert f"{len(rescaled)} later block{'s' * (len(rescaled) != 1)} brought a larger max" in said
            named = re.findall(rf"block (\d+) ({NUMBER})", said)
            assert [int(block) for block, _ in named] == [step.block for step in rescaled[:3]]
            assert all(close_to_two_figures(float(value), step.rescale)
                       for (_, value), step in zip(named, rescaled, strict=False))
        else:
            assert "no later block brought a larger max" in said

        weights = bare_forward(bundled, TEXT)().attentions[0][0, 3, query].numpy()  # (T,) transformers' row
        row = said_starting(page, f"Query {query}, {tokens[query]!r}: the softmax in blocks and of the whole row "
                                  "differ by at most ")
        difference = re.search(rf"at most ({NUMBER}) over 7 keys", row)[1]
        [metric, _] = (metric.value for metric in page.metric)
        assert difference == metric, "the same largest difference as the page's metric"
        assert float(difference) < 1e-6
        largest = np.argsort(-weights, kind="stable")[:3]
        named = re.findall(rf"('[^']*') ({NUMBER})", row.split("Largest weights: ")[1])
        assert [name for name, _ in named] == [repr(tokens[key]) for key in largest]
        assert all(close_to_two_figures(float(value), weights[key])
                   for (_, value), key in zip(named, largest, strict=True))
    assert chart_texts(page) != said_before


def test_the_mixing_charts_say_the_ratios_ends_and_the_largest_contributions_as_the_core_has_them(bundled):
    from attention.dissect.mixing import mixing

    tokens = tokens_of(bundled)
    for page, layer in block_at_layers(2, 5):
        mixed = mixing(bundled, encode(bundled, TEXT), layer)
        ratio, contributions = mixed.mixing_ratio[0], mixed.contributions[0]  # (T,), (T, T)
        said = said_starting(page, f"Mixing ratio per token, layer {layer}: ")
        high, low = int(np.argmax(ratio)), int(np.argmin(ratio))
        found = re.search(rf"highest {re.escape(repr(tokens[high]))} ({NUMBER}), lowest {re.escape(repr(tokens[low]))} "
                          rf"({NUMBER}), mean ({NUMBER})\.$", said)
        assert found, said
        for value, expected in zip(found.groups(), (ratio[high], ratio[low], ratio.mean()), strict=True):
            assert close_to_two_figures(float(value), float(expected))

        said = said_starting(page, f"What token j wrote into token i, layer {layer}, 7 tokens (‖z̃_ij‖). Largest from "
                                   "another token: ")
        others = np.where(np.eye(len(tokens), dtype=bool), -1.0, contributions)
        order = [divmod(int(index), len(tokens)) for index in np.argsort(-others, axis=None, kind="stable")[:3]]
        named = re.findall(rf"('[^']*') ← ('[^']*') ({NUMBER})", said)
        assert [(row, column) for row, column, _ in named] == [(repr(tokens[i]), repr(tokens[j])) for i, j in order]
        assert all(close_to_two_figures(float(value), contributions[i, j])
                   for (_, _, value), (i, j) in zip(named, order, strict=True))
        own = int(np.argmax(np.diag(contributions)))
        found = re.search(rf"with its residual: {re.escape(repr(tokens[own]))} ({NUMBER})\.$", said)
        assert found and close_to_two_figures(float(found[1]), contributions[own, own]), said


def test_each_steps_bars_say_their_longest_and_shortest_token_as_the_core_has_them(bundled):
    from attention.dissect.block import build_block

    page = open_page(view="block", layer="1")
    assert_healthy(page)
    tokens = tokens_of(bundled)
    block = build_block(bundled, encode(bundled, TEXT), 1)
    for step in block.steps:
        norms = np.linalg.norm(step.value[0], axis=-1)  # (T,) as the step's bars draw them
        longest, shortest = int(np.argmax(norms)), int(np.argmin(norms))
        found = re.fullmatch(rf"‖{re.escape(step.name)}‖ per token: longest {re.escape(repr(tokens[longest]))} "
                             rf"({NUMBER}), shortest {re.escape(repr(tokens[shortest]))} ({NUMBER})\.",
                             said_starting(page, f"‖{step.name}‖ per token: "))
        assert found, step.name
        assert close_to_two_figures(float(found[1]), norms[longest])
        assert close_to_two_figures(float(found[2]), norms[shortest])
