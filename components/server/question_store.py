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

Two stores behind one interface, as the class store: MemoryQuestions (beside a class_store.MemoryStore) and
RedisQuestions (in the same Redis as a class_store.RedisStore, each write one Lua script).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from components.server import class_store
from components.server.class_store import MemoryStore, RedisStore, StoreUnavailable, key_matches

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
        """The question as a page reads it before the reveal: no answer, no explanation."""
        return replace(self, answer=None, why="")


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


def for_classes(classes: class_store.ClassStore) -> QuestionStore:
    """The question store beside a class store: in its memory, or in its Redis."""
    if isinstance(classes, RedisStore):
        return RedisQuestions(classes)
    if isinstance(classes, MemoryStore):
        return MemoryQuestions(classes)
    raise TypeError(f"no question store goes beside a {type(classes).__name__}")


def valid_voter(voter: str) -> bool:
    return bool(_VOTER.fullmatch(voter))


# What moves a round on: the states it may be in, the state it goes to, and whether a closed round 1 becomes an open
# round 2.
_MOVES = {"close": ((OPEN,), CLOSED, False), "second_vote": ((CLOSED,), OPEN, True),
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


class MemoryQuestions:
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

    def close(self, code: str, key: str) -> bool:
        return self._move(code, key, "close")

    def second_vote(self, code: str, key: str) -> bool:
        return self._move(code, key, "second_vote")

    def reveal(self, code: str, key: str) -> bool:
        return self._move(code, key, "reveal")

    def results(self, code: str, key: str) -> list[Asked] | None:
        if not self._classes.teaches(code, key):
            return None
        with self._lock:
            return [Asked(number, asked.question, asked.state, asked.round, asked.counts())
                    for number, asked in enumerate(self._boards.get(code, ()), start=1)]

    def _move(self, code: str, key: str, move: str) -> bool:
        if not self._classes.teaches(code, key):
            return False
        states, to, second = _MOVES[move]
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


# Every script's first lines: the class must be live; its questions' keys then take the class's expiry time. In the
# class's questions' hash: n (questions asked), current, and per question i: q<i> (the question, JSON), k<i> (its
# number of choices), s<i> (state), r<i> (round), c<i>:<round> (voters) and c<i>:<round>:<choice> (their choices).
# The votes' hash: <i>:<round>:<voter> -> choice.
_FOLLOW_CLASS = """
local class_at = redis.call('PEXPIRETIME', KEYS[1])
if class_at < 0 then return false end
"""
_EXPIRE_WITH_CLASS = """
redis.call('PEXPIREAT', KEYS[2], class_at)
redis.call('PEXPIREAT', KEYS[3], class_at)
"""
# KEYS class, questions, votes; ARGV the teacher's key hash checked, the question (JSON), its choices, MAX_QUESTIONS.
_ASK = _FOLLOW_CLASS + """
if redis.call('HGET', KEYS[1], 'key_hash') ~= ARGV[1] then return false end
local n = tonumber(redis.call('HGET', KEYS[2], 'n') or '0')
if n >= tonumber(ARGV[4]) then return false end
n = n + 1
redis.call('HSET', KEYS[2], 'n', n, 'current', n, 'q' .. n, ARGV[2], 'k' .. n, ARGV[3], 's' .. n, 'open',
           'r' .. n, 1, 'c' .. n .. ':1', 0)
""" + _EXPIRE_WITH_CLASS + "return n"
# KEYS class, questions, votes; ARGV the voter, the choice, MAX_VOTERS.
_VOTE = _FOLLOW_CLASS + """
local i = redis.call('HGET', KEYS[2], 'current')
if not i or redis.call('HGET', KEYS[2], 's' .. i) ~= 'open' then return false end
local choice = tonumber(ARGV[2])
if choice < 0 or choice >= tonumber(redis.call('HGET', KEYS[2], 'k' .. i)) then return false end
local tally = 'c' .. i .. ':' .. redis.call('HGET', KEYS[2], 'r' .. i)
local field = tally .. ':' .. ARGV[1]
local before = redis.call('HGET', KEYS[3], field)
if before then
  redis.call('HINCRBY', KEYS[2], tally .. ':' .. before, -1)
elseif tonumber(redis.call('HGET', KEYS[2], tally)) >= tonumber(ARGV[3]) then
  return false
else
  redis.call('HINCRBY', KEYS[2], tally, 1)
end
redis.call('HSET', KEYS[3], field, choice)
redis.call('HINCRBY', KEYS[2], tally .. ':' .. choice, 1)
""" + _EXPIRE_WITH_CLASS + "return 1"
# KEYS class, questions, votes; ARGV the key hash checked, the states the round may be in (comma-separated), the
# state it goes to, "1" when a closed round 1 becomes an open round 2.
_MOVE = _FOLLOW_CLASS + """
if redis.call('HGET', KEYS[1], 'key_hash') ~= ARGV[1] then return false end
local i = redis.call('HGET', KEYS[2], 'current')
if not i then return false end
local state, round = redis.call('HGET', KEYS[2], 's' .. i), redis.call('HGET', KEYS[2], 'r' .. i)
if not string.find(',' .. ARGV[2] .. ',', ',' .. state .. ',', 1, true) then return false end
if ARGV[4] == '1' then
  if round ~= '1' then return false end
  redis.call('HSET', KEYS[2], 'r' .. i, 2, 'c' .. i .. ':2', 0)
end
redis.call('HSET', KEYS[2], 's' .. i, ARGV[3])
""" + _EXPIRE_WITH_CLASS + "return 1"
# KEYS class, questions, votes; ARGV the key hash checked. The teacher's read: the class's questions' hash (whose
# size MAX_QUESTIONS bounds), with their expiry renewed, so that they last as long as the class.
_TEACHERS_READ = _FOLLOW_CLASS + """
if redis.call('HGET', KEYS[1], 'key_hash') ~= ARGV[1] then return false end
""" + _EXPIRE_WITH_CLASS + "return redis.call('HGETALL', KEYS[2])"
# KEYS class, questions; the current question's fields, for any page, with no write.
_CURRENT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local i = redis.call('HGET', KEYS[2], 'current')
if not i then return false end
return {i, redis.call('HGET', KEYS[2], 'q' .. i), redis.call('HGET', KEYS[2], 's' .. i),
        redis.call('HGET', KEYS[2], 'r' .. i)}
"""

# KEYS class, questions, votes; ARGV the voter: its choice in the current round, with no write.
_MY_VOTE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local i = redis.call('HGET', KEYS[2], 'current')
if not i then return false end
return redis.call('HGET', KEYS[3], 'c' .. i .. ':' .. redis.call('HGET', KEYS[2], 'r' .. i) .. ':' .. ARGV[1])
"""


class RedisQuestions:
    """The questions in the Redis of a class_store.RedisStore: per class a hash of its questions and their tallies
    and a hash of its votes, both expiring with the class."""

    def __init__(self, classes: RedisStore) -> None:
        self._classes = classes
        self._redis = classes._redis
        self._ask = self._redis.register_script(_ASK)
        self._vote = self._redis.register_script(_VOTE)
        self._move_script = self._redis.register_script(_MOVE)
        self._teachers_read = self._redis.register_script(_TEACHERS_READ)
        self._current = self._redis.register_script(_CURRENT)
        self._my_vote = self._redis.register_script(_MY_VOTE)

    def ask(self, code: str, key: str, question: Question) -> int | None:
        with self._reaching():
            checked = self._checked(code, key)
            if checked is None:
                return None
            number = self._ask(self._keys(code), [checked, question.to_json(), len(question.choices), MAX_QUESTIONS])
        return None if number is None else int(number)

    def vote(self, code: str, voter: str, choice: int) -> bool:
        if not valid_voter(voter) or not 0 <= choice < MAX_CHOICES:
            return False
        with self._reaching():
            return bool(self._vote(self._keys(code), [voter, choice, MAX_VOTERS]))

    def current(self, code: str) -> Asked | None:
        with self._reaching():
            fields = self._current(self._keys(code)[:2])
            if not fields:
                return None
            number, spec, state, round_ = int(fields[0]), fields[1], fields[2].decode(), int(fields[3])
            question = Question.from_json(spec)
            if state != REVEALED:
                return Asked(number, question.hidden(), state, round_)
            tallies = self._redis.hgetall(self._name(code))
        return Asked(number, question, state, round_, _counts(_text(tallies), number, question, round_))

    def my_vote(self, code: str, voter: str) -> int | None:
        if not valid_voter(voter):
            return None
        with self._reaching():
            chosen = self._my_vote(self._keys(code), [voter])
        return None if chosen is None else int(chosen)

    def answered(self, code: str, key: str) -> int | None:
        board = self._board(code, key)
        if not board or "current" not in board:
            return None
        number = board["current"]
        return int(board[f"c{number}:{board['r' + number]}"])

    def close(self, code: str, key: str) -> bool:
        return self._move(code, key, "close")

    def second_vote(self, code: str, key: str) -> bool:
        return self._move(code, key, "second_vote")

    def reveal(self, code: str, key: str) -> bool:
        return self._move(code, key, "reveal")

    def results(self, code: str, key: str) -> list[Asked] | None:
        board = self._board(code, key)
        if board is None:
            return None
        asked = []
        for number in range(1, int(board.get("n", 0)) + 1):
            question, round_ = Question.from_json(board[f"q{number}"]), int(board[f"r{number}"])
            asked.append(Asked(number, question, board[f"s{number}"], round_,
                               _counts(board, number, question, round_)))
        return asked

    def _move(self, code: str, key: str, move: str) -> bool:
        states, to, second = _MOVES[move]
        with self._reaching():
            checked = self._checked(code, key)
            if checked is None:
                return False
            return bool(self._move_script(self._keys(code), [checked, ",".join(states), to, "1" if second else "0"]))

    def _board(self, code: str, key: str) -> dict[str, str] | None:
        """The class's questions' hash, for its teacher only (None for anyone else, or an ended class)."""
        with self._reaching():
            checked = self._checked(code, key)
            if checked is None:
                return None
            flat = self._teachers_read(self._keys(code), [checked])
        if flat is None:
            return None
        return _text(dict(zip(flat[::2], flat[1::2], strict=True)))

    def _checked(self, code: str, key: str) -> bytes | None:
        """The class's key hash when key is its teacher's (compared in constant time), for the scripts to check
        that it is still the class's when they write."""
        stored = self._redis.hget(self._classes._name(code), "key_hash")
        return stored if stored is not None and key_matches(key, stored) else None

    def _keys(self, code: str) -> list[str]:
        return [self._classes._name(code), self._name(code), self._votes(code)]

    def _name(self, code: str) -> str:
        return self._classes._name(code) + ":questions"

    def _votes(self, code: str) -> str:
        return self._classes._name(code) + ":votes"

    @contextlib.contextmanager
    def _reaching(self) -> Iterator[None]:
        with self._classes._reaching():
            yield


def _counts(board: dict[str, str], number: int, question: Question, rounds: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(board.get(f"c{number}:{round_}:{choice}", 0)) for choice in range(len(question.choices)))
                 for round_ in range(1, rounds + 1))


def _text(fields: dict) -> dict[str, str]:
    return {_decoded(name): _decoded(value) for name, value in fields.items()}


def _decoded(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


__all__ = ["Asked", "MemoryQuestions", "Question", "QuestionStore", "RedisQuestions", "StoreUnavailable",
           "for_classes"]
