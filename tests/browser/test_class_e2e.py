"""A class in real Chromium tabs: a teacher's page and two students' pages on one server.

The teacher opens ?teach=1; the students open the link the teacher's panel shows. Then, in order: both
students follow the teacher's head and view; one breaks away by moving its own head (the teacher and the other
student stay where they are) and comes back with Follow the teacher again; a page whose link holds a wrong
key follows and cannot drive; the teacher ends the class and the students keep their pages with a notice.

Screenshots of the teacher's panel and of a follower's notice, at 1280×720 and 390×844, go to
screenshots/class/ (git-ignored), for a reviewer to look at.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from components.classroom.class_watch import ASK_AGAIN_MS
from components.server.class_waits import WAIT_S
from harness.browser import (
    TAB_TIMEOUT_MS,
    HeldReplies,
    expect_head,
    load_page,
    messages_sent,
    move_head_to,
    open_tab,
    wait_for_change,
    wait_until_settled,
    wait_until_sized,
)
from harness.server import get_json
from tests.marks import BROWSER_TESTS

pytestmark = [*BROWSER_TESTS, pytest.mark.long]  # a teacher and students: two minutes

SHOTS = Path(__file__).resolve().parents[2] / "screenshots" / "class"
TEXT = "the teacher points at one head"
PROJECTOR, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}
# How long a follower's page may take to show the teacher's move, once the class has it: its watch's held ask
# (components/server/class_waits.py), then a run of the whole page, whose view waits its turn for a page slot behind
# whatever the server's other sessions draw (up to caches.work.PAGE_WAIT_S, 30 s), on the 2 busy cores of a suite
# whose other workers open every view of long texts on the same server (bench/class_busy_follow.py: 12 s and more,
# where expect's 15 s was the bound). The teacher's own press is waited for as its rerun settles (harness.browser,
# 60 s).
FOLLOW_TIMEOUT_MS = TAB_TIMEOUT_MS


def scanned(screenshot: bytes, scale: float = 1.0) -> list[str]:
    """What a QR reader (zxing-cpp) reads off a screenshot, shrunk to scale of its size: a phone's camera at
    the back of the room sees the projected page at a fraction of its pixels."""
    import zxingcpp
    from PIL import Image

    picture = Image.open(io.BytesIO(screenshot))
    picture = picture.resize((round(picture.width * scale), round(picture.height * scale)), Image.Resampling.BOX)
    return [found.text for found in zxingcpp.read_barcodes(picture)]


def url_params(page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def class_version(base_url: str, code: str) -> int | None:
    """The class's version as the App's route answers it to a follower's watch (None once the class has ended)."""
    status, answer = get_json(f"{base_url}/api/class?code={code}")
    assert status == 200 and answer["reachable"] is True, answer
    return answer["version"]


def teacher_moves_head(teacher, base_url: str, head: int) -> None:
    """The teacher presses its chart's Head input until it shows head; then its link says head, and the class has
    heard of it: the page sends its view to the class before it writes its link (classroom.sync), so the version the
    followers' watches read has moved by then."""
    code = url_params(teacher)["class"]
    before = class_version(base_url, code)
    move_head_to(teacher, head)  # the teacher's chart, link and heading
    assert class_version(base_url, code) > before, f"the teacher's link says head {head}; the class did not hear it"


def expect_following(page, head: int) -> None:
    """A follower's page shows head, the class having heard of it: its link within FOLLOW_TIMEOUT_MS (the run that
    takes the teacher's view writes it), then its chart's input and its heading, which that run drew."""
    from playwright.sync_api import expect

    polls = getattr(page, "class_polls", [])
    try:
        expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)" if head else r"^(?!.*[?&]head=)"),
                                 timeout=FOLLOW_TIMEOUT_MS)
    except AssertionError as error:
        raise AssertionError(f"a follower's page did not take head {head} in {FOLLOW_TIMEOUT_MS} ms; its link "
                             f"{page.url}; its watch's last answers {polls[-5:]}") from error
    expect_head(page, head)


def expect_following_view(page, heading: str) -> None:
    """A follower's page shows the view whose heading is heading (the class having heard of it), as expect_following."""
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name=heading)).to_be_visible(timeout=FOLLOW_TIMEOUT_MS)


def keep_class_polls(page) -> None:
    """Keep what the page's class watch is answered (status and body of each /api/class ask, the last 20) on the
    page, for a failed follow to say whether the watch was asking and what it heard."""
    page.class_polls = []

    def answered(response) -> None:
        if "/api/class?" in response.url:
            try:
                page.class_polls.append((response.status, response.text()[:80]))
            except Exception as error:  # noqa: BLE001 (a page gone: say so, as an answer)
                page.class_polls.append((response.status, repr(error)))
            del page.class_polls[:-20]

    page.on("response", answered)
    page.on("requestfailed", lambda request: page.class_polls.append(("failed", request.failure))
            if "/api/class?" in request.url else None)


@pytest.fixture(scope="module")
def classroom(browser, base_url):
    """The teacher's tab (opened with ?teach=1) and the students' link it shows."""
    from playwright.sync_api import expect

    teacher = open_tab(browser, viewport=PROJECTOR)
    load_page(teacher, f"{base_url}/?teach=1&text={TEXT.replace(' ', '+')}")
    expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}&key=[\w-]{22,}"))
    panel = teacher.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(
        has_text="the students' link")
    expect(panel.locator("img")).to_be_visible()
    link = panel.locator('[data-testid="stCode"] code').inner_text().strip()
    assert scanned(teacher.screenshot(), scale=0.5) == [link], "the sidebar's QR code, half size, reads the link"
    yield teacher, link
    teacher.context.close()


@pytest.fixture
def student(classroom, browser):
    """A factory of student tabs (the class's link by default), closed when the test ends: a follower's page asks
    for the class's version every 0.75 s, and the tabs of earlier tests would keep the machine busy."""
    _, link = classroom
    tabs = []

    def open_student(url: str = link, viewport=None):
        page = open_tab(browser, **({"viewport": viewport} if viewport else {}))
        tabs.append(page)
        keep_class_polls(page)
        load_page(page, url)
        return page

    yield open_student
    for page in tabs:
        page.context.close()


def test_the_teachers_page_shows_the_students_link_without_the_key(classroom):
    teacher, link = classroom
    params = url_params(teacher)
    assert link.endswith(f"?class={params['class']}") and params["key"] not in link, link
    assert link.startswith("http://127.0.0.1:"), "the link must open this server from another machine's browser"


def test_students_follow_break_away_come_back_and_a_wrong_key_cannot_drive(classroom, student, base_url):
    from playwright.sync_api import expect

    teacher, link = classroom
    first, second = student(), student(viewport=PHONE)
    for page in (first, second):
        expect(page.get_by_text("Following the teacher")).to_be_visible()
        # The teacher's text, from a link that had none.
        expect(page.get_by_role("textbox", name="Text", exact=True)).to_have_value(TEXT)
        assert "key" not in url_params(page) and url_params(page)["class"] == url_params(teacher)["class"]
    panel = teacher.locator('[data-testid="stSidebar"]')
    expect(panel.get_by_text("2 students following")).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=SHOTS / "teacher-1280x720.png")

    teacher_moves_head(teacher, base_url, 2)
    for page in (first, second):
        expect_following(page, 2)

    move_head_to(first, 3)  # the first student moves a control: it leaves follow mode
    expect(first.get_by_text("You are exploring on your own")).to_be_visible()
    first.screenshot(path=SHOTS / "follower-exploring-1400x1000.png")
    expect_head(teacher, 2)  # the teacher's page is never changed by a student
    expect_head(second, 2)

    teacher_moves_head(teacher, base_url, 5)
    expect_following(second, 5)
    expect_head(first, 3)  # exploring on its own: it stays
    expect(first.get_by_text("You are exploring on your own")).to_be_visible()

    first.get_by_role("button", name="Follow the teacher again").click()
    expect_head(first, 5)  # back: the teacher's view now
    expect(first.get_by_text("Following the teacher")).to_be_visible()

    teacher.locator('[data-testid="stSidebar"] [data-testid="stRadio"]').get_by_text("All heads of a layer").click()
    for page in (first, second):
        expect_following_view(page, "All heads of a layer")
        expect(page).to_have_url(re.compile(r"[?&]view=heads(&|$)"))

    wrong = student(f"{link}&key={'A' * 32}")
    expect(wrong.get_by_text("key is not class")).to_be_visible()
    expect(wrong.get_by_role("heading", name="All heads of a layer")).to_be_visible()  # it follows
    assert "key" not in url_params(wrong)
    wrong.locator('[data-testid="stSidebar"] [data-testid="stRadio"]').get_by_text("One head").click()
    expect(wrong.get_by_text("You are exploring on your own")).to_be_visible()
    move_head_to(wrong, 7)
    expect(teacher.get_by_role("heading", name="All heads of a layer")).to_be_visible()  # not driven
    expect(first.get_by_role("heading", name="All heads of a layer")).to_be_visible()
    expect(second.get_by_role("heading", name="All heads of a layer")).to_be_visible()
    assert url_params(teacher)["view"] == "heads" and url_params(teacher)["head"] == "5"


def follows_a_view_and_back(teacher, page) -> None:
    """The teacher opens the one-head view and goes back to all heads (where the tests after expect the class); page
    follows both."""
    from playwright.sync_api import expect

    views = teacher.locator('[data-testid="stSidebar"] [data-testid="stRadio"]')
    for view in ("One head", "All heads of a layer"):
        views.get_by_text(view).click()
        expect(teacher.get_by_role("heading", name=view)).to_be_visible()
        expect_following_view(page, view)


def test_an_idle_follower_asks_the_route_and_reruns_only_when_the_teacher_moves(classroom, student):
    """A follower's page asks /api/class for the version (components/classroom/class_watch.py), with the version it
    shows for the route to hold, and sends the server nothing while the class stands still: a timed fragment reran
    the page, and the browser drew it, at every poll."""
    teacher, _ = classroom
    page = student()
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/api/class?" in request.url else None)
    sent = messages_sent(page)
    page.wait_for_timeout(round(WAIT_S * 1000) + 1_000)  # a held ask ends within WAIT_S, and the next goes at once
    assert messages_sent(page) == sent, "an idle follower's page reran"
    assert asked and all("&version=" in url and "&beat=" in url for url in asked), asked
    follows_a_view_and_back(teacher, page)


@pytest.mark.parametrize("answer", [{"status": 404, "body": "Not Found"},
                                    {"status": 200, "content_type": "text/html", "body": "<!doctype html>"}],
                         ids=["a-proxys-404", "streamlits-own-page"])
def test_where_the_route_cannot_be_reached_a_follower_still_follows(classroom, browser, answer):
    """Behind a proxy that passes on only Streamlit's own paths (Community Cloud's is untried), the watch gets no
    answer of the route's and asks for a rerun every ASK_AGAIN_MS, where the page checks the class, as the timed
    fragment did; not at every poll, which interrupted each run before it ended on a loaded server (a CI run's page
    never drew its chart): each run mounts the script anew, which asked again a poll period later."""
    teacher, link = classroom
    page = open_tab(browser)
    try:
        page.route(re.compile(r"/api/class\?"), lambda route: route.fulfill(**answer))
        load_page(page, link)
        sent = messages_sent(page)
        page.wait_for_timeout(3 * ASK_AGAIN_MS)
        reruns = messages_sent(page) - sent
        assert reruns <= 4, f"{reruns} messages in {3 * ASK_AGAIN_MS} ms: a rerun asked at every poll"
        follows_a_view_and_back(teacher, page)
    finally:
        page.context.close()


def test_a_follower_that_has_not_drawn_the_teachers_view_yet_does_not_send_the_view_before_it(classroom, browser):
    """On a loaded server a follower's run can outlast its watch's ASK_AGAIN_MS, and the watch asks again; Streamlit
    sends what the page's widgets show with every ask, which is then the view before the teacher's. It must not win:
    here the server's replies to the follower are held (the page has not drawn the teacher's One head view) while
    the teacher moves on to a second sentence, and the follower ends at the teacher's view, still following. It
    ended at all heads, the view its widgets had shown, before the watch said which version the page had drawn."""
    from playwright.sync_api import expect

    teacher, link = classroom
    views = teacher.locator('[data-testid="stSidebar"] [data-testid="stRadio"]')
    second = teacher.get_by_role("textbox", name="Second sentence (optional)")
    views.get_by_text("All heads of a layer").click()  # where the tests before leave the class
    expect(teacher.get_by_role("heading", name="All heads of a layer")).to_be_visible()
    page = open_tab(browser)
    try:
        replies = HeldReplies.on(page)
        keep_class_polls(page)
        load_page(page, link)
        expect_following_view(page, "All heads of a layer")
        sends = messages_sent(page)
        replies.hold()
        views.get_by_text("One head").click()
        expect(teacher.get_by_role("heading", name="One head")).to_be_visible()
        # The watch asks for a run (sent: the page's sends go on), whose replies are held.
        asked = wait_for_change(lambda: messages_sent(page), sends, FOLLOW_TIMEOUT_MS / 1000)[0]
        assert asked > sends, "the watch asked"
        page.wait_for_timeout(ASK_AGAIN_MS + 500)
        sends = messages_sent(page)
        second.fill("it was warm")
        second.press("Enter")
        expect(teacher).to_have_url(re.compile(r"[?&]text_b=it\+was\+warm(&|$)"))
        # The watch hears the second move and asks again, with the widgets of the view before the teacher's.
        asked = wait_for_change(lambda: messages_sent(page), sends, FOLLOW_TIMEOUT_MS / 1000)[0]
        assert asked > sends, "asked again"
        page.wait_for_timeout(2_000)  # that run, on the server
        replies.release()
        expect(page).to_have_url(re.compile(r"[?&]text_b=it\+was\+warm(&|$)"), timeout=FOLLOW_TIMEOUT_MS)
        expect_following_view(page, "One head")
        expect(page).not_to_have_url(re.compile(r"[?&]view="))  # the one-head view is the default
        expect(page.get_by_text("Following the teacher")).to_be_visible()
    finally:
        page.context.close()
        second.fill("")  # the class as the tests after expect it: all heads, of one sentence
        second.press("Enter")
        views.get_by_text("All heads of a layer").click()
        expect(teacher.get_by_role("heading", name="All heads of a layer")).to_be_visible()
        expect(teacher).not_to_have_url(re.compile(r"[?&]text_b="))


def test_the_class_route_answers_the_version_and_counts_a_beat(classroom, base_url):
    from playwright.sync_api import expect

    teacher, _ = classroom
    code = url_params(teacher)["class"]
    status, answer = get_json(f"{base_url}/api/class?code={code}")
    assert status == 200 and answer["reachable"] is True and isinstance(answer["version"], int), answer
    assert get_json(f"{base_url}/api/class?code={code.lower()}") == (200, answer)  # as a link's code is read
    assert get_json(f"{base_url}/api/class?code=<b>x</b>")[0] == 400
    assert get_json(f"{base_url}/api/class?code={code}&beat=not-an-id")[0] == 400
    unknown = next(other for other in ("AAAAAA", "BBBBBB") if other != code)
    assert get_json(f"{base_url}/api/class?code={unknown}") == (200, {"reachable": True, "version": None})  # ended
    panel = teacher.locator('[data-testid="stSidebar"]')
    expect(panel.get_by_text("0 students following")).to_be_visible()  # the earlier tests' students are gone
    for _ in range(40):  # a beat counts for class_store.HEARTBEAT_S; the panel counts every classroom.COUNT_S
        assert get_json(f"{base_url}/api/class?code={code}&beat=0123456789abcdef")[0] == 200
        if panel.get_by_text("1 student following").is_visible():
            break
        teacher.wait_for_timeout(500)
    expect(panel.get_by_text("1 student following")).to_be_visible(timeout=1)


def test_a_followers_notice_on_a_phone_and_a_projector(classroom, student):
    from playwright.sync_api import expect

    teacher, link = classroom
    for name, viewport in (("390x844", PHONE), ("1280x720", PROJECTOR)):
        page = student(viewport=viewport)
        expect(page.get_by_text("Following the teacher")).to_be_visible()
        page.screenshot(path=SHOTS / f"follower-{name}.png")
    teacher.get_by_role("button", name="Show the QR code large").click()
    dialog = teacher.get_by_role("dialog")
    try:
        expect(dialog.get_by_text(link)).to_be_visible()
        # The screenshot waits for the page to settle, and for the picture's pixels: an img is "visible" to
        # Playwright as soon as it has a size, and Streamlit hides a dialog drawn by an earlier run while a full-app
        # run is under way (streamlit#16901). One screenshot in a loaded CI run had no dialog.
        wait_until_settled(teacher)
        expect(dialog.locator("img")).to_have_js_property("complete", True)
        expect(dialog.locator("img")).to_be_visible()
        # The whole projected screen at a quarter of its pixels (a 1280-px-wide screen seen 320 px wide: a phone's
        # camera about 30 m from a 3-m screen) still reads the link.
        assert scanned(teacher.screenshot(path=SHOTS / "teacher-large-qr-1280x720.png"), scale=0.25) == [link]
    finally:  # the class is the module's: a dialog left open would make the teacher's page inert for the next test
        teacher.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    teacher.set_viewport_size(PHONE)  # the page reruns at its new width: the closed dialog stays closed
    wait_until_sized(teacher)
    wait_until_settled(teacher)
    expect(dialog).to_have_count(0)
    teacher.screenshot(path=SHOTS / "teacher-390x844.png")
    teacher.set_viewport_size(PROJECTOR)


def test_an_ended_class_leaves_the_students_pages_as_they_are_with_a_notice(classroom, student):
    from playwright.sync_api import expect

    teacher, link = classroom
    page = student()
    expect(page.get_by_text("Following the teacher")).to_be_visible()
    teacher.get_by_role("button", name="End the class").click()
    expect(teacher).not_to_have_url(re.compile(r"[?&](class|key)="))
    expect(page.get_by_text(re.compile(r"Class .* has ended"))).to_be_visible()
    expect(page.get_by_role("heading", name="All heads of a layer")).to_be_visible()
    again = student(link)
    expect(again.get_by_text(re.compile(r"has ended or does not exist"))).to_be_visible()
    assert "class" not in url_params(again)


def test_a_projected_class_shows_its_code_and_a_qr_code_on_the_first_screen(browser, base_url):
    """present=1&teach=1: the sidebar is closed, so the page itself shows the class's code, the students' link and
    a QR code that reads it, above the charts; the link names 127.0.0.1, which students cannot open: a warning."""
    from playwright.sync_api import expect

    teacher = open_tab(browser, viewport=PROJECTOR)
    try:
        load_page(teacher, f"{base_url}/?teach=1&present=1&text={TEXT.replace(' ', '+')}")
        expect(teacher.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
        main = teacher.locator('[data-testid="stMain"]')
        code = re.search(r"Class ([A-Z2-9]{6}) · join at", main.inner_text()).group(1)
        assert code == url_params(teacher)["class"]
        link = main.locator('[data-testid="stText"]').inner_text().strip()
        assert link == f"{base_url}?class={code}"
        expect(main.get_by_text("Phones cannot open this link")).to_be_visible()
        for shown in (main.get_by_role("img", name="QR code of the students' link"), main.get_by_text(link),
                      teacher.locator('[data-testid="stVegaLiteChart"]').first):
            box = shown.bounding_box()
            assert box["y"] + min(box["height"], 100) <= PROJECTOR["height"], f"{shown} starts below the first screen"
        SHOTS.mkdir(parents=True, exist_ok=True)
        assert scanned(teacher.screenshot(path=SHOTS / "teacher-presenting-1280x720.png")) == [link]
    finally:
        teacher.context.close()
