"""The counting lab through AppTest (as ?view=counting): it opens, trains to the end, keeps results per config; its
window size is picked on its maps (the chart's own input, every size of the untrained head sent) and in a link."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention.labs.counting import CountingConfig, example_windows, inspect, train, untrained
from attention.stages.limits import PAGE_WIN_SIZE
from components.charts.counting_maps import LETTERS, WINDOW, WINDOW_LETTERS, WINDOW_TITLE
from components.charts.label_stand_ins import LABEL, dataset_of_list
from components.views.counting import MAPS_KEY
from tests.pages import (
    assert_healthy,
    chart_inputs,
    chart_matrix,
    chart_picks,
    charts,
    html_table,
    pick_on_chart,
    title_text,
)

APP = str(Path(__file__).resolve().parents[2] / "page.py")
STEPS = 60  # a short run: the page's machinery, not the learning (tests/core/test_counting.py has that)
SHORT = replace(CountingConfig(), steps=STEPS)


def open_lab(**query: str) -> AppTest:
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params["view"] = "counting"
    for name, value in query.items():
        page.query_params[name] = value
    return page.run()


def chart_titles(page: AppTest) -> list[str]:
    titles = []
    for chart in page.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        parts = [spec.get("title"), *(c.get("title") for c in spec.get("hconcat", spec.get("vconcat", [])))]
        titles += [title_text(t) for t in parts if t]
    return titles


def maps_chart(page: AppTest):
    """The chart of both maps, the window attending to itself and each symbol's question."""
    [chart] = [chart for chart in charts(page) if chart.proto.id.endswith(f"-{MAPS_KEY}")]
    return chart


def chart_cells(page: AppTest, panel: str) -> np.ndarray:
    """One map's cells (panel WINDOW or LETTERS) at the window size its input shows."""
    return chart_matrix(maps_chart(page), panel=panel)


def cells_at(page: AppTest, panel: str, win_size: int) -> np.ndarray:
    """One map's cells as sent for a window size, whichever the input shows."""
    [blob] = [d.data.data for d in maps_chart(page).proto.datasets if d.name == f"{panel}-cells"]
    cells = pa.ipc.open_stream(blob).read_all().to_pandas()
    cells = cells[cells["win_size"] == win_size]
    matrix = np.full((cells["row"].max() + 1, cells["column"].max() + 1), np.nan, dtype=np.float32)
    matrix[cells["row"], cells["column"]] = cells["value"]
    return matrix


def count_table(page: AppTest):
    """The letters table: true counts next to the model's."""
    return html_table(page, "count-table")


@pytest.fixture(scope="module")
def trained_page() -> AppTest:
    page = open_lab()
    page.slider(key="count_steps").set_value(STEPS).run()
    return page.button(key="count_train").click().run()


def test_the_lab_opens_from_its_link_with_the_defaults_and_waits_for_train():
    page = open_lab()
    assert_healthy(page)
    defaults = CountingConfig()
    assert chart_picks(maps_chart(page)) == {"win_size": defaults.win_size}
    assert chart_inputs(maps_chart(page)) == {"win_size": (PAGE_WIN_SIZE.low, PAGE_WIN_SIZE.high)}
    assert page.slider(key="count_vocab_size").value == defaults.vocab_size
    assert page.slider(key="count_head_size").value == defaults.head_size
    assert page.select_slider(key="count_learning_rate").value == defaults.learning_rate
    assert page.slider(key="count_steps").value == defaults.steps
    assert page.number_input(key="count_seed").value == defaults.seed
    assert page.button(key="count_train").label == "Train"
    assert any("Press Train" in c.value for c in page.caption)
    assert not page.get("progress")


def test_before_training_the_page_draws_the_untrained_head_and_its_accuracy():
    page = open_lab()
    assert_healthy(page)
    before = untrained(CountingConfig())
    [metric] = page.metric
    assert metric.label == "Held-out accuracy before training"
    assert metric.value == f"{before.accuracy:.1%}"
    assert WINDOW_TITLE in chart_titles(page)
    trace = inspect(before, example_windows(CountingConfig(), 1, seed=0))
    np.testing.assert_allclose(chart_cells(page, WINDOW), trace.self_weights[0], rtol=1e-6)
    np.testing.assert_allclose(chart_cells(page, LETTERS), trace.symbol_weights[0], rtol=1e-6)
    assert [header.value for header in page.subheader] == ["Before training: what the untrained head does"]


@pytest.mark.parametrize("win_size", [PAGE_WIN_SIZE.low, 13, PAGE_WIN_SIZE.high])
def test_the_maps_hold_the_untrained_head_at_every_window_size_its_input_offers(win_size):
    page = open_lab()
    assert_healthy(page)
    sizes = set(pa.ipc.open_stream(next(d.data.data for d in maps_chart(page).proto.datasets
                                        if d.name == f"{WINDOW}-cells")).read_all().column("win_size").to_pylist())
    assert sizes == set(range(PAGE_WIN_SIZE.low, PAGE_WIN_SIZE.high + 1))
    config = replace(CountingConfig(), win_size=win_size)
    trace = inspect(untrained(config), example_windows(config, 1, seed=0))  # what the page shows at that size
    np.testing.assert_allclose(cells_at(page, WINDOW, win_size), trace.self_weights[0], rtol=1e-6)
    np.testing.assert_allclose(cells_at(page, LETTERS, win_size), trace.symbol_weights[0], rtol=1e-6)
    [letters] = [pa.ipc.open_stream(d.data.data).read_all().column(LABEL).to_pylist()
                 for d in maps_chart(page).proto.datasets if d.name == dataset_of_list(WINDOW_LETTERS, str(win_size))]
    assert letters == list(trace.labels[0]), "the window's letters, sent beside the spec"


def test_a_window_picked_on_the_maps_moves_the_link_the_counts_and_what_train_trains():
    page = open_lab()
    pick_on_chart(page, MAPS_KEY, win_size=14)
    assert_healthy(page)
    assert page.query_params["win_size"] == "14"
    config = replace(CountingConfig(), win_size=14)
    before = untrained(config)
    assert page.metric[0].value == f"{before.accuracy:.1%}"
    trace = inspect(before, example_windows(config, 1, seed=0))
    assert count_table(page)["true count"].tolist() == trace.true_counts[0, 1:].tolist()
    assert any(" ".join(trace.labels[0]) in m.value for m in page.markdown)
    page.slider(key="count_steps").set_value(20).run()
    page.button(key="count_train").click().run()
    assert_healthy(page)
    assert page.get("progress")[0].proto.text.startswith("Trained 20 steps")
    assert chart_cells(page, WINDOW).shape == (14, 14), "a trained head is its window size's only"
    assert chart_inputs(maps_chart(page)) == {"win_size": (PAGE_WIN_SIZE.low, PAGE_WIN_SIZE.high)}
    pick_on_chart(page, MAPS_KEY, win_size=15)  # the trained head's maps ask for a rerun: nothing trained there
    assert_healthy(page)
    assert [header.value for header in page.subheader] == ["Before training: what the untrained head does"]
    assert chart_picks(maps_chart(page)) == {"win_size": 15}
    pick_on_chart(page, MAPS_KEY, win_size=14)
    assert_healthy(page)
    assert [header.value for header in page.subheader] == ["What the head learned"]
    assert any(c.value.startswith("Trained 20 steps") for c in page.caption), "kept for its config, not trained again"


def test_a_link_with_a_window_size_opens_the_lab_at_it_and_a_bad_one_says_so():
    page = open_lab(win_size="6")
    assert_healthy(page)
    assert chart_picks(maps_chart(page)) == {"win_size": 6}
    assert chart_cells(page, WINDOW).shape == (6, 6)
    config = replace(CountingConfig(), win_size=6)
    assert page.metric[0].value == f"{untrained(config).accuracy:.1%}"
    refused = open_lab(win_size="40")
    assert chart_picks(maps_chart(refused)) == {"win_size": CountingConfig().win_size}
    assert any("win_size" in warning.value and "from 2 to 20" in warning.value for warning in refused.warning)


def test_training_runs_to_the_end_with_progress_curves_and_counts(trained_page):
    page = trained_page
    assert_healthy(page)
    progress = page.get("progress")
    assert len(progress) == 1 and progress[0].proto.value == 100
    assert progress[0].proto.text.startswith(f"Trained {STEPS} steps")
    titles = chart_titles(page)
    assert "Loss" in titles and any(t.startswith("Held-out accuracy") for t in titles)
    table = count_table(page)
    assert table["letter"].tolist() == list("ABCDE")

    result = train(SHORT)  # the same run, off the page: a seed fixes it
    assert f"held-out accuracy {result.accuracy:.1%}" in progress[0].proto.text
    trace = inspect(result, example_windows(SHORT, 1, seed=0))
    assert table["true count"].tolist() == trace.true_counts[0, 1:].tolist()
    assert table["model's count"].tolist() == trace.predicted_counts[0, 1:].tolist()
    np.testing.assert_allclose(chart_cells(page, WINDOW), trace.self_weights[0], atol=1e-6)
    np.testing.assert_allclose(chart_cells(page, LETTERS), trace.symbol_weights[0], atol=1e-6)
    window = " ".join(trace.labels[0])
    assert any(window in m.value for m in page.markdown)


def test_results_are_kept_per_config_in_the_session(trained_page):
    page = trained_page
    page.slider(key="count_head_size").set_value(4).run()
    assert_healthy(page)
    assert any("Press Train" in c.value for c in page.caption), "another config has no model yet"
    page.slider(key="count_head_size").set_value(CountingConfig().head_size).run()
    assert_healthy(page)
    assert not page.get("progress"), "shown from the session, not trained again"
    assert any(c.value.startswith(f"Trained {STEPS} steps") for c in page.caption)
    assert count_table(page)["letter"].tolist() == list("ABCDE")


def test_another_window_draws_another_sample(trained_page):
    page = trained_page
    before = count_table(page)
    page.button(key="count_another").click().run()
    assert_healthy(page)
    trace = inspect(train(SHORT), example_windows(SHORT, 1, seed=1))
    after = count_table(page)
    assert after["true count"].tolist() == trace.true_counts[0, 1:].tolist()
    assert not before.equals(after)


def test_a_stopped_run_shows_where_it_stopped():
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params["view"] = "counting"
    config = replace(CountingConfig(), steps=STEPS)
    stopped = train(config, on_step=lambda update: update.step < 25)
    page.session_state["count_results"] = {config: stopped}
    page.run()
    page.slider(key="count_steps").set_value(STEPS).run()
    assert_healthy(page)
    assert any(c.value.startswith(f"Stopped at step 25 of {STEPS}") for c in page.caption)
    assert count_table(page)["letter"].tolist() == list("ABCDE")


def test_other_task_sizes_and_the_temperature_scaling_train_too():
    page = open_lab(win_size="6")
    page.slider(key="count_vocab_size").set_value(3)
    page.slider(key="count_steps").set_value(40)
    page.button_group(key="count_scaling").set_value("temperature").run()
    assert page.slider(key="count_temperature").value == 3.0
    page.button(key="count_train").click().run()
    assert_healthy(page)
    assert page.get("progress")[0].proto.text.startswith("Trained 40 steps")
    assert count_table(page)["letter"].tolist() == list("ABC")
    assert chart_cells(page, WINDOW).shape == (6, 6)


def test_a_training_past_the_servers_time_limit_stops_and_says_so(monkeypatch):
    from components.caches import experiments

    monkeypatch.setattr(experiments, "TRAINING_LIMIT_S", 0.0)  # the server's setting, as a deployer would lower it
    page = open_lab()
    page.button(key="count_train").click().run()
    assert_healthy(page)
    notice = " ".join(info.value for info in page.info)
    assert "The training stopped after 0 s, the server's limit for one training, at step 1 of" in notice


def test_a_training_waits_for_a_free_place_and_says_how_many_are_ahead(monkeypatch):
    from streamlit.delta_generator import DeltaGenerator

    from components.caches import shared

    said = []  # every text the page's progress bars were given, as the browser would be sent them
    drawn = DeltaGenerator.progress

    def progress(self, value, text=None, **options):
        said.append(text)
        return drawn(self, value, text=text, **options)

    monkeypatch.setattr(DeltaGenerator, "progress", progress)

    line = shared.training_turns()
    ahead = [threading.Event() for _ in range(line.slots)]
    release = threading.Event()

    def occupy(started: threading.Event) -> None:
        with line.turn():
            started.set()
            release.wait(30)

    holders = [threading.Thread(target=occupy, args=(started,)) for started in ahead]
    runner = None
    try:  # whatever fails, the slots held here are given back: the server's line is every later test's too
        for holder in holders:
            holder.start()
        for started in ahead:
            assert started.wait(30)
        page = open_lab()
        page.button(key="count_train").click()
        runner = threading.Thread(target=page.run)
        runner.start()
        deadline = time.monotonic() + 30
        while line.waiting == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert line.waiting == 1, "the page's training did not wait in line"
    finally:
        release.set()
        if runner is not None:
            runner.join(120)
        for holder in holders:
            if holder.is_alive():
                holder.join(30)
    assert_healthy(page)
    ahead = f"Waiting for a free place on the server: {line.slots} training{'s' if line.slots != 1 else ''} ahead"
    assert any(text and text.startswith(ahead) for text in said), said[:5]
    assert page.get("progress")[0].proto.text.startswith("Trained")


def colour_domains(page: AppTest) -> list:
    """The colour scale's domain in each map of the maps chart."""
    spec = json.loads(maps_chart(page).proto.spec)
    return [(part["layer"][0] if "layer" in part else part)["encoding"]["color"]["scale"]["domain"]
            for part in spec.get("hconcat", spec.get("vconcat"))]


def test_every_map_colours_weights_from_0_to_1_before_training_and_after(trained_page):
    before = open_lab()
    assert_healthy(before)
    for page in (before, trained_page):
        assert colour_domains(page) == [[0.0, 1.0], [0.0, 1.0]], "one scale: the untrained head's even spread is pale"
    assert any("from 0 (white) to 1" in caption.value for caption in before.caption)


def test_the_line_under_the_title_says_what_the_toy_reads_not_the_pages_model_and_text():
    page = open_lab()
    assert_healthy(page)
    line = page.caption[0].value
    assert "toy" in line and "random letters" in line
    assert "MiniLM" not in line and "this text" not in line, line
