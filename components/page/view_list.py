"""Every view of the page, one record each: its name, its label and what the page does around it.

The one list the link parser (page_state), the view selector, the page's frame (page.py) and the views' modules
(components/views/<name>.py, imported only when shown) follow. A new view is its module and one record here.
Plain data, no Streamlit and no torch: the page reads it before either is imported.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class View:
    """One view of the page. The flags say what the page draws around it; the defaults are a view of one head of
    the sidebar's text (tests/page/test_view_list.py holds the flags consistent with each other and with the page)."""

    # The link's view=<name>, and the module that draws it: components/views/<name>.py, render(context).
    name: str
    # The selector's label, and the title above the view.
    label: str
    # It trains its own toy model and reads nothing of the text or the trace: the page draws it alone, across the
    # whole width, with no token chips, attention controls or shapes panel.
    standalone: bool = False
    # PageState fields the view's chart picks with inputs of its own, switched in the browser
    # (components/charts/scrub.py): the attention controls draw no slider for them.
    on_chart: tuple[str, ...] = ()
    # Its own controls change nothing beside it (the lesson's step): a move of one reruns the view alone.
    own_run: bool = False
    # It reads one query token of the text: the page fits the query inside the text's tokens
    # (controls.fit_query) before the view or the class sees the state.
    reads_query: bool = False
    # The shapes panel describes it: one head's computation at the side column's layer and settings. Not the
    # compare view (two texts, run apart) nor the switch view (the masked-word predictions of the whole model).
    shapes: bool = False
    # The shapes panel lists the side column's layer as the block runs it (attention/dissect/block.py: the residual
    # stream in, the norms, every head through W_O, the adds, the MLP), not one head's computation.
    block_shapes: bool = False
    # Its steps compute with settings of their own (the lesson's step 2: the identity, unscaled): the shapes panel
    # lists each step's and shows the one of the step shown (components/page/lesson_steps.py). Needs shapes.
    steps: bool = False
    # It shows the tokens of the sentences it works on itself: the page's chips (the sidebar's text, read as one
    # pair) would show something else.
    own_tokens: bool = False
    # It runs the whole model as trained: the projection source, the layer, the head and the scaling beside the
    # other views do not apply and are not drawn, and the view takes the whole width.
    whole_model: bool = False
    # It runs the side column's layer as the model runs it (its own projections, √d_k and mask): of the attention
    # controls only the layer and the head apply, and only they are drawn: the layer beside the view, the head by the
    # view itself, in the part that reads one (a move of it reruns that part alone), among the model's own heads.
    layer_and_head_only: bool = False
    # The line under its title where the page's own line (its model, "this text") is not true (page.py draws it).
    own_head_line: str | None = None
    # What its numbers are computed from, as the page's line under the title says.
    numbers_from: str = "this text"
    # What it is for, in a line: the lesson's last step lists every other view with it.
    purpose: str = ""


VIEWS = (
    View("head", "One head", on_chart=("layer", "head"), shapes=True,
         purpose="every stage of one head (weights, scores, context, lines) at any layer and head, picked on the "
                 "chart"),
    View("heads", "All heads of a layer", on_chart=("layer",), shapes=True,
         purpose="every head of a layer side by side, to find those that look at the next token, at a sink, or all "
                 "over"),
    View("neuron", "Neuron view", on_chart=("head",), reads_query=True, shapes=True,
         purpose="how one query token's row of attention is made, number by number: q, each k_j, their products and "
                 "sums"),
    View("lesson", "Guided lesson", own_run=True, shapes=True, steps=True),
    View("lab", "Scaling lab", on_chart=("temperature",), shapes=True,
         purpose="why the scores are divided by √d_k, measured on random vectors and on this model's heads"),
    View("compare", "Two texts side by side", on_chart=("layer", "head"),
         purpose="two texts, one head on each, and where the attention of the words they share differs"),
    View("counting", "Counting letters: train a head", standalone=True,
         own_head_line="A toy trained here from random weights: one attention head counting letters in windows of "
                       "random letters. It reads neither the sidebar's text nor its model.",
         purpose="train one attention head yourself, in seconds, and watch where it learns to look"),
    # Its own sentence, or each text alone; the model with heads switched off.
    View("switch", "Switching heads off", own_tokens=True, whole_model=True,
         purpose="switch heads off and see what each one carries of the model's own job"),
    View("induction", "Watch an induction head form", standalone=True,
         own_head_line="Toys trained here from random weights: two attention-only transformers of one and two "
                       "layers, on random tokens that repeat. They read neither the sidebar's text nor its model.",
         purpose="two tiny transformers trained on repeating tokens, and the step an induction head forms"),
    # Every head as it is, over a corpus or the text.
    View("atlas", "Head atlas: what every head does", whole_model=True,
         numbers_from="the page's corpus of sentences, or this text alone, as chosen under the title",
         purpose="what every head of the model does, in a few numbers each, and which heads attend alike"),
    # Past the attention layer: the side column's layer as the model runs it, and the whole model's head and cache.
    View("block", "The whole block", block_shapes=True, layer_and_head_only=True,
         purpose="the whole layer around the heads: the norms, the MLP and the adds, and how much each token's "
                 "vector takes from the others"),
    View("lens", "Next token, layer by layer", whole_model=True,
         purpose="the next token the model would guess at every layer, and the layer where its final guess comes "
                 "first"),
    View("generate", "Generation with a KV cache", whole_model=True,
         purpose="the model writing one token at a time, its key/value cache one row longer each step"),
)
VIEW_NAMES = tuple(view.name for view in VIEWS)
LABELS = {view.name: view.label for view in VIEWS}  # the view selector's options, in the list's order
_BY_NAME = {view.name: view for view in VIEWS}


def view_named(name: str) -> View:
    """The record of the view with this name (one of VIEW_NAMES: the link parser and the selector allow no other)."""
    return _BY_NAME[name]
