"""A class across two replicas behind nginx (deploy/nginx.conf), sharing a real redis-server (issue 19).

The replicas run with ATTENTION_ANATOMY_CLASS_STORE=redis://… . The teacher's browser opens ?teach=1 through
the proxy; students' browsers open the link it shows until one lands on the other replica (which replica got a
websocket is read from each replica's /_stcore/metrics). Then:

- the student on the other replica follows the teacher's head and view, and its URL says so;
- Redis stops answering (SIGSTOP, so that calls wait rather than fail at once): the student's page says the
  class cannot be reached and keeps what it shows, the teacher's page keeps working and says its students cannot
  get its changes; once Redis answers again the student catches up with the teacher's latest head.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from components.classroom.class_store import STORE_ENV
from harness.browser import expect_head, launch_chromium, move_head_to
from harness.nginx import REPLICA_ENV, Proxy, nginx_proxy, open_on_replica
from harness.redis import Redis, redis_server
from harness.server import APP, port_of, streamlit_server
from tests.marks import NEEDS_CHROMIUM, NEEDS_NGINX, NEEDS_REDIS

pytestmark = [pytest.mark.deploy, pytest.mark.long, *NEEDS_NGINX, *NEEDS_CHROMIUM, *NEEDS_REDIS]

TEXT = "two servers share one class"
MAX_STUDENT_TRIES = 12  # the route cookie is random: all on the teacher's replica is a chance of 1 in 4,096


@dataclass
class Cluster:
    replicas: list[str]
    proxy: Proxy
    redis: Redis
    browser: object
    folder: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=30_000)  # two servers, nginx, Redis and a browser share 2 cores
    folder = tmp_path_factory.mktemp("class-replicas")
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server(folder / "redis"))
        env = {**REPLICA_ENV, STORE_ENV: redis.url}
        replicas = [stack.enter_context(streamlit_server(APP, env=env, log_path=folder / f"replica{i}.log"))
                    for i in range(2)]
        proxy = stack.enter_context(nginx_proxy(tuple(port_of(url) for url in replicas), folder / "nginx"))
        browser = launch_chromium(stack.enter_context(sync_playwright()), optimised_js=False)
        stack.callback(browser.close)
        yield Cluster(replicas, proxy, redis, browser, folder)


@pytest.fixture(scope="module")
def classroom(cluster):
    """The teacher's page, its replica, and a student's page on the other replica."""
    from playwright.sync_api import expect

    teachers_url = f"{cluster.proxy.url}/?teach=1&text={TEXT.replace(' ', '+')}"
    teacher, teachers_replica = open_on_replica(cluster.browser, teachers_url, cluster.replicas)
    expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}&key="))
    # The link's own code block: a loopback link's warning beside it names a server option in code too.
    link_code = '[data-testid="stSidebar"] [data-testid="stExpander"] [data-testid="stCode"] code'
    link = teacher.locator(link_code).inner_text().strip()
    assert link.startswith(cluster.proxy.url), f"the students' link must go through the proxy: {link}"
    others = []
    for _ in range(MAX_STUDENT_TRIES):
        student, replica = open_on_replica(cluster.browser, link, cluster.replicas)
        if replica != teachers_replica:
            break
        others.append(student)
    else:
        pytest.fail(f"{MAX_STUDENT_TRIES} students all landed on the teacher's replica: nothing spreads them")
    yield teacher, student
    for page in [teacher, student, *others]:
        page.context.close()


def test_a_student_on_the_other_replica_follows_the_teacher(classroom):
    from playwright.sync_api import expect

    teacher, student = classroom
    expect(student.get_by_text("Following the teacher")).to_be_visible()
    move_head_to(teacher, 3)
    expect_head(student, 3)
    expect(student).to_have_url(re.compile(r"[?&]head=3(&|$)"))
    expect(teacher.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"\d+ students? following"))
           ).to_be_visible()


def test_redis_down_the_student_keeps_its_page_the_teacher_keeps_teaching(cluster, classroom):
    from playwright.sync_api import expect

    teacher, student = classroom
    move_head_to(teacher, 4)
    expect_head(student, 4)
    cluster.redis.pause()
    try:
        expect(student.get_by_text("The class cannot be reached right now")).to_be_visible()
        expect_head(student, 4)
        move_head_to(teacher, 6)  # the teacher's page answers as ever
        expect(teacher.get_by_text("Your students cannot get your changes right now")).to_be_visible()
        expect_head(student, 4)
    finally:
        cluster.redis.resume()
    expect_head(student, 6)  # the change the store missed reaches the class once it answers
    expect(student.get_by_text("The class cannot be reached right now")).to_have_count(0)
    expect(teacher.get_by_text("Your students cannot get your changes right now")).to_have_count(0)
