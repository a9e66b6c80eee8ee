"""A class: the teacher's page drives, the students' pages follow, and a student can break away and come back.

The teacher opens the page with ?teach=1 (or presses Start a class): the page opens a class in the store
(components/server/class_store.py), puts class=CODE&key=KEY in its own URL and shows the students' link, ?class=CODE,
as text and as a QR code. After each of its runs the teacher's page sends its view (FOLLOWED) when it changed.

A page opened with class=CODE follows: every run of the whole page reads the class's version (follow), and when it
moved, hands the teacher's view to the page's own requests (controls.request) and reruns; between runs, the page's
script asks the App's route for the version, which holds the ask until the class moves, and reruns the view (or the
page) when it moved (watch; components/classroom/class_watch.py). Whatever the student moves after that leaves
follow mode until Follow the teacher again.

Only a page whose link holds the class's key (compared in constant time, by the store) drives the class. A
code read from a link is checked against CODE_ALPHABET before it goes anywhere, and shown only as a code span.

A server whose ATTENTION_ANATOMY_CLASS_STORE names no store (a typo) has no classes: a class link or teach=1
opens the page on its own, with a notice of what the setting must be, which the sidebar shows in place of
Start a class. The setting's value itself is never shown (a Redis URL may hold a password).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.caches import offered, stores
from components.classroom import class_watch, questions
from components.classroom.class_link import (
    CLASS_PARAM,
    close_large,
    open_large,
    qr_png,
    say_started,
    show_large_if_open,
    students_link,
    warn_if_unreachable,
)
from components.classroom.seat import Seat, class_seat, new_seat, seated
from components.page import controls, page_state, url
from components.page.page_state import FOLLOWED, PageState  # what a follower takes of the teacher's view
from components.server.class_store import (
    STORE_ENV,
    STORE_SETTING_FORMS,
    StoreUnavailable,
    parse_code,
)

KEY_PARAM, TEACH_PARAM = "key", "teach"
# A follower's page asks the App's route for the class's version again this long after an answer the route did not
# hold (the server holds all the asks it may, the store does not answer); a held ask is answered as the class moves.
POLL_S = 0.75
# A follower's run says it is there this often (a class store write), well within class_store.HEARTBEAT_S; its
# watch says so with every ask.
BEAT_S = 2.0
COUNT_S = 2.0  # the teacher's panel counts the followers this often (and sends a change Redis missed)
# On the projected page, beside its title, px a module: a link of 40 letters is a code of 37 modules with its
# quiet zone, 111 px, read from the first rows (Show the QR code large is 4 times as large, for the back).
CARD_QR_SCALE = 3
_JUST_STARTED = "_class_just_started"  # session state: the code of the class a press of Start a class opened
UNREACHABLE = ("The class cannot be reached right now (its store does not answer). Your page stays as it is "
               "and follows again when the class answers.")
CLASSES_OFF = (f"Classes are off on this server: its setting `{STORE_ENV}` must be {STORE_SETTING_FORMS}. "
               "The page works on its own.")


def start(query: dict[str, list[str]], models: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
    """On a session's first run, join the class the link names (or open one for teach=1); return the query the
    page's state is to be read from (a follower's holds the teacher's view) and the notices about the class."""
    if seated():
        return query, class_seat().notices
    seat = new_seat()
    code_given, key_given = _last(query, CLASS_PARAM), _last(query, KEY_PARAM)
    seat.classes_off = stores.setting_names_no_store()
    if seat.classes_off:
        if code_given is not None or key_given is not None or _last(query, TEACH_PARAM) is not None:
            seat.notices.append(CLASSES_OFF)
        return query, seat.notices
    if code_given is None:
        if key_given is not None:
            seat.notices.append("The link has a key but no class code: the key was ignored.")
        if _last(query, TEACH_PARAM) == "1":
            _open_class(seat)
        return query, seat.notices
    code = parse_code(code_given)
    if code is None:
        seat.notices.append(f"The link's class={page_state.shorten(code_given)} is not a class code (six letters "
                            "and digits): showing the page on its own.")
        return query, seat.notices
    try:
        snapshot = stores.classes().read(code)
        teaches = key_given is not None and snapshot is not None and stores.classes().teaches(code, key_given)
    except StoreUnavailable:
        seat.role, seat.code = "follower", code
        seat.notices.append(UNREACHABLE)
        return query, seat.notices
    if snapshot is None:
        seat.notices.append(f"Class {page_state.shorten(code)} has ended or does not exist: showing the page on "
                            "its own.")
        return query, seat.notices
    if teaches:
        seat.role, seat.code, seat.key = "teacher", code, key_given
        return query, seat.notices
    if key_given is not None:
        seat.notices.append(f"This link's key is not class {page_state.shorten(code)}'s: the page follows the "
                            "teacher and cannot change the class's view.")
    seat.role, seat.code, seat.version, seat.taken = "follower", code, snapshot.version, dict(snapshot.settings)
    own = {name: values for name, values in query.items() if name not in FOLLOWED}
    return {**own, **_as_query(snapshot.settings)}, seat.notices


def sync(state: PageState) -> None:
    """After the controls have made the page's state: send it to the class (the teacher's page), or notice that
    the student moved something (a follower's); then write the URL."""
    seat = class_seat()
    if seat.role == "teacher":
        _send(seat, followed(state))
    elif seat.role == "follower" and seat.following:
        shown = page_state.to_query(state)
        if seat.expected is None:
            seat.expected = shown
        elif shown != seat.expected:
            seat.following = False
    write_url(state)


def write_url(state: PageState) -> None:
    """The page's parameters in the URL, with the class's code (and the teacher's key) after them."""
    url.write(state, class_params())


def class_params() -> dict[str, str]:
    seat = class_seat()
    if seat.role == "teacher":
        return {CLASS_PARAM: seat.code, KEY_PARAM: seat.key}
    return {CLASS_PARAM: seat.code} if seat.role == "follower" else {}


def followed(state: PageState) -> dict[str, str]:
    """What a follower takes of the teacher's view: the FOLLOWED parameters as the URL writes them (a default is
    left out, and a follower takes the default for it)."""
    return {name: value for name, value in page_state.to_query(state).items() if name in FOLLOWED}


def status() -> None:
    """A follower's line at the top of the view: following, or exploring with the way back.

    Always one container, empty on other pages: what it holds changes as the student breaks away (one element,
    then two), and the view's chart below must keep its place in the page's tree, or the browser mounts it anew
    from its spec, at the inputs' anchor (components/charts/scrub.py), under a heading and a link that say where the
    student's presses took it."""
    seat = class_seat()
    line = st.container()
    questions.card(seat, st.container())  # the class's question: components/classroom/questions.py
    if seat.role != "follower":
        return
    if seat.following:
        line.caption(f"Following the teacher · class {page_state.shorten(seat.code)}")
        return
    line.info("You are exploring on your own: the teacher's changes no longer move this page.",
              icon=":material/explore:")
    line.button("Follow the teacher again", key="follow_again", on_click=_follow_again, type="primary")


def teacher_panel() -> None:
    """At the top of the sidebar, on the teacher's page: the students' link, its QR code, how many follow, a larger
    QR code for the back of the room, and End the class."""
    seat = class_seat()
    if seat.role != "teacher":
        return
    link = students_link(seat.code)
    with st.sidebar.expander(f"Class {seat.code}: the students' link", expanded=True, icon=":material/school:"):
        st.image(qr_png(link), width="stretch", output_format="PNG", alt="QR code of the students' link")
        st.code(link, language=None, wrap_lines=True)
        warn_if_unreachable(link)
        _teacher_status()
        st.button("Show the QR code large", key="large_qr", on_click=open_large, icon=":material/qr_code_2:")
        st.button("End the class", key="end_class", on_click=_end_class, icon=":material/stop_circle:")
        if st.session_state.pop(_JUST_STARTED, None) == seat.code:
            say_started(seat.code)
    show_large_if_open(link)


def teaching() -> bool:
    """Whether this page drives a class."""
    return class_seat().role == "teacher"


def following() -> bool:
    """Whether this page follows its class's teacher now (a student who broke away does not)."""
    return class_seat().role == "follower" and class_seat().following


def class_card(under: DeltaGenerator) -> None:
    """On the teacher's projected page, where the sidebar is closed: a small QR code, the class's code and the
    students' link (as plain text), and a way to the large QR code; under (the title's column, which is wider),
    a warning when students cannot open the link."""
    seat = class_seat()
    link = students_link(seat.code)
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")  # side by side on a phone too
    row.image(qr_png(link, CARD_QR_SCALE), output_format="PNG", alt="QR code of the students' link")
    with row.container(width="stretch"):
        st.markdown(f"**Class {seat.code}** · join at")  # a code of CODE_ALPHABET, made by the store
        st.text(link)
        st.button("Show the QR code large", key="large_qr_card", on_click=open_large, icon=":material/qr_code_2:",
                  type="tertiary")  # opened by teacher_panel, which every teacher's page draws first
    warn_if_unreachable(link, under)


def start_button() -> None:
    """Start a class, on a page that is in none; in its place, why not when the server's setting turned them off."""
    seat = class_seat()
    if seat.classes_off:
        st.sidebar.caption(CLASSES_OFF)
    elif not seat.role:
        st.sidebar.button("Start a class", key="start_class", on_click=_start_class, icon=":material/school:",
                          help="Your students open one link (or scan its QR code) and their pages follow yours.")


@st.fragment(run_every=COUNT_S)
def _teacher_status() -> None:
    seat = class_seat()
    if seat.role != "teacher":
        return
    if seat.unsent and seat.sent is not None:
        _send(seat, seat.sent, again=True)
    if seat.unsent:
        st.warning("Your students cannot get your changes right now: the class's store does not answer. "
                   "Go on teaching; the page sends your view when it can.", icon=":material/cloud_off:")
        return
    try:
        count = stores.classes().followers(seat.code)
    except StoreUnavailable:
        return
    st.markdown(f"**{count}** {'student' if count == 1 else 'students'} following")


def follow() -> None:
    """A follower's check of its class, once per run of the whole page. Draws nothing while all is well."""
    seat = class_seat()
    # One slot of the page, whatever the card holds (nothing, a round, its answers, the form, the CSV): a round
    # asked must not move what follows in the page's tree, whose charts would be mounted anew (page.notices).
    with st.container():
        questions.teacher_card(seat, lambda: _send(seat, followed(controls.current_state()), True))
    if seat.role != "follower":
        return
    if _check(seat):
        st.rerun()
    if seat.unreachable:
        st.warning(UNREACHABLE, icon=":material/cloud_off:")


def watch() -> None:
    """A follower's watch, in the view's fragment: the teacher's move of the view's own controls reruns it alone."""
    seat = class_seat()
    if seat.role == "follower":
        class_watch.watch(seat.code, seat.version, following=seat.following, reachable=not seat.unreachable,
                          follower=seat.follower_id, period_s=POLL_S, on_behind=_check_before_run)


def _check_before_run() -> None:
    """The watch's trigger, before the run it starts: that run then draws the teacher's view at once."""
    seat = class_seat()
    if seat.role != "follower":
        return
    outside = seat.role, seat.unreachable, len(seat.notices)  # drawn outside the view's fragment
    if seat.following and class_watch.drawn_version() not in (None, seat.version):
        # The page has not drawn the teacher's view it took: its widgets sent the view before it. Take it again.
        _take(seat, seat.version, seat.taken)
    _check(seat)
    if (seat.role, seat.unreachable, len(seat.notices)) != outside:
        controls.rerun_whole_page()


def _check(seat: Seat) -> bool:
    """Take the teacher's view when the class moved, or leave the class when it ended; whether either happened (the
    page must be drawn again)."""
    now = time.monotonic()
    beat = seat.following and now - seat.beat_at >= BEAT_S
    try:
        version = stores.classes().version(seat.code, seat.follower_id if beat else None)
        seat.beat_at = now if beat else seat.beat_at
        snapshot = None
        if seat.following and version is not None and version != seat.version:
            snapshot = stores.classes().read(seat.code)
    except StoreUnavailable:
        seat.unreachable = True
        return False
    seat.unreachable = False
    if snapshot is not None:
        _take(seat, snapshot.version, snapshot.settings)
        return True
    if version is None:
        seat.notices.append(f"Class {page_state.shorten(seat.code)} has ended: the page stays where it is.")
        seat.role = ""
        return True
    return False


def _take(seat: Seat, version: int, settings: Mapping[str, str]) -> None:
    """Put the teacher's view on this page (through the page's own requests), from the next run on: only what
    differs from what the widgets hold (the browser's values, before a run), since a request of a sidebar control
    reruns the whole page where a head's reruns the view alone."""
    state, shown = page_state.from_query(_as_query(settings), offered.model_names())[0], controls.pending_state()
    controls.request(**{name: value for name in FOLLOWED if (value := getattr(state, name)) != getattr(shown, name)})
    seat.version, seat.taken, seat.expected, seat.following = version, dict(settings), None, True


def _send(seat: Seat, view: dict[str, str], again: bool = False) -> None:
    """Send the teacher's view when it changed. While the store does not answer, a change is only kept: the
    teacher's panel tries again every COUNT_S, so that no move of the teacher's waits for the store's timeout."""
    if view == seat.sent and not again:
        return
    seat.sent = view
    if seat.unsent and not again:
        return
    try:
        accepted = stores.classes().publish(seat.code, seat.key, view)
    except StoreUnavailable:
        seat.unsent = True
        return
    seat.unsent = False
    if not accepted:
        seat.notices.append(f"Class {page_state.shorten(seat.code)} has ended: this page is on its own again.")
        _leave_class(seat)


def _open_class(seat: Seat) -> None:
    try:  # the page's address is counted against a cap of classes per address, never kept (class_openers.py)
        seat.code, seat.key = stores.classes().create({}, address=st.context.ip_address)
    except StoreUnavailable as error:
        seat.notices.append(f"A class cannot be started right now ({error}). The page works on its own.")
        return
    seat.role, seat.sent = "teacher", None


def _start_class() -> None:
    seat = class_seat()
    seat.notices.clear()
    _open_class(seat)
    if seat.role == "teacher":
        st.session_state[_JUST_STARTED] = seat.code


def _end_class() -> None:
    seat = class_seat()
    try:
        stores.classes().end(seat.code, seat.key)
    except StoreUnavailable:
        seat.notices.append("The class's store does not answer: the class ends by itself after a few hours "
                            "without a change.")
    _leave_class(seat)


def _leave_class(seat: Seat) -> None:
    """The teacher's page on its own again: no class, and its large QR code closed."""
    seat.role, seat.code, seat.key = "", "", ""
    close_large()


def _follow_again() -> None:
    seat = class_seat()
    try:
        snapshot = stores.classes().read(seat.code)
    except StoreUnavailable:
        seat.following, seat.version = True, 0  # the poll takes the teacher's view once the class answers
        return
    if snapshot is None:
        seat.notices.append(f"Class {page_state.shorten(seat.code)} has ended: the page stays where it is.")
        seat.role = ""
        return
    _take(seat, snapshot.version, snapshot.settings)


def _as_query(settings: Mapping[str, str]) -> dict[str, list[str]]:
    return {name: [value] for name, value in settings.items() if name in FOLLOWED}


def _last(query: Mapping[str, Sequence[str]], name: str) -> str | None:
    return (query.get(name) or (None,))[-1]
