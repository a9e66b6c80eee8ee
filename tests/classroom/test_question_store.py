"""The question store (components/server/question_store.py): in memory and in a real redis-server, the same rounds.

A question asked, answered (a voter changing its mind counts once), closed, voted on again, revealed; counts that
no page reads before the reveal; the teacher's key and nothing else moving a round; strangers' votes and codes
leaving nothing behind; the caps; everything gone with the class.
"""

from __future__ import annotations

import secrets
import time

import pytest
import redis as redis_client

from components.caches.stores import questions_beside
from components.server.class_store import new_code
from components.server.class_store_redis import RedisStore
from components.server.question_store import (
    CLOSED,
    MAX_QUESTIONS,
    MAX_VOTERS,
    OPEN,
    REVEALED,
    MemoryQuestions,
    Question,
)
from components.server.question_store_redis import RedisQuestions

QUESTION = Question("previous", "Which of these heads is a previous-token head?", ("head 0", "head 1", "head 2"),
                    answer=1, why="head 1 puts 0.61 of its weight on the token before",
                    view=(("view", "heads"), ("layer", "2"), ("head", "1")))


@pytest.fixture
def stores(make_store):
    """A factory of a class store and the question store beside it: stores(lifetime_s=...)."""
    def beside(**options):
        classes = make_store(**options)
        return classes, questions_beside(classes)
    return beside


def voter() -> str:
    return secrets.token_urlsafe(16)


def test_the_questions_are_kept_where_the_classes_are(stores):
    classes, questions = stores()
    assert isinstance(questions, RedisQuestions if isinstance(classes, RedisStore) else MemoryQuestions)


def test_a_round_counts_one_vote_per_voter_and_hides_the_counts_until_the_reveal(stores):
    classes, questions = stores()
    code, key = classes.create({})
    assert questions.current(code) is None
    assert questions.ask(code, key, QUESTION) == 1
    asked = questions.current(code)
    assert (asked.number, asked.state, asked.round) == (1, OPEN, 1)
    assert asked.question.choices == QUESTION.choices
    assert asked.question.answer is None and asked.question.why == "" and asked.counts == ()
    assert asked.question.view == (("layer", "2"),)  # the reveal's view stands at the answer's head
    changes_mind, reloads, third = voter(), voter(), voter()
    assert questions.vote(code, changes_mind, 0)
    assert questions.vote(code, changes_mind, 2)  # changed: still one vote
    assert questions.vote(code, reloads, 1) and questions.vote(code, reloads, 1)  # a reload votes again: one vote
    assert questions.vote(code, third, 1)
    assert questions.my_vote(code, changes_mind) == 2 and questions.my_vote(code, voter()) is None
    assert questions.answered(code, key) == 3
    assert questions.current(code).counts == ()
    assert questions.close(code, key)
    assert not questions.vote(code, voter(), 0)  # closed: nobody answers
    assert questions.current(code).state == CLOSED and questions.current(code).counts == ()
    assert questions.second_vote(code, key)
    assert questions.answered(code, key) == 0 and questions.my_vote(code, reloads) is None
    assert questions.vote(code, changes_mind, 1) and questions.vote(code, reloads, 1)
    assert not questions.second_vote(code, key)  # a round 2 is the last
    assert questions.reveal(code, key)
    revealed = questions.current(code)
    assert revealed.state == REVEALED and revealed.question == QUESTION
    assert revealed.counts == ((0, 2, 1), (0, 2, 0))
    assert not questions.vote(code, third, 0)
    assert questions.results(code, key) == [revealed]


def test_only_the_teachers_key_asks_moves_and_reads_the_round(stores):
    classes, questions = stores()
    code, key = classes.create({})
    other_code, other_key = classes.create({})
    for wrong in ("", "x", key[:-1], key + "a", other_key, "<b>" * 8):
        assert questions.ask(code, wrong, QUESTION) is None, wrong
    assert questions.ask(code, key, QUESTION) == 1
    questions.vote(code, voter(), 0)
    for wrong in ("", key[:-1], other_key):
        assert questions.answered(code, wrong) is None
        assert questions.results(code, wrong) is None
        assert not questions.close(code, wrong) and not questions.reveal(code, wrong)
    assert questions.current(code).state == OPEN and questions.current(code).counts == ()
    assert questions.current(other_code) is None and questions.results(other_code, other_key) == []


def test_votes_that_are_no_votes_count_nothing(stores):
    classes, questions = stores()
    code, key = classes.create({})
    assert not questions.vote(code, voter(), 0)  # nothing asked yet
    questions.ask(code, key, QUESTION)
    for who, choice in ((voter(), 3), (voter(), -1), ("short", 0), ("<script>alert(1)</script>", 0),
                        ("a" * 65, 0)):
        assert not questions.vote(code, who, choice), (who, choice)
    assert questions.answered(code, key) == 0


def test_a_round_counts_at_most_the_classs_followers(stores):
    classes, questions = stores()
    code, key = classes.create({})
    questions.ask(code, key, QUESTION)
    voters = [voter() for _ in range(MAX_VOTERS)]
    assert all(questions.vote(code, who, 0) for who in voters)
    assert not questions.vote(code, voter(), 0)
    assert questions.vote(code, voters[0], 1)  # one already counted may still change its mind
    assert questions.answered(code, key) == MAX_VOTERS


def test_a_class_asks_at_most_max_questions_and_bounds_what_a_question_holds(stores):
    classes, questions = stores()
    code, key = classes.create({})
    for number in range(1, MAX_QUESTIONS + 1):
        assert questions.ask(code, key, QUESTION) == number
    assert questions.ask(code, key, QUESTION) is None
    with pytest.raises(ValueError):
        Question("own", "?", ("only one",))
    with pytest.raises(ValueError):
        Question("own", "?", tuple("abcdefg"))
    with pytest.raises(ValueError):
        Question("own", "x" * 301, ("a", "b"))
    with pytest.raises(ValueError):
        Question("own", "?", ("a", "b"), answer=2)
    with pytest.raises(ValueError):
        Question("sql", "?", ("a", "b"))


def test_strangers_codes_leave_nothing(stores):
    classes, questions = stores()
    codes = [new_code() for _ in range(20)]
    for code in codes:
        assert not questions.vote(code, voter(), 0)
        assert questions.current(code) is None and questions.my_vote(code, voter()) is None
        assert questions.ask(code, secrets.token_urlsafe(24), QUESTION) is None
        assert questions.answered(code, secrets.token_urlsafe(24)) is None
    if isinstance(classes, RedisStore):
        client = redis_client.Redis.from_url(_url(classes))
        assert not any(client.exists(questions._name(code), questions._votes(code)) for code in codes)
    else:
        assert questions._boards == {}


def test_the_questions_end_with_the_class(stores):
    classes, questions = stores(lifetime_s=0.3)
    code, key = classes.create({})
    questions.ask(code, key, QUESTION)
    questions.vote(code, voter(), 1)
    if isinstance(classes, RedisStore):
        client = redis_client.Redis.from_url(_url(classes))
        class_at = client.pexpiretime(classes._name(code))
        assert client.pexpiretime(questions._name(code)) == class_at == client.pexpiretime(questions._votes(code))
    time.sleep(0.5)
    assert questions.current(code) is None and not questions.vote(code, voter(), 0)
    other, other_key = classes.create({})
    questions.ask(other, other_key, QUESTION)
    if isinstance(classes, RedisStore):
        assert not client.exists(questions._name(code), questions._votes(code))
    else:
        assert set(questions._boards) == {other}


def _url(classes: RedisStore) -> str:
    kwargs = classes._redis.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs.get('db', 0)}"
