"""A class follows every setting of its teacher, in real Chromium tabs on one server: a teacher's page and two
students' pages (a desktop's and a phone's).

The teacher moves, one after another, the one-head view's stage, its mask and the window's size, the sink and word
toggles, the value norm, the colour scale and the pair filter; then the all-heads aggregate, the atlas and a head
switched off; and both students' pages show each of them (their links say it, and their controls stand there). In the
induction lab the teacher presses Train: the students' pages watch that training (its progress bar, their own Train
off) and show its result, where they said "Before training" and offered a Train of their own.

Screenshots of a student's phone following the Masked stage and watching the training, and of the teacher at
1280×720, go to screenshots/class/ (git-ignored), for a reviewer to look at.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from harness.browser import act_and_measure, load_page, open_tab, press_and_measure, slider_thumb
from tests.browser.test_class_e2e import FOLLOW_TIMEOUT_MS, keep_class_polls
from tests.marks import BROWSER_TESTS

pytestmark = [*BROWSER_TESTS, pytest.mark.long]  # a teacher, two students and a training: minutes

SHOTS = Path(__file__).resolve().parents[2] / "screenshots" / "class"
PROJECTOR, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}
TEXT, SECOND = "the cat sat on the mat", "it was warm"
TOGGLES = ".st-key-switch_heads button"  # components/views/parts/head_toggles.py
TRAINING_SEED = 917  # a seed no other test trains: the run is this test's teacher's, not one the server kept


def url_params(page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def button(page, key: str, label: str):
    """The button labelled label of the segmented control with key=key."""
    return page.locator(f".st-key-{key} button").filter(has_text=re.compile(rf"^{re.escape(label)}$"))


def teacher_does(teacher, action) -> None:
    """A move of the teacher's, its rerun waited for (that rerun sends the page's state to the class)."""
    act_and_measure(teacher, action)


def expect_link_says(page, **params: str) -> None:
    """The page's link holds these parameters, within FOLLOW_TIMEOUT_MS (a follower's run that takes the teacher's
    view writes it), and its line says it follows the teacher."""
    from playwright.sync_api import expect

    for name, value in params.items():  # as written, or as the browser encodes it (off=1%3A3)
        written = "|".join(re.escape(form) for form in {value, quote(value, safe="")})
        expect(page).to_have_url(re.compile(rf"[?&]{name}=({written})(&|$)"), timeout=FOLLOW_TIMEOUT_MS)
    expect(page.get_by_text("Following the teacher")).to_be_visible()


def expect_checked(page, key: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator(f".st-key-{key} input[type='checkbox']")).to_be_checked(timeout=FOLLOW_TIMEOUT_MS)


def expect_pressed(page, key: str, label: str) -> None:
    """The segmented control with key=key has label chosen (a radio of its group, checked)."""
    from playwright.sync_api import expect

    expect(button(page, key, label)).to_have_attribute("aria-checked", "true", timeout=FOLLOW_TIMEOUT_MS)


@pytest.fixture(scope="module")
def classroom(browser, base_url):
    """The teacher's tab (opened with ?teach=1 on a sentence pair) and two students' tabs, a phone's second."""
    from playwright.sync_api import expect

    teacher = open_tab(browser, viewport=PROJECTOR)
    load_page(teacher, f"{base_url}/?teach=1&text={TEXT.replace(' ', '+')}&text_b={SECOND.replace(' ', '+')}")
    expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}&key=[\w-]{22,}"))
    code = url_params(teacher)["class"]
    students = []
    for viewport in (PROJECTOR, PHONE):
        page = open_tab(browser, viewport=viewport)
        keep_class_polls(page)
        load_page(page, f"{base_url}/?class={code}")
        expect(page.get_by_text("Following the teacher")).to_be_visible()
        students.append(page)
    expect(teacher.locator('[data-testid="stSidebar"]').get_by_text("2 students following")).to_be_visible()
    yield teacher, students
    for page in (teacher, *students):
        page.context.close()


def test_students_follow_the_one_head_views_stage_mask_toggles_and_colours(classroom):
    from playwright.sync_api import expect

    teacher, students = classroom
    teacher_does(teacher, button(teacher, "head_stage", "Masked").click)
    teacher_does(teacher, button(teacher, "mask", "causal").click)
    for page in students:
        expect_link_says(page, head_stage="masked", mask="causal")
        expect_pressed(page, "head_stage", "Masked")
        expect(page.locator('[data-testid="stVegaLiteChart"][aria-label^="Masked scores"]').first).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    students[1].screenshot(path=SHOTS / "follower-masked-390x844.png")
    teacher.screenshot(path=SHOTS / "teacher-masked-1280x720.png")

    teacher_does(teacher, button(teacher, "mask", "window").click)
    press_and_measure(teacher, slider_thumb(teacher, "window"), "ArrowLeft")  # 4 tokens back -> 3
    for page in students:
        expect_link_says(page, mask="window", window="3")
        expect_pressed(page, "mask", "window")

    teacher_does(teacher, button(teacher, "head_stage", "Weights").click)
    teacher_does(teacher, teacher.locator(".st-key-hide_special label").click)
    teacher_does(teacher, teacher.locator(".st-key-words label").click)
    teacher_does(teacher, teacher.locator(".st-key-value_norm label").click)
    teacher_does(teacher, button(teacher, "weight_scale", "0 to 1").click)
    teacher_does(teacher, button(teacher, "pair", "A → B").click)
    for page in students:
        expect_link_says(page, hide_special="1", words="1", value_norm="1", weight_scale="one", pair="a_to_b")
        assert "head_stage" not in url_params(page), "back on the weights, the default stage"
        for key in ("hide_special", "words", "value_norm"):
            expect_checked(page, key)
        expect_pressed(page, "weight_scale", "0 to 1")
        expect_pressed(page, "pair", "A → B")
        expect(page.locator('[data-testid="stVegaLiteChart"][aria-label*="between whole words"]').first
               ).to_be_visible()


def test_students_follow_the_aggregate_the_atlas_and_the_heads_switched_off(classroom):
    from playwright.sync_api import expect

    teacher, students = classroom
    views = teacher.locator('[data-testid="stSidebar"] [data-testid="stRadio"]')
    teacher_does(teacher, views.get_by_text("All heads of a layer").click)
    teacher_does(teacher, button(teacher, "aggregate", "max of the heads").click)
    for page in students:
        expect_link_says(page, view="heads", aggregate="max")
        expect_pressed(page, "aggregate", "max of the heads")

    teacher_does(teacher, views.get_by_text("Head atlas: what every head does").click)
    teacher_does(teacher, button(teacher, "atlas", "this text").click)
    for page in students:
        expect_link_says(page, view="atlas", atlas="text")
        expect_pressed(page, "atlas", "this text")

    teacher_does(teacher, views.get_by_text("Switching heads off").click)
    teacher.locator(TOGGLES).first.wait_for()
    teacher_does(teacher, teacher.locator(f"{TOGGLES}[data-layer='1'][data-head='3']").click)
    for page in students:
        expect_link_says(page, view="switch", off="1:3")
        expect(page.locator(f"{TOGGLES}[aria-pressed='true']")).to_have_count(1, timeout=FOLLOW_TIMEOUT_MS)
        expect(page.locator(f"{TOGGLES}[data-layer='1'][data-head='3']")).to_have_attribute("aria-pressed", "true")


def test_students_watch_the_teachers_training_and_see_its_result(classroom):
    from playwright.sync_api import expect

    teacher, students = classroom
    views = teacher.locator('[data-testid="stSidebar"] [data-testid="stRadio"]')
    teacher_does(teacher, views.get_by_text("Watch an induction head form").click)
    seed = teacher.locator(".st-key-seed input")
    seed.fill(str(TRAINING_SEED))
    teacher_does(teacher, lambda: seed.press("Enter"))
    for page in students:
        expect_link_says(page, view="induction", seed=str(TRAINING_SEED))
        expect(page.get_by_role("heading", name="Before training")).to_be_visible()

    teacher.locator(".st-key-induction_train button").click()
    watching = re.compile("Another page is training these settings; this page follows it")
    for page in students:  # the training's progress, live, and no Train of their own meanwhile
        expect(page.get_by_text(watching)).to_be_visible(timeout=FOLLOW_TIMEOUT_MS)
        # Until the watching run ends, Streamlit keeps the last run's elements too, greyed: every Train is off.
        for train in page.locator(".st-key-induction_train button").all():
            expect(train).to_be_disabled()
    expect(teacher.get_by_text(re.compile(r"2 other pages follow this run\."))).to_be_visible()
    students[1].get_by_text(watching).scroll_into_view_if_needed()
    students[1].screenshot(path=SHOTS / "follower-watching-training-390x844.png")

    # The line under Train once the run has finished (the progress bar's last note says the same, then who follows)
    trained = re.compile(r"^Trained 600 steps in [\d.]+ s: loss on the repeated part .*\(step 600\)\.$")
    expect(teacher.get_by_text(trained)).to_be_visible(timeout=180_000)  # the server's limit is two minutes
    result = teacher.get_by_text(trained).inner_text()
    for page in students:
        expect(page.get_by_text(trained)).to_be_visible(timeout=FOLLOW_TIMEOUT_MS)
        assert page.get_by_text(trained).inner_text() == result, "the teacher's run, to its last figure"
        expect(page.get_by_text(watching)).to_have_count(0)
        expect(page.get_by_role("heading", name="Before training")).to_have_count(0)
        expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible()
