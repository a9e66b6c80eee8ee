"""Two replicas of the app behind nginx (deploy/nginx.conf, as committed), driven by real browsers.

Starts a real redis-server, two `streamlit run` processes sharing it as their class store
(ATTENTION_ANATOMY_CLASS_STORE=redis://…), and nginx in front of them on loopback, once for the module (a pair of
replicas costs some 20 s of CPU to start), then opens sessions through the proxy, each in its own browser
context (so its own cookies):

- sessions are spread over both replicas, and every request of one browser (the page, its static
  files, /_stcore/health, its websocket, the /media/ file of a download) reaches the same replica;
- a session keeps its state across reruns (the heatmap's head input moves; the URL, the heading and the
  heatmap follow);
- the proxy passes Host through, so Streamlit's websocket Origin check (server.enableCORS, on) accepts
  the app's own origin under any host name and still refuses a foreign one;
- a link holding the longest texts the page takes opens the page with them;
- a class across the replicas: the teacher opens ?teach=1 through the proxy, students open the link it
  shows until one lands on the other replica; that student follows the teacher's head and view, and its URL says
  so. Redis stops answering (SIGSTOP, so that calls wait rather than fail at once): the student's page says the
  class cannot be reached and keeps what it shows, the teacher's page keeps working and says its students cannot
  get its changes; once Redis answers again the student catches up with the teacher's latest head; the teacher
  asks a question, the student on the other replica answers it, the teacher counts it and reveals;
- last, as it leaves one replica: after one replica is killed, its browsers reconnect to the other, and new
  browsers still open the page there.

Which replica holds a session is read from two places that do not depend on each other: each
replica's own /_stcore/metrics (active_sessions goes up by one on the replica that got the
websocket), and nginx's access log (deploy/nginx.conf logs every request's route cookie and the
replica that answered it).
"""

from __future__ import annotations

import csv
import os
import re
import signal
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

from components.page.page_state import MAX_TEXT_CHARS
from components.server.class_store import STORE_ENV
from harness.browser import (
    chart_input,
    chart_pixels,
    expect_head,
    launch_chromium,
    move_head_to,
    open_expander,
    open_session,
    open_tab,
    press_chart_key,
    wait_until_settled,
    weights_chart,
)
from harness.nginx import (
    REPLICA_ENV,
    Proxy,
    access_log,
    nginx_proxy,
    open_on_replica,
    open_until_spread,
    route_of,
    websocket_handshake,
)
from harness.question_pages import CARD, FOLLOW_TIMEOUT_MS, answered, choose
from harness.redis import Redis, redis_server
from harness.server import APP, get_json, metrics, port_of, server_pid, streamlit_server, wait_for
from tests.marks import NEEDS_CHROMIUM, NEEDS_NGINX, NEEDS_REDIS

CSV_HEADER = "query_index,query_token,key_index,key_token,score,masked_score,weight,alpha_fx_norm"
# Both texts of a link as long as the page takes them, in letters that URL-encode to six and nine
# characters each: a request line of about 105,000 characters (nginx's default buffers hold 8 kB).
LONG_TEXT = ("Zeit fließt wie ein Pfeil — Früchte fliegen wie eine Banane. " * 200)[:MAX_TEXT_CHARS]
LONG_TEXT_B = ("時は矢のように飛ぶ。" * 1000)[:MAX_TEXT_CHARS]
CLASS_TEXT = "two servers share one class"
# The route cookie is random: all on the teacher's replica is a chance of 1 in 16 million (12 tries, 1 in 4,096, failed
# a fresh-clone CI; nginx's ring was 52:48 there, and the routes fell on its larger side).
MAX_STUDENT_TRIES = 24

pytestmark = [pytest.mark.deploy, pytest.mark.long, *NEEDS_NGINX, *NEEDS_CHROMIUM, *NEEDS_REDIS]


def expect_view(page, layer: int, head: int) -> None:
    """The page names the layer and head it shows ("Layer 1, head 2", in a heading or a chart title)."""
    from playwright.sync_api import expect

    expect(page.get_by_text(re.compile(rf"\blayer {layer}, head {head}(?!\d)", re.IGNORECASE)).first).to_be_visible()


def move_head(page, head: int) -> None:
    """Press ArrowRight on the heatmap's head input until it reads head; the URL and the heatmap must follow."""
    from playwright.sync_api import expect

    before = chart_pixels(page)
    for _ in range(head - int(chart_input(page, "head").input_value())):
        press_chart_key(page, "head", "ArrowRight")
    expect(chart_input(page, "head")).to_have_value(str(head))
    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)"))
    expect_view(page, 0, head)
    wait_for(lambda: chart_pixels(page) != before, "the heatmap to be redrawn for the new head")


@dataclass(frozen=True)
class Cluster:
    replicas: list[str]  # base URLs, asked directly for their metrics
    upstreams: list[str]  # the same replicas as nginx names them in its log
    proxy: Proxy
    redis: Redis
    browser: object
    logs: Path  # the replicas' output: replica0.log, replica1.log


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=30_000)  # two servers, nginx, Redis and a browser share 2 cores
    logs = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server(logs / "redis"))
        env = {**REPLICA_ENV, STORE_ENV: redis.url}
        replicas = [stack.enter_context(streamlit_server(APP, env=env, log_path=logs / f"replica{i}.log"))
                    for i in range(2)]
        ports = tuple(port_of(url) for url in replicas)
        proxy = stack.enter_context(nginx_proxy(ports, logs / "nginx"))
        browser = launch_chromium(stack.enter_context(sync_playwright()), optimised_js=False)
        stack.callback(browser.close)
        yield Cluster(replicas, [f"127.0.0.1:{port}" for port in ports], proxy, redis, browser, logs)


def answered_by(cluster: Cluster, page) -> set[str]:
    """Which replicas answered this browser's requests, as nginx logged them ("a, b": a refused, then b)."""
    return {upstream for _, upstream, _ in access_log(cluster.proxy.access_log)[route_of(page)]}


def wait_until_no_sessions(cluster: Cluster) -> None:
    """Wait until the pages of the tests before have closed their websockets: a replica is told whose a new one
    is by its count going up."""
    wait_for(lambda: sum(metrics(url)["active"] for url in cluster.replicas) == 0, "earlier sessions to close")


def test_sessions_spread_and_stick(cluster):
    from playwright.sync_api import expect

    replicas, upstreams = cluster.replicas, cluster.upstreams
    sessions = open_until_spread(cluster.browser, cluster.proxy.url, replicas)

    # Every request of each browser so far went to the replica that holds its websocket.
    log = access_log(cluster.proxy.access_log)
    for page, replica in sessions:
        requests = log[route_of(page)]
        assert {upstream for _, upstream, _ in requests} == {upstreams[replica]}, requests
        uris = {uri for uri, _, _ in requests}
        assert "/" in uris and "/_stcore/health" in uris and any(u.startswith("/static/") for u in uris), uris

    # A session keeps its state across reruns, on each replica, without a new session. Different
    # heads make different CSVs, so each replica holds a /media/ file the other one never made.
    moved = {}  # replica index -> its page whose head was moved to replica index + 1
    for page, replica in sessions:
        if replica not in moved:
            before = [metrics(url) for url in replicas]
            move_head(page, replica + 1)
            assert [metrics(url) for url in replicas] == before, "a rerun must not open a new session"
            moved[replica] = page
    for replica, page in moved.items():
        with page.expect_download() as download_info:
            page.locator(".st-key-csv button").click()
        rows = Path(download_info.value.path()).read_text(encoding="utf-8").splitlines()
        assert rows[0] == CSV_HEADER
        media = [entry for entry in access_log(cluster.proxy.access_log)[route_of(page)]
                 if entry[0].startswith("/media/")]
        assert media and {upstream for _, upstream, _ in media} == {upstreams[replica]}, media
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    # Host passes through: the app's own origin is accepted under a host name Streamlit does not
    # know (so as same-origin, not as "localhost"), and a foreign origin is still refused.
    host = f"attention-anatomy.test:{port_of(cluster.proxy.url)}"
    assert websocket_handshake(cluster.proxy.url, host, f"http://{host}") == 101
    assert websocket_handshake(cluster.proxy.url, host, "http://elsewhere.test") == 403
    # The one websocket Streamlit refused was the foreign origin's: every browser's passed its checks.
    refusals = sum((cluster.logs / f"replica{i}.log").read_text().count("Rejecting WebSocket connection")
                   for i in range(len(replicas)))
    assert refusals == 1

    for page, _ in sessions:
        page.context.close()


def test_a_link_with_the_longest_texts_opens_the_page_through_the_proxy(cluster):
    from playwright.sync_api import expect

    query = urlencode({"text": LONG_TEXT, "text_b": LONG_TEXT_B})
    assert len(query) > 100_000
    page = open_tab(cluster.browser)
    response = page.goto(f"{cluster.proxy.url}/?{query}")
    assert response.status == 200, f"the proxy answered the long link with HTTP {response.status}"
    weights_chart(page).locator("canvas, svg.marks").first.wait_for()
    wait_until_settled(page)

    expect(page.locator(".st-key-text textarea")).to_have_value(LONG_TEXT)
    expect(page.locator(".st-key-text_b input")).to_have_value(LONG_TEXT_B)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="tokens were dropped")).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page_loads = [status for uri, _, status in access_log(cluster.proxy.access_log)[route_of(page)] if uri == "/"]
    assert page_loads == ["200"], page_loads
    page.context.close()


class TestAClassAcrossTheReplicas:
    """The class's pages are closed when its tests end (its fixture is the class's): the failover after them
    counts the sessions on each replica."""

    @pytest.fixture(scope="class")
    def classroom(self, cluster):
        """The teacher's page, its replica, and a student's page on the other replica."""
        from playwright.sync_api import expect

        wait_until_no_sessions(cluster)
        teachers_url = f"{cluster.proxy.url}/?teach=1&text={CLASS_TEXT.replace(' ', '+')}"
        teacher, teachers_replica = open_on_replica(cluster.browser, teachers_url, cluster.replicas)
        expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}&key="))
        # The link's own code block: a loopback link's warning beside it names a server option in code too.
        link_code = '[data-testid="stSidebar"] [data-testid="stExpander"] [data-testid="stCode"] code'
        link = teacher.locator(link_code).inner_text().strip()
        assert link.startswith(cluster.proxy.url), f"the students' link must go through the proxy: {link}"
        pages = [teacher]  # closed whatever happens: a page left open would hold the failover's count of sessions
        try:
            for _ in range(MAX_STUDENT_TRIES):
                student, replica = open_on_replica(cluster.browser, link, cluster.replicas)
                pages.append(student)
                if replica != teachers_replica:
                    break
            else:
                pytest.fail(f"{MAX_STUDENT_TRIES} students all landed on the teacher's replica: nothing spreads them")
            yield teacher, student
        finally:
            for page in pages:
                page.context.close()

    def test_a_student_on_the_other_replica_follows_the_teacher(self, classroom):
        from playwright.sync_api import expect

        teacher, student = classroom
        expect(student.get_by_text("Following the teacher")).to_be_visible()
        move_head_to(teacher, 3)
        expect_head(student, 3)
        expect(student).to_have_url(re.compile(r"[?&]head=3(&|$)"))
        expect(teacher.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"\d+ students? following"))
               ).to_be_visible()

    def test_redis_down_the_student_keeps_its_page_the_teacher_keeps_teaching(self, cluster, classroom):
        from playwright.sync_api import expect

        teacher, student = classroom
        move_head_to(teacher, 4)
        expect_head(student, 4)
        cluster.redis.pause()
        try:
            expect(student.get_by_text("The class cannot be reached right now")).to_be_visible()
            # Said in the answer, never as a 502 or 503, which would take the replica out of nginx's rotation.
            code = re.search(r"[?&]class=(\w+)", student.url).group(1)
            assert get_json(f"{cluster.proxy.url}/api/class?code={code}") == (200, {"reachable": False})
            expect_head(student, 4)
            move_head_to(teacher, 6)  # the teacher's page answers as ever
            expect(teacher.get_by_text("Your students cannot get your changes right now")).to_be_visible()
            expect_head(student, 4)
        finally:
            cluster.redis.resume()
        expect_head(student, 6)  # the change the store missed reaches the class once it answers
        expect(student.get_by_text("The class cannot be reached right now")).to_have_count(0)
        expect(teacher.get_by_text("Your students cannot get your changes right now")).to_have_count(0)


    def test_a_student_on_the_other_replica_answers_the_teachers_question(self, classroom):
        """Asked on the teacher's replica, answered on the other, counted and revealed through the shared Redis;
        no count on the student's page before the reveal; the teacher's CSV holds the vote."""
        from playwright.sync_api import expect

        teacher, student = classroom
        wait_until_settled(teacher)
        open_expander(teacher, "Ask the class a question")
        teacher.get_by_role("button", name="Ask the class", exact=True).click()
        answered(teacher, 0)
        expect(student.locator(CARD)).to_contain_text("Question 1", timeout=FOLLOW_TIMEOUT_MS)
        choose(student, "two (1)")
        answered(teacher, 1)
        expect(student.locator(CARD)).not_to_contain_text("answered")
        expect(student.locator(CARD).locator('[data-testid="stVegaLiteChart"]')).to_have_count(0)
        teacher.get_by_role("button", name="Close the round").click()
        teacher.get_by_role("button", name="Reveal").click()
        expect(student.locator(CARD)).to_contain_text("The page's answer", timeout=FOLLOW_TIMEOUT_MS)
        expect(student.locator(CARD).locator('[data-testid="stVegaLiteChart"]')).to_have_count(1)
        wait_until_settled(teacher)  # the reveal reruns the teacher's page, which files its CSV anew
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download the class's answers (CSV)").click()
        rows = list(csv.DictReader(download.value.path().read_text(encoding="utf-8").splitlines()))
        assert {row["choice"]: int(row["votes_round_1"]) for row in rows}["two (1)"] == 1, rows


def test_failover_to_the_other_replica(cluster):
    from playwright.sync_api import expect

    replicas, upstreams = cluster.replicas, cluster.upstreams
    wait_until_no_sessions(cluster)
    sessions = open_until_spread(cluster.browser, cluster.proxy.url, replicas, query="?layer=1&head=2", at_least=2)

    # Kill one replica without a goodbye (SIGKILL, as the kernel's OOM killer would).
    dead, alive = 1, 0
    orphans = [page for page, replica in sessions if replica == dead]
    survivor_sessions = metrics(replicas[alive])["active"]
    os.kill(server_pid(port_of(replicas[dead])), signal.SIGKILL)

    # Its browsers reconnect to the survivor (a new session each: the old ones died with the process).
    wait_for(lambda: metrics(replicas[alive])["active"] == survivor_sessions + len(orphans),
              f"{len(orphans)} browsers of the killed replica to reconnect to the survivor", timeout_s=45)
    for page in orphans:
        expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-connection-state", "CONNECTED")
        expect_view(page, 1, 2)

    # New browsers open the page on the survivor (after one refused try of the dead replica, maybe).
    for _ in range(2):
        page = open_session(cluster.browser, cluster.proxy.url)
        assert answered_by(cluster, page) <= {upstreams[alive], f"{upstreams[dead]}, {upstreams[alive]}"}

    # An orphan's first move runs on the survivor: the page then agrees with itself (input, URL, heading).
    orphan = orphans[0]
    press_chart_key(orphan, "head", "ArrowRight")
    head = chart_input(orphan, "head").input_value()
    expect(orphan).to_have_url(re.compile(r"[?&]layer=1(&|$)"))
    expect(orphan).to_have_url(re.compile(rf"[?&]head={head}(&|$)"))
    expect_view(orphan, 1, int(head))
    assert head == "3", "the first move after the failover was undone"

    # Reloaded, it is drawn afresh by the survivor from its URL.
    orphan.reload()
    weights_chart(orphan).locator("canvas, svg.marks").first.wait_for()
    wait_until_settled(orphan)
    expect(chart_input(orphan, "head")).to_have_value(head)
    expect_view(orphan, 1, int(head))
    last_page_load = [upstream for uri, upstream, _ in access_log(cluster.proxy.access_log)[route_of(orphan)]
                      if uri == "/"][-1]
    assert last_page_load.endswith(upstreams[alive]), last_page_load
