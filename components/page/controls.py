"""The controls: what to read (the view and the model, in the sidebar above text_boxes.py's texts) and how to look
at it (source, layer, head, head_dim, scaling, τ, mask, window, seed; next to the view). Draws widgets and returns
the choice.

Every widget's key is a query parameter's name. Values live in a shadow copy in the
session as well as in the widgets, because Streamlit forgets a widget's value when the
widget is hidden (the τ slider for other scalings) or when its range changes (the
head slider when the source changes); the shadow brings them back. The page writes the URL
from the shadow (page_state.to_query) after each run.

Not Streamlit's bind="query-params" (1.67), which would write a choice's label instead of its
value (scaling=d_k, view=One head, query=4: an), a toggle as true/false instead of 1/0, drop
a hidden widget's parameter, write `source=` for a choice clicked off, clamp or cut what the
page refuses with a notice, and leave moves to the browser (AppTest sees no URL change).
tests/page/test_url_sync.py pins what this sync keeps.

The attention controls sit in a fragment with the view, so moving one reruns only that part.
A change to a sidebar control requested from inside the fragment (a click on a head in the grid
opens the single-head view) asks for a rerun of the whole page.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from attention.models.model_list import PACKAGED_MODELS
from attention.stages.kv_heads import SharedHeads
from attention.stages.limits import PAGE_SEED, PAGE_TEMPERATURE, PAGE_TEMPERATURE_STEP, PAGE_WINDOW
from attention.stages.mask_kinds import MASKS
from attention.stages.settings import SCALINGS, SOURCE_LABELS, SOURCES, ModelShape, TraceSettings
from components.charts import palettes
from components.page import page_state
from components.page.page_head import model_titles
from components.page.page_state import PageState

SOURCE_HELP = {
    "identity": "Q = K = V = X: the simplified self-attention, scores X·Xᵀ",
    "random": "fresh nn.Linear projections, reproducible from the seed",
    "bert": "the model's own trained weights of the chosen layer",
}
ON_CHART_NAMES = {"temperature": "τ"}  # how a caption names a value picked on the chart, if not by its name
SCALING_LABELS = {"none": "none", "sqrt": "√d_k", "linear": "d_k", "temperature": "τ"}
# Each kind of mask (attention.stages.masks): its word on the control, its name in a sentence, what it lets a query see.
MASK_WORDS = {"none": ("padding only", "no mask but its padding", "every token looks both ways"),
              "causal": ("causal", "the causal mask", "a token looks back only, never ahead"),
              "window": ("window", "a window of {window} tokens back", "a token looks at itself and the window's "
                                                                       "tokens before it")}
MASK_HELP = ("Added to the scaled scores before the softmax: −∞ where a query may not look, so that its weight there "
             "is 0. " + " · ".join(f"{word}: {sees}" for word, _, sees in MASK_WORDS.values()))
_SHADOW = "_page_state"
_FIRST_RUN = "_first_run"
_RERUN_PAGE = "_rerun_page"
_HELD_NOTICES = "_held_notices"  # {name: (notices, {control: value})}: see held()
# Drawn outside the view's fragment.
SIDEBAR_PARAMS = frozenset({"view", "text", "text_b", "model", "present", "colour_blind"})
# Where each kind of widget takes its initial value (the rest take value=).
_DEFAULT_ARGUMENT = {"radio": "index", "selectbox": "index", "segmented_control": "default"}


def start(query: dict[str, list[str]], models: tuple[str, ...]) -> list[str]:
    """On a session's first run, take the state from the URL; return the notices about it."""
    st.session_state.pop(_RERUN_PAGE, None)  # this run is the whole page
    palettes.read_palette_with(reader_palette)  # the charts read the reader's palette from here (idempotent)
    st.session_state[_FIRST_RUN] = _SHADOW not in st.session_state
    if st.session_state[_FIRST_RUN]:
        state, notices = page_state.from_query(query, models)
        st.session_state[_SHADOW] = dataclasses.asdict(state)
        st.session_state["_url_notices"] = notices
    return st.session_state["_url_notices"]


def held(name: str, notices: list[str], values: dict) -> list[str]:
    """Notices of values the page set by itself (a link's layer out of range, a query past the text's end),
    kept and returned again while the controls still hold the values set (values: {control: value}), under
    name. A rerun the page makes without the reader (components/page/viewport.py's, once the window is measured)
    found the values in range and dropped the notice before anyone could read it."""
    kept = st.session_state.setdefault(_HELD_NOTICES, {})
    if notices:
        kept[name] = (notices, values)
        return notices
    shown, set_to = kept.get(name, ([], {}))
    if any(st.session_state[_SHADOW].get(control) != value for control, value in set_to.items()):
        kept.pop(name, None)
        return []
    return shown


def current_state() -> PageState:
    return PageState(**st.session_state[_SHADOW])


def pending_state() -> PageState:
    """The state as the widgets hold it at the start of a run, before they are drawn again: the shadow with what
    the reader has just moved. For a view that draws its own controls after the page has written its link and
    sent it to the class (the induction lab's), which the shadow alone would leave one move behind."""
    return PageState(**{**st.session_state[_SHADOW], **_widget_values()})


def request(**values) -> None:
    """Change controls from code: takes effect when the widgets are next drawn (after a rerun)."""
    st.session_state[_SHADOW].update(values)
    for key in values:
        st.session_state.pop(key, None)
    if SIDEBAR_PARAMS & values.keys():
        rerun_whole_page()


def rerun_whole_page() -> None:
    """From a callback of a widget in the view's fragment: the run it starts draws the whole page, not only the
    fragment (what changed is drawn outside it)."""
    st.session_state[_RERUN_PAGE] = True


def rerun_page_if_requested() -> None:
    """In the view's fragment: a request for a sidebar control needs the whole page to rerun."""
    if st.session_state.pop(_RERUN_PAGE, False):
        st.rerun()


def view_select(labels: dict[str, str]) -> str:
    return bound_widget(st.sidebar.radio, "view", "View", options=list(labels), format_func=labels.get)


def model_select(models: tuple[str, ...]) -> str:
    """The model selector, each checkpoint folder by its name and its whole path in the help (page_head)."""
    titles = model_titles(models)
    folders = "".join(f" {title} is the folder `{name}`." for name, title in titles.items() if title != name)
    packaged = "".join(f" {name} works offline too, installed with the page; its load takes 15 s to a minute."
                       for name in models if name in PACKAGED_MODELS)
    return bound_widget(st.sidebar.selectbox, "model", "Model", options=models, format_func=titles.get,
                        on_change=request, kwargs={"off": ()},  # heads switched off belong to one model's heads
                        help="The bundled all-MiniLM-L6-v2 works offline; Hub models download on first use."
                             + packaged + folders)


def presentation_toggle() -> bool:
    return bound_widget(st.sidebar.toggle, "present", "Presentation mode",
                        help="For a projector: chart text at 14 px or more, charts as large as their column allows, "
                             "the tensor shapes folded. A link keeps it as present=1.")


def colour_blind_toggle() -> bool:
    """Whether the charts are drawn in the colours for colour-blind readers (palettes.COLOUR_BLIND)."""
    return bound_widget(st.sidebar.toggle, "colour_blind", "Colours for colour-blind readers",
                        help="Weights in cividis (light yellow to dark blue) and signed values in orange below zero "
                             "and blue above: scales that stay readable with any common colour vision deficiency. "
                             "A link keeps it as colour_blind=1.")


def reader_palette() -> str:
    """The palette this session's reader picked (colour_blind_toggle), which palettes.palette_in_force reads;
    the standard one outside a session's run."""
    shadow = st.session_state.get(_SHADOW) or {}
    return palettes.COLOUR_BLIND if shadow.get("colour_blind") else palettes.STANDARD


def attention_controls(shape: ModelShape, view: str, on_chart: tuple[str, ...] = (), layer_and_head_only: bool = False
                       ) -> tuple[PageState, list[str]]:
    """Source, layer, head, head_dim, scaling, τ, mask, window and seed, within the ranges this model allows; layer
    and head have no slider when the view's chart picks them (on_chart). layer_and_head_only: the view runs the layer
    as the model does, and reads only those two: the layer's slider is drawn here, the head's by the view
    (model_head_slider); the others keep their values for the link and the other views.

    Drawn in whatever container is current (the side column next to the view).
    """
    shadow = st.session_state[_SHADOW]
    pending = PageState(**{**shadow, **_widget_values()})
    if layer_and_head_only:
        return _layer_and_head(shape, pending)
    fitted, notices = _fit_to_model(pending, shape)

    source = bound_widget(st.segmented_control, "source", "Projection source", options=SOURCES,
                          format_func=SOURCE_LABELS.get, wrap=True,
                          help=" · ".join(f"{SOURCE_LABELS[k]}: {v}" for k, v in SOURCE_HELP.items()))
    if source == "random":
        head_dim = bound_widget(st.slider, "head_dim", "head_dim (d)", min_value=1, max_value=shape.hidden_size,
                           help=f"Heads are {shape.hidden_size} // d; their concatenation has width heads·d.")
    else:
        fixed = shape.hidden_size if source == "identity" else shape.head_size
        why = "no projection, so d = C" if source == "identity" else (
            f"the trained weights fix it: {shape.hidden_size} / {shape.num_heads} heads")
        st.caption(f"head_dim (d) = {fixed}: {why}.")
        head_dim = shadow["head_dim"]
    # What the view's chart picks itself, in the browser, has no slider here.
    layer = fitted.layer if "layer" in on_chart else _range_slider("layer", "Layer", shape.num_layers)
    num_heads = TraceSettings(source=source, head_dim=head_dim).num_heads(shape)
    head = fitted.head if "head" in on_chart else _range_slider("head", "Head", num_heads)
    sharing = SharedHeads.of(shape, TraceSettings(source=source, head_dim=head_dim))
    if sharing.shared and "head" not in on_chart:  # under its slider; a view whose chart picks the head names them
        st.caption(shared_heads_line(sharing, head))
    if on_chart:
        # Named, not valued: the chart's own inputs show their values, and a chart that reruns in a fragment of its
        # own (the all-heads grid's layer) leaves this column as it was.
        picked = " and ".join(ON_CHART_NAMES.get(name, name) for name in on_chart)
        picked = picked.capitalize() if picked.isascii() else picked  # "Τ" is not how τ starts a sentence
        st.caption(f"{picked}: pick {'them' if len(on_chart) > 1 else 'it'} on the chart, "
                   "where the picture switches at once.")
    scaling = bound_widget(st.segmented_control, "scaling", "Scaling: scores divided by", options=SCALINGS,
                      format_func=SCALING_LABELS.get, wrap=True)
    temperature = shadow["temperature"]
    # The lab compares every scaling with this τ, on a chart whose own input moves it.
    if (scaling == "temperature" or view == "lab") and "temperature" not in on_chart:
        temperature = bound_widget(st.slider, "temperature", "τ", min_value=PAGE_TEMPERATURE.low,
                                   max_value=PAGE_TEMPERATURE.high, step=PAGE_TEMPERATURE_STEP)
    mask, window = mask_controls(shape)
    seed = shadow["seed"]
    if source == "random":
        seed = bound_widget(st.number_input, "seed", "Seed", min_value=PAGE_SEED.low, max_value=PAGE_SEED.high,
                            step=1)
    state = dataclasses.replace(
        fitted, source=source, layer=layer, head=head, head_dim=head_dim,
        scaling=scaling, temperature=temperature, mask=mask, window=window, seed=seed,
    )
    return state, held("range", notices, {"layer": fitted.layer, "head": fitted.head, "head_dim": fitted.head_dim})


def _layer_and_head(shape: ModelShape, pending: PageState) -> tuple[PageState, list[str]]:
    """The layer slider alone: the head, brought among the model's own heads (its trained projections'), has its
    slider in the view, beside what reads it (model_head_slider)."""
    fitted, notices = _fit_to_model(dataclasses.replace(pending, source="bert"), shape)
    layer = _range_slider("layer", "Layer", shape.num_layers)
    st.caption("Head: picked below, in the part of the view that reads one.")
    state = dataclasses.replace(fitted, source=pending.source, layer=layer)
    return state, held("range", notices, {"layer": fitted.layer, "head": fitted.head, "head_dim": fitted.head_dim})


def model_head_slider(shape: ModelShape) -> int:
    """The head slider over the model's own heads, drawn by a view whose side column has none (layer_and_head_only):
    in a fragment of the view's, a move of it reruns that part alone."""
    trained = TraceSettings(source="bert")
    head = _range_slider("head", "Head", trained.num_heads(shape))
    if (sharing := SharedHeads.of(shape, trained)).shared:
        st.caption(shared_heads_line(sharing, head))
    return head


def _fit_to_model(pending: PageState, shape: ModelShape) -> tuple[PageState, list[str]]:
    """Layer, head and head_dim brought inside what this model and source allow, in the shadow too: their sliders
    are drawn from it."""
    fitted, notices = page_state.fit_to_model(pending, shape)
    st.session_state[_SHADOW].update({k: getattr(fitted, k) for k in ("layer", "head", "head_dim")})
    for key in ("layer", "head", "head_dim"):
        st.session_state.pop(key, None)  # taken again from the shadow, now in range
    return fitted, notices


def shared_heads_line(sharing: SharedHeads, head: int) -> str:
    """"Head 4 reads key/value head 1, shared by heads 3, 4 and 5.": under grouped-query attention, who else reads
    the keys and values the chosen head reads."""
    return (f"Head {head} reads key/value head {sharing.kv_head(head)}, "
            f"shared by heads {heads_named(sharing.sharing(head))}.")


def shared_heads_caption(shape: ModelShape, settings: TraceSettings, head: int) -> None:
    """Under grouped-query attention, shared_heads_line as a caption, drawn by a view whose chart picks the head (the
    side column names them under its own Head slider)."""
    if (sharing := SharedHeads.of(shape, settings)).shared:
        st.caption(shared_heads_line(sharing, head))


def heads_named(heads) -> str:
    """Consecutive head numbers as a sentence names them: "3, 4 and 5", or "0 to 31" for more than four."""
    heads = list(heads)
    if len(heads) > 4:
        return f"{heads[0]} to {heads[-1]}"
    return f"{', '.join(map(str, heads[:-1]))} and {heads[-1]}" if len(heads) > 1 else str(heads[0])


def mask_controls(shape: ModelShape) -> tuple[str, int]:
    """The mask a query's keys go through, and the window's size (its slider drawn for the window mask only).
    Any mask but the one the model was trained with is a what-if, and the caption under the control says so."""
    own = MASK_WORDS[shape.own_mask]
    mask = bound_widget(st.segmented_control, "mask", "Mask: the keys a query may look at", options=MASKS,
                        format_func=lambda name: f"model's own ({own[0]})" if name == "model" else name, wrap=True,
                        help=MASK_HELP)
    window = st.session_state[_SHADOW]["window"]
    if mask == "window":
        window = bound_widget(st.slider, "window", "Window: tokens a query sees before itself",
                              min_value=PAGE_WINDOW.low, max_value=PAGE_WINDOW.high)
    kind = TraceSettings(mask=mask).mask_kind(shape)
    if kind != shape.own_mask:
        _, chosen, sees = MASK_WORDS[kind]
        st.caption(f"What-if: this model was trained with {own[1]} ({own[2]}); its heads are shown here under "
                   f"{chosen.format(window=window)} ({sees}), numbers the model itself never computes.")
    return mask, window


def fit_query(state: PageState, tokens: int) -> tuple[PageState, list[str]]:
    """For a view that reads one query token: the state with its query inside the text's tokens, and the notice
    of a query moved (page_state.fit_to_text). Made with the rest of the state, before anything reads it: the
    class's sync sends the state to the students, or compares it with the teacher's view a follower was left in."""
    fitted, notices = page_state.fit_to_text(state, tokens)
    if fitted.query != state.query:
        request(query=fitted.query)
    return fitted, held("query", notices, {"query": fitted.query})


def stage_select(offered: tuple[str, ...], buttons: dict[str, str]) -> str:
    """The one-head view's stage, one of offered (each drawn as buttons' word). A stage this head does not offer
    (Rotation, from a link or a Llama's head, on a head that does not turn by position) falls back to the first,
    with a caption that says so."""
    if st.session_state[_SHADOW]["head_stage"] not in offered:
        request(head_stage=offered[0])
        st.caption("This head does not turn its q and k by position, so it has no Rotation stage: showing the "
                   "weights.")
    return bound_widget(st.segmented_control, "head_stage", "Stage", options=offered, required=True,
                        format_func=lambda stage: buttons.get(stage, stage), label_visibility="collapsed", wrap=True)


def weight_scale_select() -> str:
    """Where the weights' colours end (page_state.WEIGHT_SCALES), for a view that shows several heads' weights."""
    return bound_widget(st.segmented_control, "weight_scale", "Colours of the weights run from 0 to",
                        options=list(page_state.WEIGHT_SCALES), wrap=True,
                        format_func=lambda name: page_state.WEIGHT_SCALES[name][0],
                        help="Each head's own largest weight shows every head's pattern in full colour, but the "
                             "same colour then means different weights in different heads. The layer's largest "
                             "weight, or 1, gives every head one scale, so that heads can be compared by colour.")


def value_norm_toggle() -> bool:
    """Whether the weights are drawn weighted by value norm, as AttentionViz does: each α_ij times ‖f(x_j)‖, the
    length of what key j hands on, and each row rescaled to sum to 1."""
    return bound_widget(st.toggle, "value_norm", "Weight by value norm",
                        help="A weight on a key whose value is short moves little (Kobayashi et al. 2020). On: "
                             "each weight α is multiplied by ‖f(x)‖, the length of what its key hands on through "
                             "W_V and W_O, and each row is rescaled to sum to 1 again.")


def words_toggle(where=st) -> bool:
    """Whether a view that shows weights merges each word's pieces (words=1 in a link), drawn in where."""
    return bound_widget(where.toggle, "words", "Whole words",
                        help="Read words, not pieces: a word the tokenizer split (photos ##yn ##thesis, ␣m at) "
                             "is one row and one column. Attention to a word is the sum over its pieces, attention "
                             "from it the mean of its pieces' rows (Clark et al. 2019), so rows still sum to 1. "
                             "[CLS] and [SEP] stay words of their own.")


def _range_slider(key: str, label: str, count: int) -> int:
    if count == 1:
        st.caption(f"{label}: 0 (the only one)")
        st.session_state[_SHADOW][key] = 0
        return 0
    return bound_widget(st.slider, key, f"{label} (0 to {count - 1})", min_value=0, max_value=count - 1)


def bound_widget(draw, key: str, label: str, **kwargs):
    """Draw a widget whose value survives being hidden or re-created; keep the shadow in step.

    On a session's first run the shadow (from the URL) is only the widget's default: a browser
    that reconnects to a new session sends the values its widgets hold, and those win.
    """
    shadow = st.session_state[_SHADOW]
    if st.session_state.get(key) is None:
        if st.session_state[_FIRST_RUN]:
            kwargs.update(_default(draw.__name__, shadow[key], kwargs.get("options")))
        else:
            st.session_state[key] = shadow[key]
    value = draw(label, key=key, **kwargs)
    if value is None:  # a segmented control clicked off: keep the last choice
        value = shadow[key]
    shadow[key] = value
    return value


def _default(widget: str, value, options) -> dict:
    argument = _DEFAULT_ARGUMENT.get(widget, "value")
    return {argument: list(options).index(value) if argument == "index" else value}


def keep_the_servers_values() -> None:
    """From the callback of a run that no reader's move started (a script's ask, sent once the page is still): each
    widget whose value the browser still holds from before the server changed it (the lesson's step after a Next,
    seen under load) takes the server's again, where the run would have read it as the reader's move back."""
    shadow = st.session_state[_SHADOW]
    for key, value in _widget_values().items():
        if key in shadow and value != shadow[key]:
            st.session_state[key] = shadow[key]


def _widget_values() -> dict:
    return {k: st.session_state[k] for k in page_state.PARAMS if k in st.session_state and
            st.session_state[k] is not None}
