"""The class's question, above the view: the teacher asks, the students answer, the teacher closes, may open a
second vote, and reveals; then every page shows the class's answers and the page's own, and the class moves to the
view that shows why.

The teacher's page asks from the view the class is on (components/classroom/question_asking.py) and sees how many
have answered, never who answered what. A student's page shows the question and its choices, and the student may
change their answer until the round closes. No page reads the counts before the reveal: the store hands them out
only then (components/server/question_store.py), and nothing of them is in a link or a route.

A student's vote is keyed on the browser's voter id, a cookie the page's script makes (voter.js): a reload, or a
second tab, answers as the same voter, and replaces that voter's answer. A change of the round reaches the students'
pages as a change of the class (the teacher's page sends its view again, which moves the class's version): a student
who follows sees it within the class's poll; one exploring on their own sees it at their page's next run.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.assets import filled, read_beside
from components.caches import stores
from components.classroom import question_asking
from components.page import viewport
from components.server import question_store
from components.server.question_store import CLOSED, COUNT_S, OPEN, REVEALED, Asked, Question, StoreUnavailable

MAX_CHART_PX = 560  # the class's bars, labels included: a projector's card, or a phone's width
VOTER_COOKIE = "aa_voter"
VOTER_COOKIE_DAYS = 30
_VOTER_KEY = "class_voter"
_REVEALED_NOW = "_quiz_revealed_now"  # session state: this page has just revealed (its page reruns)
WORD_JOINER = "\u2060"
# What GitHub-flavoured Markdown turns into a link by itself: "scheme://", "www.", and the "@" of an e-mail address.
_AUTOLINK = re.compile(r"(?i)[a-z]:/|www\.|[^\s]@")
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:\"'=^%@])")

_voter = st.components.v2.component(
    "attention_anatomy.class_voter", isolate_styles=False,
    js=filled(read_beside(__file__, "voter.js"), cookie=VOTER_COOKIE, cookie_days=VOTER_COOKIE_DAYS))


def plain(text: str) -> str:
    """Text a teacher typed (or a token), as Markdown that shows it literally: every punctuation mark escaped, and a
    word joiner (invisible) where the Markdown of the page would make a link of an address by itself."""
    unlinked = _AUTOLINK.sub(lambda found: found.group(0)[:-1] + WORD_JOINER + found.group(0)[-1],
                             text.replace("\n", " "))
    return _PUNCTUATION.sub(r"\\\1", unlinked)


def voter() -> str | None:
    """This browser's voter id: what its script reported in this session, or its cookie (a page reopened)."""
    state = st.session_state.get(_VOTER_KEY)
    reported = state.get("voter") if isinstance(state, dict) else None
    for given in (reported, st.context.cookies.get(VOTER_COOKIE)):
        if isinstance(given, str) and question_store.valid_voter(given):
            return given
    return None


def keep_voter() -> None:
    """Mount the script that makes (or reads) the browser's voter id: in a follower's question card, where the gap
    an element of no height takes is the card's own."""
    _voter(key=_VOTER_KEY, height=0, data={"known": voter() or ""}, on_voter_change=lambda: None)


def card(seat, where: DeltaGenerator) -> None:
    """On a follower's page, above the view (in the view's fragment), in where: the class's current question, with
    the choices to answer, or once revealed the class's answers and the page's. seat: the page's seat.Seat."""
    if seat.role != "follower":
        return
    code = seat.code
    try:
        asked = stores.questions().current(code)
    except StoreUnavailable:
        return
    if asked is not None:
        with where:
            _student_card(code, asked)


def teacher_card(seat, send_again: Callable[[], None]) -> None:
    """On the teacher's page, in the page's own run above the view: the round (re-read every COUNT_S while it is
    not revealed: how many answered, and the buttons that move it), or the revealed answers; the form to ask; the
    CSV. send_again moves the class's version, so that the followers' pages read the round's change. Not in the
    view's fragment: a timed fragment inside another leaves stale elements on screen (streamlit#16708). seat: the
    page's classroom.Seat."""
    if seat.role != "teacher":
        return
    code, key = seat.code, seat.key
    try:
        asked = stores.questions().current(code)
    except StoreUnavailable:
        st.caption("The class's questions cannot be reached right now (its store does not answer).")
        return
    if asked is not None and asked.state != REVEALED:
        _live_round(code, key, send_again)
    elif asked is not None:
        with st.container(border=True, key="quiz_card"):
            _heading(asked)
            _revealed(asked)

    def ask(question: Question) -> bool:  # a button's callback: whether the class now has it (the page draws it)
        return _act(lambda: stores.questions().ask(code, key, question), send_again,
                   "The class has asked as many questions as it may.")

    question_asking.form(ask)
    _download(code, key)


@st.fragment(run_every=COUNT_S)
def _live_round(code: str, key: str, send_again: Callable[[], None]) -> None:
    """The open or closed round, drawn again every COUNT_S: a reveal (here or from another tab) reruns the page,
    which then draws the answers and the view that shows why."""
    try:
        asked, answered = stores.questions().current(code), stores.questions().answered(code, key)
        following = stores.classes().followers(code)
    except StoreUnavailable:
        st.caption("The class's store does not answer right now.")
        return
    if st.session_state.pop(_REVEALED_NOW, False) or asked is None or asked.state == REVEALED:
        st.rerun()
    with st.container(border=True, key="quiz_card"):
        _heading(asked)
        _choices_list(asked.question)
        status = "open: students are answering" if asked.state == OPEN else "closed"
        st.markdown(f"**{answered}** answered · {following} following · round {asked.round} {status}")
        _round_buttons(code, key, asked, send_again)


def _round_buttons(code: str, key: str, asked: Asked, send_again: Callable[[], None]) -> None:
    row = st.container(horizontal=True)
    if asked.state == OPEN:
        row.button("Close the round", key="quiz_close", icon=":material/lock:",
                   on_click=_act, args=(lambda: stores.questions().close(code, key), send_again))
    if asked.state == CLOSED and asked.round == 1:
        row.button("Open a second vote", key="quiz_second", icon=":material/replay:",
                   on_click=_act, args=(lambda: stores.questions().second_vote(code, key), send_again))

    def reveal() -> None:
        if stores.questions().reveal(code, key):
            question_asking.reveal_view(_full(code, key, asked.number))
            send_again()
            st.session_state[_REVEALED_NOW] = True

    row.button("Reveal", key="quiz_reveal", icon=":material/visibility:", type="primary", on_click=_guarded,
               args=(reveal,))


@st.fragment
def _student_card(code: str, asked: Asked) -> None:
    """A fragment of its own: a vote reruns the card alone, not the view around it (a class votes at once, and
    a hundred runs of the view queue on one server process for seconds: bench/class_votes_page.py)."""
    with st.container(border=True, key="quiz_card"):
        keep_voter()
        _heading(asked)
        if asked.state == REVEALED:
            _revealed(asked)
            return
        who = voter()
        try:
            mine = None if who is None else stores.questions().my_vote(code, who)
        except StoreUnavailable:
            mine = None
        question = asked.question
        widget = _pills_key(asked)
        st.pills("Your answer", range(len(question.choices)), format_func=lambda i: plain(question.choices[i]),
                 default=mine, key=widget, disabled=asked.state != OPEN or who is None,
                 on_change=_vote, args=(code, widget))
        if who is None:
            st.caption("Getting this page ready to answer…")
        elif asked.state == OPEN and question.kind == "previous":
            st.caption("Click the head in the grid below, or pick it here. You can change your answer until the "
                       "teacher closes the round.")
        elif asked.state == OPEN:
            st.caption("You can change your answer until the teacher closes the round."
                       if mine is None else f"Your answer: {plain(question.choices[mine])}. You can change it "
                                            "until the teacher closes the round.")
        else:
            st.caption("The round is closed: discuss, and wait for the teacher.")


def answer_on_chart(seat, kind: str, layer: int, choice: int) -> bool:
    """A click on the view's chart (a head of the all-heads grid at layer) as this follower's answer to the class's
    open question of kind: choice, an index into its choices. Whether it was one: the click then opens nothing, and
    the student keeps following. seat: the page's seat.Seat."""
    if seat.role != "follower" or not seat.following:
        return False
    try:
        asked = stores.questions().current(seat.code)
    except StoreUnavailable:
        return False
    who = voter()
    if asked is None or asked.state != OPEN or asked.question.kind != kind or who is None \
            or dict(asked.question.view).get("layer") != str(layer) or not 0 <= choice < len(asked.question.choices):
        return False
    if _cast(seat.code, who, choice):
        st.session_state.pop(_pills_key(asked), None)  # the pills show it at the next run
        st.toast(f"Your answer: {plain(asked.question.choices[choice])}", icon=":material/how_to_vote:")
    return True


def _pills_key(asked: Asked) -> str:
    """The key of the answer's pills: a new widget for each question and round, which starts unanswered."""
    return f"quiz_vote_{asked.number}_{asked.round}"


def _vote(code: str, widget: str) -> None:
    choice, who = st.session_state.get(widget), voter()
    if choice is not None and who is not None:
        _cast(code, who, int(choice))


def _cast(code: str, who: str, choice: int) -> bool:
    try:
        if stores.questions().vote(code, who, choice):
            return True
        st.toast("Your answer was not counted: the round has closed.", icon=":material/lock:")
    except StoreUnavailable:
        st.toast("Your answer could not be sent: the class's store does not answer.", icon=":material/cloud_off:")
    return False


def _heading(asked: Asked) -> None:
    round_name = "" if asked.round == 1 else " · second vote"
    st.markdown(f"**Question {asked.number}{round_name}:** {plain(asked.question.prompt)}")


def _choices_list(question: Question) -> None:
    """The choices as the teacher reads them out: a numbered list, or one line when there are many (the tokens)."""
    if len(question.choices) > 6:
        st.markdown(" · ".join(plain(choice) for choice in question.choices))
        return
    st.markdown("\n".join(f"{number}. {plain(choice)}" for number, choice in enumerate(question.choices, start=1)))


def _revealed(asked: Asked) -> None:
    """The page's answer first (a projector shows the top of the card), then the class's bars, then how the page
    computed its answer."""
    from components.classroom.question_results import answers_chart  # Altair: never before the sidebar is drawn

    question = asked.question
    if question.answer is None:
        st.caption("The teacher's own question: the page computed no answer.")
    else:
        st.success(f"The page's answer: **{plain(question.choices[question.answer])}**",
                   icon=":material/check_circle:")
    st.altair_chart(answers_chart(asked, min(MAX_CHART_PX, viewport.current().main_px - 40)), width="content")
    if question.why:
        st.caption(plain(question.why))


def _download(code: str, key: str) -> None:
    from components.classroom.question_results import results_csv  # pandas: never before the sidebar is drawn

    try:
        results = stores.questions().results(code, key)
    except StoreUnavailable:
        return
    if results:
        st.download_button("Download the class's answers (CSV)", results_csv(results), file_name=f"class-{code}.csv",
                           mime="text/csv", key="quiz_csv", icon=":material/download:")


def _full(code: str, key: str, number: int) -> Question:
    return next(asked.question for asked in stores.questions().results(code, key) or () if asked.number == number)


def _act(action: Callable[[], object], send_again: Callable[[], None], refused: str = "") -> bool:
    """A teacher's move on the round; the class then reads it. Whether the store took it."""
    def move() -> bool:
        if action() in (None, False):
            if refused:
                st.toast(refused, icon=":material/block:")
            return False
        send_again()
        return True

    return _guarded(move)


def _guarded(move: Callable[[], object]) -> object:
    """move()'s answer, or False when the class's store does not answer (said in a toast)."""
    try:
        return move()
    except StoreUnavailable:
        st.toast("The class's store does not answer right now: try again in a moment.", icon=":material/cloud_off:")
        return False
