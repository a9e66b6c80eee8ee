"""The induction lab through AppTest (?view=induction): its link and controls, Train to the end with the core's own
numbers on the page, the maps every kept step, the CSV, a run shared by its settings, a run watched while another
page trains it, the time limit and the line, and the words for what happened."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from attention.analyses.head_scores import induction_score
from attention.labs.induction import InductionConfig, history_rows, train, untrained
from tests.pages import assert_healthy, open_keeping_downloads, open_page, picture_values

# A short run: the page's machinery, not the learning (tests/core/test_induction.py has that). Each test that trains
# takes settings of its own: a finished run is every session's, and would be shown instead of trained.
SHORT = {"view": "induction", "steps": "100", "heads": "2", "vocab": "16"}


def config_of(link: dict[str, str]) -> InductionConfig:
    low, high = (int(end) for end in link.get("periods", "4-12").split("-"))
    return InductionConfig(vocab_size=int(link.get("vocab", 32)), period_low=low, period_high=high,
                           heads=int(link.get("heads", 4)), steps=int(link.get("steps", 600)),
                           seed=int(link.get("seed", 0)))


def chart(page, dataset: str):
    """The chart that carries the named dataset: "maps" (every head at the kept steps) or "losses" (the curves)."""
    [found] = [c for c in page.get("vega_lite_chart") if dataset in {d.name for d in c.proto.datasets}]
    return found


def datasets(found) -> dict[str, pd.DataFrame]:
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in found.proto.datasets}


def texts(page) -> str:
    return " ".join([*(m.value for m in page.markdown), *(s.value for s in page.success), *(i.value for i in page.info),
                     *(w.value for w in page.warning), *(c.value for c in page.caption)])


@pytest.fixture
def progress_said(monkeypatch) -> list[str]:
    """Every text the page's progress bars are given, as the browser would be sent them (a finished run reruns the
    page, which then shows none)."""
    from streamlit.delta_generator import DeltaGenerator

    said = []
    drawn = DeltaGenerator.progress

    def progress(self, value, text=None, **options):
        said.append(text)
        return drawn(self, value, text=text, **options)

    monkeypatch.setattr(DeltaGenerator, "progress", progress)
    return said


@pytest.fixture(scope="module")
def trained_page():
    link = {**SHORT, "seed": "11"}
    page = open_page(link)
    page.button(key="induction_train").click().run()
    return page, link


def test_the_lab_opens_from_its_link_with_the_defaults_and_the_untrained_heads():
    page = open_page(view="induction")
    assert_healthy(page)
    defaults = InductionConfig()
    assert page.slider(key="periods").value == (defaults.period_low, defaults.period_high)
    assert page.slider(key="vocab").value == defaults.vocab_size
    assert page.slider(key="heads").value == defaults.heads
    assert page.slider(key="steps").value == defaults.steps == 600
    assert page.number_input(key="seed").value == 0
    assert not page.button(key="induction_train").disabled
    assert "Press Train: 600 steps" in texts(page)
    assert not page.get("progress")
    maps = datasets(chart(page, "maps"))["maps"]
    assert len(maps) == 3 * defaults.heads and set(maps["kept"]) == {0}, "before training: step 0, every head"
    before = untrained(defaults)
    two_layers = maps[maps["model"] == "2 layers: layer 1"].sort_values("head")
    for head, url in enumerate(two_layers["picture"]):
        np.testing.assert_allclose(picture_values(url, (24, 24), [0.0, 1.0], "blues"),
                                   before.models[1].kept[0, 1, head], atol=3 / 255)  # 3 colours of the ramp
    assert dict(page.query_params) == {"view": "induction"}, "the defaults leave the link bare"


def test_a_links_settings_reach_the_controls_and_a_bad_one_says_so():
    page = open_page(view="induction", periods="3-8", vocab="16", heads="2", steps="200", seed="5")
    assert_healthy(page)
    assert page.slider(key="periods").value == (3, 8)
    assert (page.slider(key="vocab").value, page.slider(key="heads").value) == (16, 2)
    assert (page.slider(key="steps").value, page.number_input(key="seed").value) == (200, 5)
    assert page.query_params["periods"] == "3-8"
    bad = open_page(view="induction", periods="9-3", steps="150")
    notices = " ".join(w.value for w in bad.warning)
    assert "periods=`9-3` was ignored: its first period must not be above its last. Showing periods=4-12." in notices
    assert "steps=`150` was ignored: it must be a multiple of 100 from 100 to 2000" in notices


def test_moving_a_control_writes_it_into_the_link_in_the_same_run():
    page = open_page(view="induction")
    page.slider(key="heads").set_value(3).run()
    assert_healthy(page)
    assert page.query_params["heads"] == "3"
    page.slider(key="periods").set_value((2, 6)).run()
    assert page.query_params["periods"] == "2-6"
    assert "Press Train: 600 steps" in texts(page)


def test_training_shows_the_cores_run_its_curves_and_every_kept_steps_maps(trained_page):
    page, link = trained_page
    assert_healthy(page)
    config = config_of(link)
    run = train(config)  # the same run, off the page: a seed fixes it
    one, two = run.models
    caption = texts(page)
    assert f"Trained {config.steps} steps in" in caption, "the finished run's line"
    assert f"{one.repeated_loss[-1]:.2f} with one layer, {two.repeated_loss[-1]:.2f} with two" in caption
    metrics = {m.label: m.value for m in page.metric}
    assert metrics == {"Loss, 1 layer": f"{one.repeated_loss[-1]:.2f}",
                       "Loss, 2 layers": f"{two.repeated_loss[-1]:.2f}",
                       "Induction, 1 layer": f"{one.induction[-1].max():.2f}",
                       "Induction, 2 layers": f"{two.induction[-1].max():.2f}"}
    assert page.button(key="induction_train").disabled, "a finished run is not trained again"

    curves = datasets(chart(page, "losses"))
    rows = history_rows(run)
    scores = curves["scores"]
    assert len(scores) == len(rows["step"])
    np.testing.assert_allclose(scores["induction"], rows["induction"], rtol=1e-6)
    np.testing.assert_allclose(curves["losses"]["loss"], np.concatenate([one.repeated_loss, two.repeated_loss]))

    maps_chart = chart(page, "maps")
    maps = datasets(maps_chart)["maps"]
    assert sorted(set(maps["kept"])) == run.kept_steps.tolist() == list(range(0, 101, 5))
    assert len(maps) == len(run.kept_steps) * 3 * config.heads
    [param] = json.loads(maps_chart.proto.spec)["params"]
    assert param["bind"] == {"input": "range", "min": 0, "max": 100, "step": 5, "name": "Step"}
    assert param["value"] == [{"kept": 100}], "the input starts at the last step"
    at = maps[(maps["kept"] == 50) & (maps["model"] == "2 layers: layer 0") & (maps["head"] == 1)].iloc[0]
    np.testing.assert_allclose(picture_values(at["picture"], (24, 24), [0.0, 1.0], "blues"),
                               two.kept[10, 0, 1], atol=3 / 255)  # 3 colours of the ramp
    assert at["induction"] == pytest.approx(float(induction_score(torch.from_numpy(two.kept[10, 0, 1]))))


def test_the_csv_has_the_issues_columns_and_the_cores_rows(trained_page):
    _, link = trained_page
    page, made = open_keeping_downloads(link)
    assert_healthy(page)
    csv = made[f"induction-{link['seed']}.csv"]()
    frame = pd.read_csv(io.StringIO(csv))
    assert list(frame.columns) == ["layers", "step", "layer", "head", "previous_token", "induction", "loss"]
    rows = history_rows(train(config_of(link)))
    assert len(frame) == len(rows["step"]) == 21 * 2 * 3  # steps 0 to 100 by 5, 2 heads, 1 + 2 layers
    for name in frame.columns:
        np.testing.assert_allclose(frame[name].to_numpy(), rows[name], rtol=1e-6)
    one_step = frame[(frame["layers"] == 2) & (frame["step"] == 100)]
    assert one_step["loss"].nunique() == 1 and len(one_step) == 4


def test_a_finished_run_is_every_pages_without_training_again(trained_page):
    _, link = trained_page
    other = open_page(link)  # another session, the same settings: a student following the teacher
    assert_healthy(other)
    assert other.button(key="induction_train").disabled
    assert not other.get("progress")
    assert "Trained 100 steps in" in texts(other)
    assert other.metric, "the run is drawn at once"


def test_a_finished_run_says_why_train_is_off_and_a_new_seed_trains_anew(trained_page):
    _, link = trained_page
    other = open_page(link)
    assert other.button(key="induction_train").disabled
    assert "These settings are trained already" in texts(other) and "press New seed, then Train" in texts(other)
    other.button(key="induction_new_seed").click().run()
    assert_healthy(other)
    assert other.number_input(key="seed").value == int(link["seed"]) + 1
    assert not other.button(key="induction_train").disabled and "trained already" not in texts(other)


def test_a_page_opened_while_another_trains_the_same_settings_watches_that_run(progress_said):
    from components.caches import shared

    link = {**SHORT, "seed": "12"}
    config = config_of(link)
    runs = shared.induction_runs()
    finished = train(config)
    holding, release = threading.Event(), threading.Event()

    def another_page() -> None:  # trains the settings: publishes a snapshot, then finishes
        with runs.train(config) as live:
            live.latest, live.fraction, live.note = finished, 0.5, "Step 50 of 100"
            holding.set()
            release.wait(60)
            runs.keep_finished(config, finished)

    trainer = threading.Thread(target=another_page)
    trainer.start()
    assert holding.wait(30)
    pages = []
    follower = threading.Thread(target=lambda: pages.append(open_page(link)))  # it watches at once, Train off
    follower.start()
    time.sleep(2)
    release.set()
    trainer.join(30)
    follower.join(120)
    page, = pages
    assert_healthy(page)
    assert any(text and text.startswith("Another page is training these settings; this page follows it. Step 50 "
                                        "of 100") for text in progress_said), progress_said
    assert page.button(key="induction_train").disabled and page.metric


def until(condition, what: str, timeout_s: float = 60.0) -> None:
    """Poll condition() until it holds (a page's run goes on in another thread); AssertionError naming what."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for {what}"
        time.sleep(0.05)


def test_a_page_following_a_training_that_waits_in_line_says_its_place_as_it_changes_and_is_counted(progress_said):
    from components.caches import shared

    link = {**SHORT, "seed": "18"}
    config = config_of(link)
    runs = shared.induction_runs()
    follows = "Another page is training these settings; this page follows it. Waiting for a free place on the server: "
    holding, said, counted = threading.Event(), threading.Event(), []

    def another_page() -> None:  # trains the settings, waits in line (its note changes, no step is run), is stopped
        with runs.train(config) as live:
            live.note = "Waiting for a free place on the server: 2 trainings ahead of this one…"
            holding.set()
            until(lambda: live.watchers == 1, "the page to follow this run")
            counted.append(live)
            until(lambda: f"{follows}2 trainings ahead of this one…" in progress_said, "the page to say its place")
            live.note = "Waiting for a free place on the server: 1 training ahead of this one…"
            until(lambda: f"{follows}1 training ahead of this one…" in progress_said, "the page to say its new place")
            said.set()

    trainer = threading.Thread(target=another_page)
    trainer.start()
    assert holding.wait(30)
    pages = []
    follower = threading.Thread(target=lambda: pages.append(open_page(link)))  # it watches at once
    follower.start()
    trainer.join(150)
    follower.join(120)
    page, = pages
    assert_healthy(page)
    assert said.is_set(), f"the page did not say its place as it changed: {progress_said}"
    assert counted[0].watchers == 0, "the page's run ended and it is still counted"
    assert progress_said[-1].startswith("The page that trained these settings stopped before the end"), progress_said
    assert not page.button(key="induction_train").disabled  # drawn again: Train is this page's to press now
    assert any(caption.value.startswith("The page that trained these settings stopped before the end")
               for caption in page.caption)


def test_a_training_page_says_how_many_pages_follow_it(progress_said):
    from components.caches import shared

    link = {**SHORT, "seed": "19"}
    config = config_of(link)
    runs, line = shared.induction_runs(), shared.training_turns()
    started, release = [threading.Event() for _ in range(line.slots)], threading.Event()

    def occupy(event: threading.Event) -> None:  # the line stays full: the page's training waits, drawing its note
        with line.turn():
            event.set()
            release.wait(60)

    def two_pages_follow() -> None:
        until(lambda: runs.under_way(config) is not None, "the page's training to be under way")
        with runs.watch(config), runs.watch(config):
            until(lambda: any(text and text.endswith("2 other pages follow this run.") for text in progress_said),
                  "the page to count two followers")
        until(lambda: any(text and text.endswith("this one…") for text in progress_said[-2:]),
              "the page to count none")
        release.set()

    holders = [threading.Thread(target=occupy, args=(event,)) for event in started]
    for holder in holders:
        holder.start()
    for event in started:
        assert event.wait(30)
    followers = threading.Thread(target=two_pages_follow)
    followers.start()
    page = open_page(link)
    page.button(key="induction_train").click().run()
    followers.join(30)
    for holder in holders:
        holder.join(30)
    assert_healthy(page)
    assert release.is_set(), "the page did not count its followers"
    assert "Trained 100 steps in" in texts(page)


def test_a_training_past_the_servers_time_limit_stops_says_so_and_is_not_shared(monkeypatch):
    from components.caches import experiments, shared

    monkeypatch.setattr(experiments, "TRAINING_LIMIT_S", 0.0)
    link = {**SHORT, "seed": "13"}
    page = open_page(link)
    page.button(key="induction_train").click().run()
    assert_healthy(page)
    assert "The training stopped after 0 s, the server's limit for one training, at step 1 of 100" in texts(page)
    assert shared.induction_runs().finished(config_of(link)) is None, "an unfinished run stays with its session"
    page.run()
    assert "Stopped at step 1 of 100" in texts(page)
    assert not page.button(key="induction_train").disabled, "it can be trained again"


def test_a_training_waits_for_a_free_place_and_says_how_many_are_ahead(progress_said):
    from components.caches import shared

    line = shared.training_turns()
    started, release = [threading.Event() for _ in range(line.slots)], threading.Event()

    def occupy(event: threading.Event) -> None:
        with line.turn():
            event.set()
            release.wait(60)

    holders = [threading.Thread(target=occupy, args=(event,)) for event in started]
    for holder in holders:
        holder.start()
    for event in started:
        assert event.wait(30)
    page = open_page({**SHORT, "seed": "14"})
    page.button(key="induction_train").click()
    runner = threading.Thread(target=page.run)
    runner.start()
    deadline = time.monotonic() + 60
    while line.waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert line.waiting == 1, "the page's training did not wait in line"
    release.set()
    runner.join(120)
    for holder in holders:
        holder.join(30)
    assert_healthy(page)
    ahead = f"Waiting for a free place on the server: {line.slots} training{'s' if line.slots != 1 else ''} ahead"
    assert any(text and text.startswith(ahead) for text in progress_said), progress_said[:5]


def shared_run(link: dict[str, str], change) -> None:
    """Put a run of the link's settings on the server, its scores changed by change(one, two) -> (one, two)."""
    from components.caches import shared

    config = config_of(link)
    run = train(config)
    one, two = change(*run.models)
    shared.induction_runs().keep_finished(config, dataclasses.replace(run, models=(one, two)))


def test_the_page_says_in_words_which_head_became_an_induction_head_and_when():
    link = {**SHORT, "seed": "15"}

    def formed(one, two):
        induction = two.induction.copy()
        induction[:, 1, 1] = np.linspace(0.0, 0.9, len(induction))  # crosses 0.5 at measured step 60
        return one, dataclasses.replace(two, induction=induction)

    shared_run(link, formed)
    page = open_page(link)
    assert_healthy(page)
    [success] = page.success
    assert "With two layers, **layer 1, head 1 became an induction head at step 60**" in success.value
    words = texts(page)
    assert "Its layer 0 holds the previous-token head it reads: layer 0, head" in words
    assert "One layer: no head above" in words and "one layer cannot compose two heads" in words
    assert not page.warning


def test_the_page_says_when_no_head_has_formed_and_when_one_layer_passes_0_3():
    link = {**SHORT, "seed": "16"}

    def unformed(one, two):
        one_induction = one.induction.copy()
        one_induction[-1, 0, 0] = 0.4
        return dataclasses.replace(one, induction=one_induction), dataclasses.replace(
            two, induction=np.minimum(two.induction, 0.2))

    shared_run(link, unformed)
    page = open_page(link)
    assert_healthy(page)
    assert not page.success
    assert "No head of the two-layer model has become an induction head yet" in page.info[0].value
    assert "A head of the one-layer model scores 0.40 as an induction head" in page.warning[0].value


def test_a_class_follows_the_teachers_settings_and_sees_the_teachers_run_without_training():
    teacher = open_page(teach="1", view="induction")
    assert_healthy(teacher)
    code = teacher.query_params["class"]
    teacher.slider(key="heads").set_value(2).run()
    teacher.slider(key="steps").set_value(100).run()
    teacher.slider(key="vocab").set_value(16).run()
    teacher.number_input(key="seed").set_value(17).run()
    teacher.button(key="induction_train").click().run()
    assert_healthy(teacher)
    student = open_page(**{"class": code})
    assert_healthy(student)
    assert (student.slider(key="heads").value, student.slider(key="steps").value) == (2, 100)
    assert (student.slider(key="vocab").value, student.number_input(key="seed").value) == (16, 17)
    assert student.button(key="induction_train").disabled and not student.get("progress")
    assert {m.label: m.value for m in student.metric} == {m.label: m.value for m in teacher.metric}
