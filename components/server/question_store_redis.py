"""The class's questions in Redis, for every replica: the same rounds as question_store.MemoryQuestions, in the Redis
of a class_store.RedisStore, each write one Lua script that Redis runs whole.

Per class, two hashes beside the class's own: its questions (their JSON, state, round and tallies) and its votes (a
voter's choice per question and round), both taking the class's expiry time whenever they are written or the teacher
reads them. Every script checks first that the class is live; a teacher's script checks that the class still holds
the key hash checked (in constant time, in Python), as the class store's do. After an End, what is left can no longer
be read (the class is gone) and goes at the class's expiry time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from components.server.class_store import key_matches
from components.server.class_store_redis import RedisStore
from components.server.question_store import (
    MAX_CHOICES,
    MAX_QUESTIONS,
    MAX_VOTERS,
    MOVES,
    REVEALED,
    Asked,
    Question,
    RoundMoves,
    valid_voter,
)

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


class RedisQuestions(RoundMoves):
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
        states, to, second = MOVES[move]
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
