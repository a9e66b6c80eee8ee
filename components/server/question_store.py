"""The questions a teacher asks the class, and the students' answers: beside the class store, with no Streamlit.

A class holds at most MAX_QUESTIONS questions, one of them current. A question is its text, 2 to MAX_CHOICES
choices, the page's own answer (an index into the choices, None for the teacher's own question), how the page
computed it, and the view that shows why. Its round is open (students answer, and may change their answer), closed
(nobody answers; the teacher may open a second vote) or revealed (the counts of each round and the answer are read
by every page). Before the reveal, the store hands out no count but the teacher's number of answers.

A vote is one choice per voter per round: the voter is an id the student's browser keeps (a cookie, made by the
page's script; components/classroom/questions.py), so that a reload or a second tab changes that vote and adds
none. No name, no address: only the choice, under a random id. A round counts at most MAX_VOTERS voters (the
class's cap of followers); a vote for a code that is no live class, or a question that is not open, writes nothing.

Only the teacher's key (checked by the class store's own key_matches, in constant time) asks, closes, opens a second
vote, reveals and reads the results. Everything a class's questions hold expires with the class: the memory store
forgets them once the class store no longer knows the class; in Redis the two hashes (the class's questions, its
votes) take the class's own expiry time each time they are written or read by the teacher.

Two stores behind one interface, as the class store: MemoryQuestions, here, beside a class_store.MemoryStore, and
RedisQuestions (question_store_redis.py) in the same Redis as a class_store_redis.RedisStore, each write one Lua script;
components/caches/class_questions.py puts the one beside the server's class store.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Protocol

from components.server import class_store
from components.server.class_store import MemoryStore, StoreUnavailable

MAX_QUESTIONS = 30  # of one class: a lesson asks a handful
MAX_CHOICES = 24  # a computed question's choices (the text's tokens); the teacher's own has at most OWN_CHOICES
OWN_CHOICES = range(2, 7)  # how many choices a teacher's own question may have
MAX_PROMPT_CHARS = 300
MAX_CHOICE_CHARS = 80
MAX_WHY_CHARS = 600
MAX_VIEW_ENTRIES, MAX_VIEW_CHARS = 20, 200  # the view that shows why: FOLLOWED parameters, as the URL writes them
MAX_VOTERS = class_store.MAX_FOLLOWERS
KINDS = ("key", "previous", "mask", "entropy", "own")
ROUNDS = 2  # a first vote, and a second after discussion
OPEN, CLOSED, REVEALED = "open", "closed", "revealed"
# The teacher's page reads its count of answers this often while a round is open (questions.py): current within 1 s.
COUNT_S = 0.5
_VOTER = re.compile(r"[A-Za-z0-9_-]{16,64}")


@dataclass(frozen=True)
class Question:
    """What the teacher asks, and what the page computed: answer (an index into choices) and why, which pages read
    only after the reveal; view, the FOLLOWED parameters of the view that shows why."""

    kind: str
    prompt: str
    choices: tuple[str, ...]
    answer: int | None = None
    why: str = ""
    view: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        """Raise ValueError when the question is beyond the store's bounds (the page keeps its input inside them)."""
        if self.kind not in KINDS:
            raise ValueError(f"a question's kind is one of {KINDS}, not {self.kind[:20]!r}")
        if not 0 < len(self.prompt) <= MAX_PROMPT_CHARS:
            raise ValueError(f"a question's text has 1 to {MAX_PROMPT_CHARS} characters")
        allowed = OWN_CHOICES if self.kind == "own" else range(2, MAX_CHOICES + 1)
        if len(self.choices) not in allowed:
            raise ValueError(f"a question has {allowed.start} to {allowed.stop - 1} choices")
        if any(not 0 < len(choice) <= MAX_CHOICE_CHARS for choice in self.choices):
            raise ValueError(f"a choice has 1 to {MAX_CHOICE_CHARS} characters")
        if self.answer is not None and not 0 <= self.answer < len(self.choices):
            raise ValueError("the answer is one of the choices")
        if len(self.why) > MAX_WHY_CHARS:
            raise ValueError(f"how the answer was computed takes at most {MAX_WHY_CHARS} characters")
        too_long = any(len(name) + len(value) > MAX_VIEW_CHARS for name, value in self.view)
        if len(self.view) > MAX_VIEW_ENTRIES or too_long:
            raise ValueError("the view that shows why is a few short parameters")

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "prompt": self.prompt, "choices": list(self.choices),
                           "answer": self.answer, "why": self.why, "view": [list(pair) for pair in self.view]})

    @classmethod
    def from_json(cls, text: str | bytes) -> Question:
        data = json.loads(text)
        return cls(data["kind"], data["prompt"], tuple(data["choices"]), data["answer"], data["why"],
                   tuple((name, value) for name, value in data["view"]))

    def hidden(self) -> Question:
        """The question as a page reads it before the reveal: no answer, no explanation, and of the view that shows
        why only its layer (a previous-token head's view stands at the answer's head)."""
        return replace(self, answer=None, why="", view=tuple((name, value) for name, value in self.view
                                                               if name == "layer"))


@dataclass(frozen=True)
class Asked:
    """A question of the class as the store hands it out: its number (from 1), its state, which round is on, and
    the counts of each round so far (per choice), which the class reads only once revealed."""

    number: int
    question: Question
    state: str
    round: int
    counts: tuple[tuple[int, ...], ...] = ()


class QuestionStore(Protocol):
    def ask(self, code: str, key: str, question: Question) -> int | None:
        """Make question the class's current one, round 1 open; its number, or None for a wrong key, an ended class
        or a class that has asked MAX_QUESTIONS already."""

    def vote(self, code: str, voter: str, choice: int) -> bool:
        """Count choice as voter's answer to the open round (replacing its earlier one); False when nothing is open,
        the choice or the voter id is not one, or the round counts MAX_VOTERS other voters already."""

    def current(self, code: str) -> Asked | None:
        """What every page may read of the current question: the answer, why and the counts only once revealed."""

    def my_vote(self, code: str, voter: str) -> int | None:
        """voter's choice in the current round, or None."""

    def answered(self, code: str, key: str) -> int | None:
        """For the teacher: how many have answered the current round (never who, nor what)."""

    def close(self, code: str, key: str) -> bool: ...

    def second_vote(self, code: str, key: str) -> bool:
        """Open round 2 of a closed round 1."""

    def reveal(self, code: str, key: str) -> bool: ...

    def results(self, code: str, key: str) -> list[Asked] | None:
        """For the teacher: every question of the class, with its answer and counts."""


def valid_voter(voter: str) -> bool:
    return bool(_VOTER.fullmatch(voter))


# What moves a round on: the states it may be in, the state it goes to, and whether a closed round 1 becomes an open
# round 2.
MOVES = {"close": ((OPEN,), CLOSED, False), "second_vote": ((CLOSED,), OPEN, True),
          "reveal": ((OPEN, CLOSED), REVEALED, False)}


@dataclass
class _Asked:
    question: Question
    state: str = OPEN
    round: int = 1
    votes: list[dict[str, int]] = field(default_factory=lambda: [{}])  # per round: voter -> choice

    def counts(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(sum(1 for chosen in votes.values() if chosen == choice)
                           for choice in range(len(self.question.choices))) for votes in self.votes)


class RoundMoves:
    """The teacher's three moves of a round, each a _move(code, key, move) that every store writes its own way:
    a move of MOVES, allowed from the round's state, by the class's teacher only."""

    def _move(self, code: str, key: str, move: str) -> bool:
        raise NotImplementedError

    def close(self, code: str, key: str) -> bool:
        return self._move(code, key, "close")

    def second_vote(self, code: str, key: str) -> bool:
        return self._move(code, key, "second_vote")

    def reveal(self, code: str, key: str) -> bool:
        return self._move(code, key, "reveal")


class MemoryQuestions(RoundMoves):
    """The questions of one server process's classes, under one lock, kept while the class store knows the class."""

    def __init__(self, classes: MemoryStore) -> None:
        self._classes = classes
        self._boards: dict[str, list[_Asked]] = {}
        self._lock = threading.Lock()

    def ask(self, code: str, key: str, question: Question) -> int | None:
        if not self._classes.teaches(code, key):
            return None
        with self._lock:
            self._drop_ended()
            board = self._boards.setdefault(code, [])
            if len(board) >= MAX_QUESTIONS:
                return None
            board.append(_Asked(question))
            return len(board)

    def vote(self, code: str, voter: str, choice: int) -> bool:
        if not valid_voter(voter) or self._classes.read(code) is None:
            return False
        with self._lock:
            asked = self._last(code)
            if asked is None or asked.state != OPEN or not 0 <= choice < len(asked.question.choices):
                return False
            votes = asked.votes[asked.round - 1]
            if voter not in votes and len(votes) >= MAX_VOTERS:
                return False
            votes[voter] = choice
            return True

    def current(self, code: str) -> Asked | None:
        if self._classes.read(code) is None:
            return None
        with self._lock:
            asked = self._last(code)
            return None if asked is None else _public(len(self._boards[code]), asked)

    def my_vote(self, code: str, voter: str) -> int | None:
        if self._classes.read(code) is None:
            return None
        with self._lock:
            asked = self._last(code)
            return None if asked is None else asked.votes[asked.round - 1].get(voter)

    def answered(self, code: str, key: str) -> int | None:
        if not self._classes.teaches(code, key):
            return None
        with self._lock:
            asked = self._last(code)
            return None if asked is None else len(asked.votes[asked.round - 1])

    def results(self, code: str, key: str) -> list[Asked] | None:
        if not self._classes.teaches(code, key):
            return None
        with self._lock:
            return [Asked(number, asked.question, asked.state, asked.round, asked.counts())
                    for number, asked in enumerate(self._boards.get(code, ()), start=1)]

    def _move(self, code: str, key: str, move: str) -> bool:
        if not self._classes.teaches(code, key):
            return False
        states, to, second = MOVES[move]
        with self._lock:
            asked = self._last(code)
            if asked is None or asked.state not in states or (second and asked.round != 1):
                return False
            asked.state = to
            if second:
                asked.round = 2
                asked.votes.append({})
            return True

    def _last(self, code: str) -> _Asked | None:
        board = self._boards.get(code)
        return board[-1] if board else None

    def _drop_ended(self) -> None:
        """Forget the questions of classes that have ended (the class store no longer reads them)."""
        for code in list(self._boards):
            if self._classes.read(code) is None:
                del self._boards[code]


def _public(number: int, asked: _Asked) -> Asked:
    if asked.state == REVEALED:
        return Asked(number, asked.question, asked.state, asked.round, asked.counts())
    return Asked(number, asked.question.hidden(), asked.state, asked.round)


__all__ = ["Asked", "MemoryQuestions", "Question", "QuestionStore", "StoreUnavailable"]
