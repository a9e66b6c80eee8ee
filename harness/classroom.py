"""A class on one server: sessions that open the page and move its controls at once, and the same one at a time.

Each session speaks Streamlit's own websocket protocol (session_client.py), so that the 2 cores measure
the server, not thirty Chromiums. Two classes:

- plans(): short texts on the one-head view, whose layer and head are picked on its heatmap
  (components/charts/scrub.py): a move is the chart's selection, sent as the browser sends it;
- long_plans(): texts of about LONG_TEXT_TOKENS tokens and a second sentence, each student on one of
  the one-head, all-heads, neuron, lesson and compare views, moving that view's controls (CONTROLS):
  its chart's own inputs, or the lesson's Next and Previous buttons;
- training_plans(): students on the counting view who make no moves but press Train, all at once,
  TRAIN_AFTER_S into the class (five trainings while the others move their sliders).

After opening and after every move the page must stand where the student put it (its URL) and show
the view's chart or step; what every page showed is kept as digests (each chart's spec and data, and
all the words and figures), so that a page under load can be compared with the same inputs run alone;
the server's CPU and memory are read around the class.

Used by bench/load_test.py, which prints the figures, and tests/deploy/test_load.py, which asserts on them.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
import urllib.parse
from dataclasses import dataclass, field

from harness.server import cpu_seconds, memory_mb, metrics, reset_peak
from harness.session_client import WebsocketSession

PERIOD_S = 2.0
OPEN_SPACING_S = 0.2  # students come in one after another, not all in the same millisecond
LAYERS, HEADS = 6, 12  # the bundled model's, the page's default
WAIT_AFTER_S = 10.0
SAMPLE_EVERY_S = 0.25
LATE_S = 0.05  # a move that starts this much after its time waited for the one before
CHART = "chart-weights"  # the one-head view's heatmap, whose own inputs pick the layer and head
LESSON_STEPS = 9  # components/page/page_state.py
QUERIES = 64  # the neuron view's query tokens a student walks through: within any long text
# What the URL leaves out, being components/page/page_state.PageState's defaults.
DEFAULTS = {"layer": 0, "head": 0, "query": 1, "step": 1}
# The long class: every word below is one token of the bundled (uncased WordPiece) vocabulary, as is
# a full stop, so a text's length in tokens is known without a tokenizer (tests/deploy checks it).
LONG_TEXT_SOURCE = (
    "the river carried small boats past quiet houses while children watched from the bridge "
    "a teacher wrote every word on the board and asked which one mattered most "
    "some birds flew south before the first snow covered the fields and roads "
    "my brother kept his old books in a box under the kitchen table "
    "after dinner we walked along the shore and counted the lights of distant ships "
    "the market opened early so farmers brought fresh bread milk and apples "
    "she played the piano for an hour then read a long letter from her friend "
    "rain fell all night and the garden smelled of wet earth in the morning "
    "they built a small house near the forest with wood from fallen trees "
    "the train left the station late because a storm had closed the line")
LONG_TEXT_WORDS = tuple(LONG_TEXT_SOURCE.split())
SENTENCE_WORDS = 11  # and a full stop: 12 tokens
LONG_TEXT_SENTENCES = 39
# The sentences and "student 12 writes.", before [CLS] and [SEP]; with the second sentence, about 490
# of the 512 tokens BERT reads (a longer text would be cut, with a notice).
LONG_TEXT_TOKENS = LONG_TEXT_SENTENCES * (SENTENCE_WORDS + 1) + 4
LONG_VIEWS = ("head", "heads", "neuron", "lesson", "compare")
# Long pages take 1-4 s of server CPU to open on bert-base: a class coming in over half a minute, not at once.
LONG_OPEN_SPACING_S = 1.0
TRAIN_BUTTON = "count_train"  # components/views/counting.py
# Into the moving, so that the others' moves before, during and after the trainings are all measured.
TRAIN_AFTER_S = 10.0


@dataclass(frozen=True)
class Controls:
    """What a student moves on a view: its chart's own inputs, or (chart None) the lesson's buttons."""

    chart: str | None  # the chart's key
    names: tuple[str, ...]  # what the moves change, as the URL names it: the slower-moving first


CONTROLS = {
    "head": Controls(CHART, ("layer", "head")),  # components/views/head.py
    "heads": Controls("grid", ("layer",)),  # components/views/heads.py, CHART_KEY
    "neuron": Controls("chart-neuron", ("head", "query")),  # components/views/neuron.py
    "lesson": Controls(None, ("step",)),  # components/views/lesson.py: buttons lesson_next, lesson_prev
    "compare": Controls("chart-compare", ("layer", "head")),  # components/views/compare.py
    "counting": Controls(None, ()),  # components/views/counting.py: its Train button, pressed once (press_train)
}


@dataclass(frozen=True)
class Plan:
    """One student: the page they open, then the moves they make on its controls, in order."""

    query: dict[str, str]
    moves: tuple[tuple[str, int], ...]  # (a name of the view's controls, its new value)

    @property
    def view(self) -> str:
        return self.query.get("view", "head")

    def state(self, move: int) -> dict[str, int]:
        """Where the view's controls stand after `move` moves (0: the page as opened)."""
        state = {name: int(self.query.get(name, DEFAULTS[name])) for name in CONTROLS[self.view].names}
        state.update(self.moves[:move])
        return state

    def describe(self, move: int) -> str:
        """'layer 2, head 5' after `move` moves (0: the page as opened)."""
        return ", ".join(f"{name} {value}" for name, value in self.state(move).items())


@dataclass
class Training:
    """One press of Train: when (time.monotonic()), until its rerun finished, and how the page says it ended."""

    pressed_at: float
    finished_at: float | None = None
    outcome: str = "still running"  # "finished", the page's notice of why it stopped, or what went wrong


@dataclass
class Record:
    """What happened to one student's session: timings, what each page showed, errors."""

    open_s: float | None = None
    move_s: list[float] = field(default_factory=list)
    move_at: list[float] = field(default_factory=list)  # when each move was sent (time.monotonic())
    training: Training | None = None  # a student on the counting view: their press of Train
    late_moves: int = 0
    pages: list[dict[str, str]] = field(default_factory=list)  # page_digest() as opened, then after each move
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Memory:
    """The server's resident memory in MB."""

    before: float  # the model loaded, no session open
    sampled: float  # the highest sample (every SAMPLE_EVERY_S) while the sessions were open
    high_water: float | None  # the kernel's peak (VmHWM) from the class's start; None where it cannot be reset
    after: float  # as soon as every session had closed
    later: float  # WAIT_AFTER_S after that

    @property
    def peak(self) -> float:
        """The peak while the class ran: the kernel's, which no sample misses, where there is one."""
        return self.sampled if self.high_water is None else self.high_water


@dataclass(frozen=True)
class Load:
    records: list[Record]
    elapsed_s: float  # from the first session opening to the last closing
    cpu_s: float  # the server's CPU time over elapsed_s
    client_cpu_s: float  # this process's: were the sessions themselves a bottleneck?
    memory: Memory


def plans(sessions: int, moves_each: int, who: str = "student", model: str | None = None) -> list[Plan]:
    """A text of its own for every student, a different start, and a walk over heads and layers.

    Another `who` ("another student") gives other texts for the same walks; model None is the page's default.
    """
    result = []
    for index in range(sessions):
        text = f"{who} {index} reads how every word of this sentence attends to the others"
        query = {"text": text, "layer": str(index % LAYERS), "head": str((index * 5) % HEADS)}
        if model is not None:
            query["model"] = model
        result.append(Plan(query, _walk(query, CONTROLS["head"].names, moves_each)))
    return result


def long_plans(sessions: int, moves_each: int, model: str | None = None, who: str = "student") -> list[Plan]:
    """The long class: a text of about LONG_TEXT_TOKENS tokens and a second sentence of its own for every
    student, the students spread over LONG_VIEWS in turn; model None is the page's default (the bundled one)."""
    result = []
    for index in range(sessions):
        view = LONG_VIEWS[index % len(LONG_VIEWS)]
        query = {"text": long_text(index, who), "text_b": f"{who} {index} asks what the second sentence changes.",
                 "view": view, "layer": str(index % LAYERS), "head": str((index * 5) % HEADS),
                 "query": str(1 + index % (QUERIES - 1)), "step": str(1 + index % LESSON_STEPS)}
        if model is not None:
            query["model"] = model
        result.append(Plan(query, _walk(query, CONTROLS[view].names, moves_each)))
    return result


def training_plans(count: int) -> list[Plan]:
    """Students on the counting view with its default settings, who press Train (press_train) and move nothing."""
    return [Plan({"view": "counting"}, ()) for _ in range(count)]


def long_text(index: int, who: str = "student") -> str:
    """LONG_TEXT_SENTENCES sentences of LONG_TEXT_WORDS, begun at a different word for every index
    (so that no two students share a text, nor a cache entry), after "<who> <index> writes."."""
    start = index * 13 % len(LONG_TEXT_WORDS)  # 13 and 135 share no factor: 135 different texts
    words = [LONG_TEXT_WORDS[(start + i) % len(LONG_TEXT_WORDS)]
             for i in range(LONG_TEXT_SENTENCES * SENTENCE_WORDS)]
    sentences = [" ".join(words[i:i + SENTENCE_WORDS]) + "." for i in range(0, len(words), SENTENCE_WORDS)]
    return f"{who} {index} writes. " + " ".join(sentences)


def _walk(query: dict[str, str], names: tuple[str, ...], moves_each: int) -> tuple[tuple[str, int], ...]:
    """The last of names one step on each move, and every third move the first (with two names);
    the lesson's step goes to the last step and back, one press of Next or Previous a move."""
    state = {name: int(query[name]) for name in names}
    limits = {"layer": LAYERS, "head": HEADS, "query": QUERIES}
    step_direction = 1
    moves = []
    for move in range(moves_each):
        name = names[0] if len(names) > 1 and move % 3 == 2 else names[-1]
        if name == "step":
            if not 1 <= state[name] + step_direction <= LESSON_STEPS:
                step_direction = -step_direction
            state[name] += step_direction
        else:
            state[name] = (state[name] + 1) % limits[name]
        moves.append((name, state[name]))
    return tuple(moves)


def page_digest(session: WebsocketSession) -> dict[str, str]:
    """What the page shows, as a digest per chart and one for all its words and figures.

    A chart's digest covers its Arrow data and its spec: a heatmap holding every head draws the one its
    inputs stand at, and where they start is in the spec.
    """
    digest = {f"chart {name}": _digest(chart.spec.encode(), chart.data.data,
                                       *(dataset.data.data for dataset in chart.datasets))
              for name, chart in session.charts().items()}
    digest["words and figures"] = _digest("\n".join(session.texts()).encode())
    return digest


def _digest(*blobs: bytes) -> str:
    hashed = hashlib.sha256()
    for blob in blobs:
        hashed.update(len(blob).to_bytes(8, "big") + blob)
    return hashed.hexdigest()[:16]


async def open_page(base_url: str, plan: Plan, record: Record, delay_s: float = 0.0) -> WebsocketSession | None:
    await asyncio.sleep(delay_s)
    try:
        session = await WebsocketSession.connect(base_url, plan.query)
    except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
        record.errors.append(f"opening the page: {error!r}")
        return None
    record.open_s = session.open_s
    _look_at(session, plan, 0, record)
    return session


async def make_moves(session: WebsocketSession, plan: Plan, record: Record, period_s: float,
                     phase_s: float = 0.0) -> None:
    """Move the view's controls as planned, one move every period_s (or one after another with period_s 0)."""
    next_move = time.monotonic() + phase_s
    for made, (key, value) in enumerate(plan.moves, start=1):
        wait_s = next_move - time.monotonic()
        if wait_s > 0:
            await asyncio.sleep(wait_s)
        elif -wait_s > LATE_S:
            record.late_moves += 1
        record.move_at.append(time.monotonic())
        try:
            record.move_s.append(await move(session, plan.view, key, value))
        except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
            record.errors.append(f"moving {key} to {value}: {error!r}")
            return
        _look_at(session, plan, made, record)
        next_move += period_s


async def press_train(session: WebsocketSession, record: Record, after_s: float) -> None:
    """Press Train after_s from now and wait for the run to finish (its wait in line included); keep how the page
    says the training ended: its status "Trained N steps …", or the notice of why it stopped."""
    await asyncio.sleep(after_s)
    record.training = training = Training(time.monotonic())
    try:
        await session.press_button(TRAIN_BUTTON)
    except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
        training.outcome = f"failed: {error!r}"
        record.errors.append(f"pressing Train: {error!r}")
        return
    training.finished_at = time.monotonic()
    texts = session.texts()
    stopped = [text for text in texts if text.startswith("The training stopped")]
    if any(text.startswith("Trained ") for text in texts):
        training.outcome = "finished"
    elif stopped:
        training.outcome = stopped[0]
    else:
        training.outcome = "ended with no word of how"
        record.errors.append("after Train the page says neither that it trained nor why it stopped")
    record.errors.extend(f"on the page: {error}" for error in session.errors())


async def move(session: WebsocketSession, view: str, name: str, value: int) -> float:
    """Move one of the view's controls to value, as a student does; return seconds until the rerun finished.

    The lesson's step moves by one press of Next (or Previous, when value is behind the step shown).
    """
    controls = CONTROLS[view]
    if controls.chart is None:
        shown = page_position(session, ("step",))["step"]
        return await session.press_button("lesson_next" if value > shown else "lesson_prev")
    return await move_on_chart(session, name, value, controls.chart)


async def move_on_chart(session: WebsocketSession, name: str, value: int, chart: str = CHART) -> float:
    """Move one of the chart's own inputs to value; return seconds until the rerun finished.

    What the browser then sends is the chart's selection: the input moved, and the others too once
    the reader has moved them before (an input never touched is left out, and the page keeps its own).
    """
    selection = {**session.chart_selection(chart), name: [{name: value}]}
    return await session.set_chart_selection(chart, selection)


def page_position(session: WebsocketSession, names: tuple[str, ...]) -> dict[str, int]:
    """Where the page says these controls stand: in its URL, as the browser's address bar holds it."""
    query = urllib.parse.parse_qs(session.query_string)
    return {name: int(query[name][-1]) if name in query else DEFAULTS[name] for name in names}


def _look_at(session: WebsocketSession, plan: Plan, made: int, record: Record) -> None:
    """Keep what the page shows after `made` moves; count as errors what it shows wrong or fails to show."""
    record.pages.append(page_digest(session))
    record.errors.extend(f"on the page: {error}" for error in session.errors())
    expected = plan.state(made)
    shown = page_position(session, tuple(expected))
    if shown != expected:
        record.errors.append(f"after {made} moves the page stands at {shown}, not {expected}")
    chart = CONTROLS[plan.view].chart
    if chart is not None and chart not in session.charts():
        record.errors.append(f"after {made} moves the page shows no chart {chart!r}")
    if plan.view == "lesson" and not any(text.startswith(f"Step {expected['step']} of") for text in session.texts()):
        record.errors.append(f"after {made} moves the page shows no step {expected['step']}")


async def run_class(base_url: str, pid: int, class_plans: list[Plan], period_s: float = PERIOD_S,
                    wait_after_s: float = WAIT_AFTER_S, open_spacing_s: float = OPEN_SPACING_S,
                    train_after_s: float = TRAIN_AFTER_S) -> Load:
    """Every plan in its own session, opened open_spacing_s apart, then all moving at once (a plan on the counting
    view presses Train instead, train_after_s after the moving began); the server's memory around them."""
    before = memory_mb(pid)[0]
    samples = [before]
    peak_counted = reset_peak(pid)
    sampler = asyncio.create_task(_sample_memory(pid, samples))
    cpu_before, client_cpu_before, began = cpu_seconds(pid), time.process_time(), time.monotonic()
    records = [Record() for _ in class_plans]
    sessions = await asyncio.gather(*(open_page(base_url, plan, record, index * open_spacing_s)
                                      for index, (plan, record) in enumerate(zip(class_plans, records, strict=True))))
    await asyncio.gather(*(press_train(session, record, train_after_s) if plan.view == "counting" else
                           make_moves(session, plan, record, period_s, random.Random(index).uniform(0, period_s))
                           for index, (session, plan, record) in enumerate(zip(sessions, class_plans, records,
                                                                                strict=True))
                           if session is not None))
    await asyncio.gather(*(session.close() for session in sessions if session is not None))
    elapsed_s, cpu_s = time.monotonic() - began, cpu_seconds(pid) - cpu_before
    client_cpu_s = time.process_time() - client_cpu_before
    await asyncio.to_thread(_until_no_sessions, base_url)
    sampler.cancel()
    after, high_water = memory_mb(pid)
    await asyncio.sleep(wait_after_s)
    later = memory_mb(pid)[0]
    return Load(records, elapsed_s, cpu_s, client_cpu_s,
                Memory(before, max(samples), high_water if peak_counted else None, after, later))


async def run_serially(base_url: str, class_plans: list[Plan]) -> list[Record]:
    """Every plan in its own session, one session after another, each move as soon as the last finished."""
    records = []
    for plan in class_plans:
        record = Record()
        session = await open_page(base_url, plan, record)
        if session is not None:
            await make_moves(session, plan, record, period_s=0.0)
            await session.close()
        records.append(record)
    return records


async def warm_up(base_url: str, model: str | None = None) -> None:
    """One session first, so that the model (None: the page's default) is loaded before anything is measured."""
    query = {"text": "the model loads once per server"} | ({"model": model} if model is not None else {})
    session = await WebsocketSession.connect(base_url, query)
    await move_on_chart(session, "head", 1)
    await session.close()
    await asyncio.to_thread(_until_no_sessions, base_url)


def differences(class_plans: list[Plan], loaded: list[Record], serial: list[Record]) -> list[str]:
    """Every page that differs between the run under load and the serial one, and what differs on it."""
    found = []
    for index, (plan, under_load, alone) in enumerate(zip(class_plans, loaded, serial, strict=True)):
        # Not strict: a session that failed has fewer pages; its failure is counted among the errors.
        for move, (page, baseline) in enumerate(zip(under_load.pages, alone.pages, strict=False)):
            if page != baseline:
                what = sorted(name for name in page.keys() | baseline.keys() if page.get(name) != baseline.get(name))
                found.append(f"session {index} after {move} moves ({plan.describe(move)}): {', '.join(what)}")
    return found


def _until_no_sessions(base_url: str, timeout_s: float = 30.0) -> None:
    """Wait until the server has let go of every closed websocket's session."""
    deadline = time.monotonic() + timeout_s
    while metrics(base_url)["active"] > 0 and time.monotonic() < deadline:
        time.sleep(0.1)


async def _sample_memory(pid: int, samples: list[float]) -> None:
    while True:
        samples.append(memory_mb(pid)[0])
        await asyncio.sleep(SAMPLE_EVERY_S)
