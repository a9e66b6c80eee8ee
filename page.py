"""The page of Attention Anatomy: BERT's self-attention dissected step by step, on live data.

Thin on purpose: page config, sidebar controls -> cached computation -> one view.
The numbers come from attention/ (no Streamlit there); the drawing from components/.
"""

from __future__ import annotations

import dataclasses
import functools
import logging

import streamlit as st

from components.page import first_paint
from components.page.reconnect import rerun_page_on_reconnect

# Drawn before torch and transformers are imported: a new server process shows the page's frame and what loads
# at once, instead of a blank page for as long as the imports and the model take (components/page/first_paint.py).
link = {key: st.query_params.get_all(key) for key in st.query_params}
first_paint.frame(link)
rerun_page_on_reconnect()
loading = first_paint.loading(link)

# The sidebar's controls come before torch too: what the page offers and the class a link joins are read without it
# (components/caches/offered.py, stores.py), so that a reader can pick a view and type a text while the model loads.
from components.caches import offered
from components.classroom import classroom
from components.page import controls, page_state, text_boxes, welcome
from components.page.view_list import LABELS, view_named

names = offered.model_names()
welcome.first_visit(link)
query, class_notices = classroom.start(link, names)
url_notices = controls.start(query, names)
classroom.teacher_panel()
view = controls.view_select(LABELS)
shown = view_named(view)  # the view's record: what the page draws around it
text, text_b = text_boxes.text_inputs()
chosen_model = controls.model_select(names)
present = controls.presentation_toggle()
controls.colour_blind_toggle()
classroom.start_button()

from attention.models.loading import ModelLoadError
from attention.stages.settings import ModelShape
from components import views
from components.caches import chart_memos, models, past_attention, texts, work
from components.charts.icon import page_icon
from components.page import chart_keys, model_download, model_loading, viewport
from components.page.lesson_steps import step_outlines
from components.page.page_head import model_line, page_head
from components.page.shapes_panel import BLOCK_LETTERS, block_steps, letters, shapes_panel
from components.page.tokens import token_chips, unknown_note
from components.server import process
from components.views.parts.own_fragment import own_fragment

VIEW_SHARE = 2 / 3  # of the page's width, for the view; the rest for its controls and the tensor shapes
log = logging.getLogger("attention_anatomy")


def draw(view: str, context: views.ViewContext) -> None:
    try:
        views.render(view, context)
    except Exception:  # a bug must not leave a student facing a stack trace; the log keeps it
        log.exception("drawing the %s view failed for %s", view, page_state.to_query(context.state))
        st.error("This view could not be drawn for these settings. Try another layer, head or text; "
                 "the error was logged on the server.", icon=":material/error:")


def notices(messages: list[str]) -> None:
    """Warnings in one slot of the page, however many (none too). A notice that comes or goes (a link's head out
    of range, dropped at the first move; a class that ended) must not move what follows in the page's tree: a
    chart moved there is mounted anew from its spec, at its inputs' anchor (components/charts/scrub.py), not where
    the reader's last presses took it."""
    with st.container():
        for message in messages:
            st.warning(message, icon=":material/info:")


def second_text(view: str, text_b: str) -> str:
    """What the tokens and shapes read as the second sentence: the compare view runs its two texts
    separately, so for it the text is read alone; every other view reads the text (or pair) as one."""
    return "" if view == "compare" else text_b


@st.fragment
def explore(view: str, model_name: str, text: str, text_b: str, shape: ModelShape, screen: viewport.Viewport) -> None:
    """The attention controls, the view (sized for the reader's screen) and the shapes panel: moving a control
    reruns only this. At most work.PAGE_SLOTS of them are drawn at once, server-wide."""
    with work.page_work():
        _explore(view, model_name, text, text_b, shape, screen)
    classroom.watch()  # in the fragment: the teacher's move of a control of the view reruns it alone


def _explore(view: str, model_name: str, text: str, text_b: str, shape: ModelShape, screen: viewport.Viewport
             ) -> None:
    controls.rerun_page_if_requested()
    chart_memos.new_run()
    record = view_named(view)
    if record.whole_model:  # no attention control applies to it: the view takes the whole width
        main, share = st.container(), 1.0
        # Its own controls are drawn after the link is written: the link takes what the reader has just moved
        state, range_notices = controls.pending_state(), []
    else:
        main, side = st.columns([VIEW_SHARE, 1 - VIEW_SHARE], gap="medium")
        share = VIEW_SHARE
        with side:
            state, range_notices = controls.attention_controls(shape, view, record.on_chart,
                                                                 record.layer_and_head_only)
        if record.reads_query and text.strip():
            tokens = texts.encoding(model_name, text, second_text(view, text_b)).tokens[0]
            state, query_notices = controls.fit_query(state, len(tokens))
            range_notices = [*range_notices, *query_notices]
    classroom.sync(state)
    with main:
        classroom.status()
        notices(range_notices)
        if not text.strip():
            st.info("Type a sentence in the sidebar (or pick an example) to see its attention.")
            return
        context = views.ViewContext(model_name=model_name, text=text, text_b=text_b, state=state, shape=shape,
                                    width=screen.column_px(share), stacked=screen.stacked,
                                    height=screen.height_px)
        if record.own_run:
            view_alone(view, context)
        else:
            draw(view, context)
    if record.shapes:
        with side:
            outline = functools.partial(context.outline, text_b=second_text(view, text_b))
            per_step = step_outlines(outline, state.head, shape.num_heads) if record.steps else None
            outlined = outline()
            shapes_panel(outlined.steps, letters(shape, outlined.settings), expanded=not state.present,
                         per_step=per_step, step=state.step, shape=shape)
    elif record.block_shapes:
        with side:
            try:
                block = past_attention.block(model_name, text, text_b, state.layer)  # the view's own, cached
            except Exception:  # the view has said it could not be drawn; the panel is left out, the log keeps why
                log.exception("the block's shapes failed for %s", page_state.to_query(state))
            else:
                shapes_panel(block_steps(block), BLOCK_LETTERS, expanded=not state.present, shape=shape)


def run_ends() -> None:
    """What every run of the page does last: mount the page's own scripts (the one that measures the page, and the
    one that sends a chart input's key at once); then, the first run only, freeze what it imported and built, which
    lives as long as the process (components/server/process.py)."""
    viewport.measure()
    chart_keys.listen()
    process.freeze_long_lived()


@own_fragment(linked=True)
def view_alone(view: str, context: views.ViewContext) -> None:
    """A view whose own controls change nothing beside it (the lesson's step): moving one reruns the view alone,
    not the attention controls and the shapes panel, and writes the link (and the class's view) again. A run of it
    alone is called with the context of the fragment's last run, so its state is taken anew: the controls as they
    stand, the view's own just moved among them."""
    draw(view, dataclasses.replace(context, state=controls.pending_state()))


process.configure()  # torch's threads, glibc's pools, Arrow's pool: once per server process
st.set_page_config(page_icon=page_icon())  # added to first_paint.frame's settings
screen = viewport.current()
try:
    model_name = model_download.usable_model(chosen_model)  # the bundled model while a Hub model downloads
    model_name = model_loading.usable_model(model_name)  # and while a model takes long to load
    loaded = models.model(model_name)
except ModelLoadError as error:
    first_paint.loaded(loading)
    model_download.fall_back(chosen_model, error)
first_paint.loaded(loading)
family = loaded.family
pair_notices = []
# The sentence pair is BERT's (segment ids, [SEP] between); the compare view runs its two texts apart, any model.
if text_b.strip() and not family.reads_pairs and view != "compare":
    pair_notices.append(f"{family.label} reads one text, so the second sentence is left out here: sentence pairs "
                        "(A [SEP] B, with segment ids) are BERT's.")
    text_b = ""

# On a projector the model's line gives way to the charts: the sidebar, closed there, names the model too.
model_caption = model_line(model_name, loaded.shape, family.label, family.reads, shown.numbers_from,
                           loaded.provenance)
page_head(shown.label, shown.own_head_line or ("" if present else model_caption),
          beside=classroom.class_card if present and classroom.teaching() else None, present=present)
notices([*url_notices, *class_notices, *model_download.fallback_notices(chosen_model),
         *model_loading.loading_notices(chosen_model), *pair_notices])
welcome.welcome(model_name, text, controls.current_state(), loaded.shape.num_layers, loaded.shape.num_heads)
classroom.follow()

if shown.standalone:
    chart_memos.new_run()  # a chart with inputs of its own (the counting lab's maps) tells its own moves from others'
    state = controls.pending_state()
    classroom.sync(state)
    classroom.status()
    draw(view, views.ViewContext(model_name=model_name, text=text, text_b=text_b, state=state, shape=loaded.shape,
                                 width=screen.column_px(1), stacked=screen.stacked, height=screen.height_px))
    classroom.watch()
    run_ends()
    st.stop()
if text.strip():
    encoding = texts.encoding(model_name, text, second_text(view, text_b))
    if encoding.dropped_tokens[0]:
        st.warning(f"The text is longer than the {loaded.max_tokens} tokens this page reads: the last "
                   f"{encoding.dropped_tokens[0]} tokens were dropped.", icon=":material/content_cut:")
    if not shown.own_tokens:
        token_chips(list(encoding.tokens[0]), encoding.special_tokens_mask[0].tolist())
        if note := unknown_note(texts.unknown_characters(model_name, text, second_text(view, text_b))):
            st.caption(note)
explore(view, model_name, text, text_b, loaded.shape, screen)
run_ends()
