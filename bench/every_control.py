"""Every control of every view, pressed as a student would, each against the floor (python -m bench --only controls).

The views group times one control per view, the one a student moves most. A student does not keep to it: this group
opens every view, finds the controls of its main area the page draws (Streamlit's sliders, segmented controls, pills,
toggles, select boxes, number inputs and buttons, by their `.st-key-<key>` class, and the charts' own inputs), and
makes a case of each: three presses, each timed from the key to the settled page (the rerun that follows a chart's
own input included), each followed by the floor's move. A new text typed is a case of every view that reads the text.
Then the same presses once more, back over what the first drew (the "again" column): the first presses include
what a control computes the first time (a new head's trace, another step's numbers), these the page's repaint alone.

What the page finds is what is measured: a control added to a view joins the table without a line here. A few are
left out, each for a reason a student would accept (LEFT_OUT, and a range of one value: ONE_VALUE). Prints nothing
itself; bench/__main__.py reports.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from urllib.parse import urlencode

from bench import chart_input_floor, page_speed, past_attention
from bench.page_speed import CHART_DRAWN, Case, Move
from components.page.lesson_steps import lesson_for
from components.page.view_list import VIEWS
from harness.browser import LESSON_STEADY, new_page, wait_until_settled

GROUP = "controls"
TARGET = 2.0  # the settled page within 2× the floor
PRESSES = 3
# Controls whose press starts work a student waits for with a progress bar, never a repaint: left out, with why.
LEFT_OUT = {
    "count_train": "trains the counting lab's model (seconds, with a progress bar)",
    "induction_train": "trains the induction lab's model (seconds, with a progress bar)",
    "switch_load_": "loads another model (seconds, with a progress bar)",
    "lesson_prev_foot_": "the lesson's Previous under the step: the same press as Previous above it",
    "lesson_next_foot_": "the lesson's Next under the step: the same press as Next above it",
    "block_to_head": "leaves the block for the one-head view, the view switched to: the head cases time that view",
    "switch_reset": "switches every head back on: on a page with none off it changes nothing to time (the views "
                    "group times the head toggles themselves)",
}
ONE_VALUE = "a range of one value (the identity source's one head): no press moves it"
# A new text is computed anew: its case is against that computation's bare time plus the floor. The bundled model's
# forward by default; the decoder views run the GPT-2 of the bundled model's shape, the generation view its 8 tokens.
NEW_TEXT_REFERENCES = {"lens": past_attention.FORWARD_REFERENCE, "generate": past_attention.GENERATE_REFERENCE}
# What shows that a view has drawn: its chart, a table, or a notice that it draws none (the switch view on a model
# with no masked-word head offers its load button).
VIEW_DRAWN = (f"{CHART_DRAWN}, [data-testid='stMain'] .aa-table, "
              "[data-testid='stMain'] [data-testid='stAlert']")
# A case's page is ready once a chart shown is drawn: the lesson draws its neighbouring steps' charts hidden, and the
# first chart in the page's order may be one of them.
CASE_READY = f"{CHART_DRAWN} >> visible=true"
# Views whose controls a Llama changes, timed again on the Llama of the bundled model's shape (their cases named
# "head on a Llama: …", each button group pressed at its last option): the one-head view's stages (the queries and
# keys turned by position), the lesson's rotary and shared-heads steps (it opens at the rotary one, Previous and Next
# move on to the shared one), and generation, whose StreamingLLM reads a Llama's prompt a token at a time (its keys
# turn by their place in the cache).
LLAMA_VIEWS = ("head", "lesson", "generate")
ON_A_LLAMA = " on a Llama"
# The neuron view once more on the identity source, whose head is as wide as the model: its chart has an input the
# trained head's has not, the window of dimensions drawn (components/charts/neuron_chart.py's Window).
ON_IDENTITY = " on the identity source"
# Keys of controls that are not the view's: the class's and the page's frame.
NOT_THE_VIEWS = ("quiz_", "class_", "teach")

# Each control the page draws, as the browser sees it: its key, its kind (a Streamlit test id), and for a range its
# value and bounds, so that its presses move it away from an end. The charts' own inputs are found by their name.
_FIND_CONTROLS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const kinds = ['stSlider', 'stButtonGroup', 'stCheckbox', 'stSelectbox', 'stNumberInput', 'stButton'];
  const found = [];
  for (const element of main.querySelectorAll('[data-testid="stElementContainer"][class*="st-key-"]')) {
    if (!element.checkVisibility()) continue;  // the lesson's neighbouring steps, drawn hidden
    const key = [...element.classList].find(name => name.startsWith('st-key-')).slice(7);
    const kind = kinds.find(id => element.querySelector(`[data-testid="${id}"]`));
    if (!kind) continue;
    const range = element.querySelector('input[type="range"]');
    found.push({key, kind, value: range ? +range.value : null, min: range ? +range.min : null,
                max: range ? +range.max : null});
  }
  for (const input of main.querySelectorAll('.vega-bindings input[type="range"]')) {
    found.push({key: input.name, kind: 'chart', value: +input.value, min: +input.min, max: +input.max});
  }
  return found;
}"""


@dataclass(frozen=True)
class Control:
    key: str
    kind: str  # a Streamlit test id, or "chart" for a chart's own input
    value: float | None = None  # a range's, when found
    max: float | None = None
    min: float | None = None

    @property
    def fixed(self) -> bool:
        """A range of one value (the identity source's one head): no press moves it."""
        return self.max is not None and self.min is not None and self.max <= self.min


# A key's opposite: a control's presses made again, mirrored, go back over the values the first presses drew.
OPPOSITE = {"ArrowRight": "ArrowLeft", "ArrowLeft": "ArrowRight", "ArrowUp": "ArrowDown", "ArrowDown": "ArrowUp"}


def presses(control: Control) -> list[str]:
    """Right, left, right: three moves, each to a value not the one before; from the top end, left first."""
    at_top = control.value is not None and control.value >= (control.max or 0)
    return ["ArrowLeft", "ArrowRight", "ArrowLeft"] if at_top else ["ArrowRight", "ArrowLeft", "ArrowRight"]


def moves(control: Control, last: bool = False) -> list[Move]:
    """PRESSES moves of the control by the keyboard, as its kind is moved. last: a button group's last option not
    chosen rather than its first (where a model adds its own, it adds it last: a Llama's Rotation stage)."""
    at = f".st-key-{control.key}"
    if control.kind == "chart":
        return [Move(f'.vega-bindings input[type="range"][name="{control.key}"]', key) for key in presses(control)]
    if control.kind == "stSlider":
        # A range's slider has two thumbs: its first is pressed
        return [Move(f"{at} [data-testid='stSlider'] input[type='range'] >> nth=0", key) for key in presses(control)]
    if control.kind == "stButtonGroup":  # an option not chosen: the first, so that presses go back and forth
        option = f"{at} button[aria-checked='false'], {at} button[aria-pressed='false'] >> nth={-1 if last else 0}"
        return [Move(option, "Space")] * PRESSES
    if control.kind == "stCheckbox":
        return [Move(f"{at} input[type='checkbox']", "Space")] * PRESSES
    if control.kind == "stSelectbox":  # an arrow opens it on the next option (the one before, up), Enter chooses it:
        # down, up, down, where two downs a press ran it to its last option and later presses timed nothing
        return [Move(f"{at} input[role='combobox']", "Enter", setup_keys=(step,))
                for step in ("ArrowDown", "ArrowUp", "ArrowDown")][:PRESSES]
    if control.kind == "stNumberInput":  # an arrow key steps it and sends the new value at once
        return [Move(f"{at} input[type='number']", key) for key in ("ArrowUp", "ArrowDown", "ArrowUp")]
    return [Move(f"{at} button", "Enter")] * PRESSES  # a button: each press is the same click


def moves_again(control: Control, last: bool = False) -> tuple[Move, ...]:
    """The control's moves made once more, after moves(control), back over what they drew: a range or a select box
    mirrored (right, left, right, then left, right, left: the values drawn, each again), a button group or a toggle
    the same (they go back and forth). None for a button: its press moves on (Next, another window, a new seed),
    so that a press again is a first one."""
    if control.kind == "stButton":
        return ()
    return tuple(Move(move.selector, OPPOSITE.get(move.key, move.key),
                      tuple(OPPOSITE.get(key, key) for key in move.setup_keys), move.fill)
                 for move in moves(control, last))


def left_out(key: str) -> str | None:
    """Why the control of this key is not timed, or None."""
    return next((why for stem, why in LEFT_OUT.items() if key.startswith(stem)), None)


def find_controls(browser, base_url: str, query: dict[str, str]) -> list[Control]:
    """The controls of the view query opens, in the page's order, once it has drawn and settled."""
    page = new_page(browser, viewport={"width": 1400, "height": 1000})
    try:
        page.set_default_timeout(page_speed.TIMEOUT_MS)
        page.goto(f"{base_url}/?{urlencode(query)}")
        page.locator(VIEW_DRAWN).filter(visible=True).first.wait_for()
        wait_until_settled(page, quiet_ms=1000, timeout_ms=page_speed.TIMEOUT_MS)
        found = [Control(**control) for control in page.evaluate(_FIND_CONTROLS)]
    finally:
        page.context.close()
    return [control for control in dict((control.key, control) for control in found).values()
            if not control.key.startswith(NOT_THE_VIEWS)]


def view_queries(text: str, switch_model: str, gpt2_model: str, gpt2_text: str,
                 llama_model: str = "") -> dict[str, dict[str, str]]:
    """Each view's link: the bundled model on text, the switch view on a model with a masked-word head, and the
    decoder views (they need a language-model head) on the GPT-2 of the bundled model's shape; the neuron view
    once more on the identity source (ON_IDENTITY); and the views whose controls a Llama changes (LLAMA_VIEWS) once
    more on the Llama of that shape, if there is one, on gpt2_text (the two share their tokenizer)."""
    queries = {view.name: {"view": view.name, "text": text} for view in VIEWS}
    queries["lesson"]["step"] = "6"  # Previous and Next both move from there, three steps each
    if switch_model:
        queries["switch"] |= {"model": switch_model, "text": page_speed.TEXT_32_MASK}
    for name in ("lens", "generate"):
        if gpt2_model:
            queries[name] |= {"model": gpt2_model, "text": gpt2_text}
        else:
            del queries[name]
    queries["neuron" + ON_IDENTITY] = {"view": "neuron", "text": text, "source": "identity"}
    if llama_model:
        for name in LLAMA_VIEWS:
            queries[name + ON_A_LLAMA] = {"view": name, "model": llama_model, "text": gpt2_text}
        queries["lesson" + ON_A_LLAMA]["step"] = str(lesson_for(rotates=True, shares=True).index("rotary") + 1)
    return queries


def steady_for(query: dict[str, str]) -> str | None:
    """What a reader of the view query opens waits for between presses (page_speed.Case.steady): on the lesson, its
    step's neighbours, which come in a run of their own once the page is still."""
    return LESSON_STEADY if query["view"] == "lesson" else None


def cases(browser, base_url: str, queries: dict[str, dict[str, str]]) -> tuple[list[Case], list[str]]:
    """A case for every control of every view, and one for a new text typed in each view that reads the text; and
    the controls left out, each with why."""
    found, skipped = [], []
    standalone = {view.name for view in VIEWS if view.standalone}
    for view, query in queries.items():
        for control in find_controls(browser, base_url, query):
            if why := left_out(control.key) or (f"`{control.key}`, {ONE_VALUE}" if control.fixed else None):
                skipped.append(f"{view}: {why}")
                continue
            last = view.endswith(ON_A_LLAMA)
            found.append(Case(f"{view}: {control.key}", GROUP, f"`{control.key}` ({control.kind}), {PRESSES} presses",
                              query, moves(control, last), TARGET, ready=CASE_READY,
                              again=moves_again(control, last), steady=steady_for(query)))
        if view == query["view"] and view not in standalone:  # a new text is timed once a view, on its model
            typed = [Move(".st-key-text textarea", "Control+Enter", fill=text)
                     for text in page_speed.new_texts(PRESSES)]
            found.append(Case(f"{view}: a new text typed", GROUP, f"`text` area, {PRESSES} new texts (Ctrl+Enter)",
                              query, typed, TARGET, ready=CASE_READY, reference=NEW_TEXT_REFERENCES.get(
                                  view, page_speed.FORWARD_REFERENCE), again=tuple(typed),  # each text once more
                              steady=steady_for(query)))
    return found, list(dict.fromkeys(skipped))


# The class's questions, on the teacher's page (its card above the view; not found among the view's controls, whose
# search leaves the class's keys out): a class started, the form opened, then each control of the form, and a round
# asked, closed and revealed, one press each.
CLASS_OPEN = (".st-key-start_class button", '[data-testid="stExpander"] summary >> text=Ask the class a question')
ROUND = [Move(".st-key-quiz_ask button", "Enter"), Move(".st-key-quiz_close button", "Enter"),
         Move(".st-key-quiz_reveal button", "Enter")]


def class_cases(text: str) -> list[Case]:
    """The teacher's question controls on the one-head view of text: the kind of question and its token (select
    boxes, three presses each), and a round asked, closed and revealed."""
    query = {"view": "head", "text": text}
    selects = [Case(f"class: {key}", GROUP, f"`{key}` (stSelectbox), {PRESSES} presses", query,
                    moves(Control(key, "stSelectbox")), TARGET, ready=CASE_READY, open_with=CLASS_OPEN,
                    again=moves_again(Control(key, "stSelectbox")))
               for key in ("quiz_token", "quiz_kind")]
    return [*selects, Case("class: a round asked, closed, revealed", GROUP, "`quiz_ask`, `quiz_close`, `quiz_reveal` "
                           "(stButton), one press each", query, ROUND, TARGET, ready=CASE_READY, open_with=CLASS_OPEN)]


CHART_FLOOR_NAME = "reference: the floor with one 32-token heatmap's new numbers"
CHART_FLOOR_PRESSES = 9


def chart_floor_case() -> Case:
    """The floor page with one of the app's heatmaps, its numbers new at each move (bench/chart_floor_app.py): what
    any control that changes a chart's numbers pays at the least, against the floor like every control."""
    return Case(CHART_FLOOR_NAME, GROUP, f"its slider `x`, {CHART_FLOOR_PRESSES} presses (a 32 × 32 heatmap, the "
                "app's, new numbers at each)", {}, page_speed.slider("x", ["ArrowRight", "ArrowLeft"] * 5)[
                    :CHART_FLOOR_PRESSES], None)


# A chart's own input on a page with nothing else but the floor's slider and line (bench/chart_input_floor_app.py),
# by what its move reruns: what a control that switches in the browser from numbers sent once pays at the least, when
# it tells the server (a fragment holding the chart alone writes the link) and when it does not.
CHART_INPUT_NAMES = {
    "fragment": "reference: a chart's own input, its run a fragment holding the chart alone",
    "none": "reference: a chart's own input, switched in the browser, no run",
}
REFERENCE_NAMES = {CHART_FLOOR_NAME, *CHART_INPUT_NAMES.values()}


def chart_input_cases() -> list[Case]:
    """The CHART_INPUT_NAMES cases, CHART_FLOOR_PRESSES presses each, on bench/chart_input_floor_app.py's server."""
    moved = f"the chart's `layer` input, {CHART_FLOOR_PRESSES} presses (a 32 × 32 heatmap, its 6 layers sent once)"
    presses = (chart_input_floor.CHART_MOVES * CHART_FLOOR_PRESSES)[:CHART_FLOOR_PRESSES]
    return [Case(name, GROUP, moved, {"run": run}, presses, None, ready=chart_input_floor.INPUT)
            for run, name in CHART_INPUT_NAMES.items()]


def slowest(results, count: int = 10) -> list[str]:
    """The count cases of largest ratio to their floor, slowest first, as "name 4.1×", with their ratio pressed again,
    the charts a press redraws and those it built anew where there are: "name 51.2× (again 9.8×; 3 charts redrawn;
    1 chart built anew)"."""
    ranked = sorted(_controls(results), key=_ratio, reverse=True)
    return [f"{result.case.name} {_ratio(result):.1f}×{_notes(result)}" for result in ranked[:count]]


def _notes(result) -> str:
    """The ratio pressed again, the charts redrawn and those built anew, in brackets, where there are."""
    notes = ([f"again {_again_ratio(result):.1f}×"] if result.again else []) + (
        [_charts(_redrawn(result), "redrawn")] if _redrawn(result) else []) + (
        [_built_words(result)] if _built(result) else [])
    return f" ({'; '.join(notes)})" if notes else ""


def by_charts_redrawn(results) -> str | None:
    """The controls grouped by how many charts a press redraws (page_speed.ChartsRedrawn: other numbers or another
    spec than the page showed), each group's count and median ratio to the floor, as a line: what painting costs a
    press, beside the floor with one heatmap's new numbers. None when no press was counted."""
    counted = [result for result in _controls(results) if result.charts_redrawn]
    if not counted:
        return None
    groups: dict[int, list[float]] = {}
    for result in counted:
        groups.setdefault(min(_redrawn(result), REDRAWN_GROUPED), []).append(_ratio(result))
    words = {0: "none", 1: "one", 2: "two", REDRAWN_GROUPED: f"{REDRAWN_GROUPED} or more"}
    parts = [f"{words.get(count, str(count))}: {len(ratios)} control{'s' if len(ratios) > 1 else ''}, median "
             f"{statistics.median(ratios):.1f}×" for count, ratios in sorted(groups.items())]
    return (f"By the charts a press redraws (other numbers or another spec than the page showed; a chart its run "
            f"leaves as it was is not counted): {'; '.join(parts)}.")


REDRAWN_GROUPED = 3  # by_charts_redrawn's last group: this many charts redrawn, or more


def _redrawn(result) -> int:
    """The charts a press of the case redrew, the median over its presses."""
    return round(statistics.median(result.charts_redrawn)) if result.charts_redrawn else 0


def _charts(count: int, what: str) -> str:
    return f"{count} chart{'s' if count > 1 else ''} {what}"


def built_anew(results) -> str | None:
    """The controls whose press builds a chart anew, slowest first, as a line; None when none was measured. A
    chart is built anew when its spec changed: Streamlit embeds it again, and Vega compiles it and lays it out
    from scratch (harness.browser.charts_built); a chart whose spec stayed has its new numbers swapped in."""
    measured = [result for result in _controls(results) if result.built]
    if not measured:
        return None
    building = sorted((result for result in measured if _built(result)), key=_ratio, reverse=True)
    named = "; ".join(f"{result.case.name} {_ratio(result):.1f}×{_built_note(result)}" for result in building)
    return (f"{len(building)} of {len(measured)} controls build a chart anew at a press (a new spec, which Vega "
            f"compiles and lays out again, where a spec kept has its numbers swapped in){': ' if named else ''}"
            f"{named}.")


def _controls(results) -> list:
    return [result for result in results if result.case.group == GROUP and not result.error and result.floor
            and result.case.name not in REFERENCE_NAMES]


def _ratio(result) -> float:
    return result.median_ms / result.floor_ms


def _built(result) -> int:
    """The charts a press of the case built anew, the median over its presses."""
    return round(statistics.median(result.built)) if result.built else 0


def _built_note(result) -> str:
    return f" ({_built_words(result)})" if _built(result) else ""


def _built_words(result) -> str:
    return _charts(_built(result), "built anew")


def against_references(results) -> str | None:
    """How many controls settle within TARGET× the floor, and within the ratio of the floor with one heatmap's new
    numbers (chart_floor_case), as a line; None when either was not measured."""
    reference = next((result for result in results if result.case.name == CHART_FLOOR_NAME and not result.error
                      and result.floor), None)
    controls = [result for result in _controls(results) if result.case.reference == "floor"]
    if reference is None or not controls:
        return None
    ratios = [_ratio(result) for result in controls]
    bare = _ratio(reference)
    return (f"Of {len(controls)} controls, {sum(ratio <= TARGET for ratio in ratios)} settle within {TARGET:g}× the "
            f"floor; the floor with one 32-token heatmap's new numbers settles at {bare:.1f}× it, and "
            f"{sum(ratio <= bare for ratio in ratios)} controls within that.{_chart_input_words(results)}")


def _chart_input_words(results) -> str:
    """What a chart's own input settles at on a page of nothing else (chart_input_cases), as a sentence, when both
    were measured: what a rerun that tells the server costs a control that the browser switches by itself."""
    measured = {result.case.name: _ratio(result) for result in results
                if result.case.name in CHART_INPUT_NAMES.values() and not result.error and result.floor}
    if len(measured) < len(CHART_INPUT_NAMES):
        return ""
    told, alone = (measured[CHART_INPUT_NAMES[run]] for run in ("fragment", "none"))
    return (f" A chart's own input on a page of nothing else settles at {alone:.1f}× the floor when it switches in "
            f"the browser alone, and at {told:.1f}× when a run of a fragment holding the chart alone tells the "
            "server.")


def pressed_again(results, count: int = 10) -> str | None:
    """How many controls settle within TARGET× the floor when pressed again over what they drew, and the count
    slowest of them so, as a line; None when none was pressed again."""
    again = sorted((result for result in _controls(results) if result.again), key=_again_ratio, reverse=True)
    if not again:
        return None
    ratios = [_again_ratio(result) for result in again]
    slowest_again = "; ".join(f"{result.case.name} {_again_ratio(result):.1f}×" for result in again[:count])
    return (f"Pressed again over what they drew (nothing new to compute), {sum(ratio <= TARGET for ratio in ratios)} "
            f"of {len(again)} controls settle within {TARGET:g}× the floor, their median at "
            f"{statistics.median(ratios):.1f}×; the slowest so: {slowest_again}.")


def _again_ratio(result) -> float:
    return result.again_ms / result.floor_ms
