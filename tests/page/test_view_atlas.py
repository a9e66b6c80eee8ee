"""The head atlas view (?view=atlas): the grid of every head, what it says in words, the CSV, the plane, and a click
that opens the head; over the corpus and over the text (atlas=text)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from attention.analyses.atlas import COLUMNS, corpus_sentences, head_atlas
from tests.pages import TEXT, assert_healthy, open_keeping_downloads, open_page, select_on_chart, warnings

CSV_COLUMNS = ["layer", "head", "previous", "next", "self", "cls", "sep", "punct", "entropy", "label"]


def atlas_charts(page) -> list:
    return [chart for chart in page.get("vega_lite_chart") if "open_head" in chart.proto.selection_mode]


def chart_rows(chart) -> pd.DataFrame:
    import pyarrow as pa

    [blob] = [d.data.data for d in chart.proto.datasets]
    return pa.ipc.open_stream(blob).read_all().to_pandas()


@pytest.fixture(scope="module")
def corpus_page():
    page, made = open_keeping_downloads({"view": "atlas"})
    assert_healthy(page)
    return page, made


def test_the_corpus_atlas_draws_every_head_and_names_the_previous_token_head(corpus_page, bundled):
    page, _ = corpus_page
    grid, plane = atlas_charts(page)
    heads = chart_rows(grid)
    assert len(heads) == 6 * 12 and len(chart_rows(plane)) == 72
    head = heads[(heads["layer"] == 0) & (heads["head"] == 2)].iloc[0]
    assert head["label"] == "previous" and head["previous"] > 0.9
    words = " ".join(m.value for m in page.markdown)
    assert f"**previous token**: layer 0, head 2 gives {head['previous']:.0%}" in words
    assert f"{len(corpus_sentences())} sentences" in " ".join(c.value for c in page.caption)
    assert "computed live from the page's corpus of sentences, or this text alone" in page.caption[0].value


def test_the_csv_has_the_issues_columns_one_row_a_head(corpus_page):
    _, made = corpus_page
    frame = pd.read_csv(io.StringIO(made["head-atlas-corpus.csv"]()))
    assert list(frame.columns) == CSV_COLUMNS
    assert len(frame) == 72 and frame[["layer", "head"]].drop_duplicates().shape[0] == 72
    assert frame.loc[(frame["layer"] == 0) & (frame["head"] == 2), "label"].item() == "previous"


def test_the_atlas_of_the_text_is_the_cores(bundled):
    page = open_page(view="atlas", atlas="text")
    assert_healthy(page)
    heads = chart_rows(atlas_charts(page)[0]).sort_values(["layer", "head"])
    want = head_atlas(bundled, [(TEXT, None)])
    np.testing.assert_allclose(heads[list(COLUMNS)].to_numpy().reshape(6, 12, -1), want.scores, rtol=1e-5,
                               atol=1e-6)
    assert heads["label"].tolist() == want.labels().ravel().tolist()


def test_the_plane_of_the_text_is_the_cores_places_and_keeps_the_corpus_planes_spec(corpus_page, bundled):
    """The heads' places as the core lays them out, centred and scaled by one factor into [-1, 1] (distances alone
    count); the spec holds no number of the data, so the browser swaps the text's points into the corpus's chart."""
    page = open_page(view="atlas", atlas="text")
    assert_healthy(page)
    plane = atlas_charts(page)[1]
    shown = chart_rows(plane).sort_values(["layer", "head"])[["x", "y"]].to_numpy()
    places = head_atlas(bundled, [(TEXT, None)]).plane()  # (H, 2)
    scale = (shown[:, 0].max() - shown[:, 0].min()) / (places[:, 0].max() - places[:, 0].min())
    np.testing.assert_allclose(shown - shown.mean(axis=0), (places - places.mean(axis=0)) * scale, rtol=1e-4,
                               atol=1e-6)
    assert np.abs(shown).max() <= 1 and np.isclose(np.abs(shown).max(axis=0).max(), 1 / 1.05, rtol=1e-6)
    assert plane.proto.spec == atlas_charts(corpus_page[0])[1].proto.spec


@pytest.mark.parametrize("chart_index", [0, 1], ids=["grid", "plane"])
def test_clicking_a_head_opens_it_in_the_one_head_view(chart_index):
    page = open_page(view="atlas", atlas="text", scaling="linear")
    select_on_chart(page, atlas_charts(page)[chart_index], {"open_head": [{"layer": 3, "head": 7}]})
    assert_healthy(page)
    assert page.radio(key="view").value == "head"
    assert (page.query_params["layer"], page.query_params["head"]) == ("3", "7")
    assert "scaling" not in page.query_params  # opened as the model runs it, as the atlas measured it


def test_a_malformed_atlas_in_a_link_falls_back_with_a_notice():
    page = open_page(view="atlas", atlas="everything")
    assert_healthy(page)
    assert "atlas=`everything` was ignored" in warnings(page)


def test_on_gpt2_the_first_token_stands_for_cls_and_there_is_no_sep(tiny_gpt2_checkpoint, tiny_gpt2_model,
                                                                     monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "the cat sat, and the dog ran."
    page, made = open_keeping_downloads({"view": "atlas", "atlas": "text", "model": str(tiny_gpt2_checkpoint),
                                         "text": text})
    assert_healthy(page)
    grid = atlas_charts(page)[0]
    heads = chart_rows(grid).sort_values(["layer", "head"])
    want = head_atlas(tiny_gpt2_model, [(text, None)])
    np.testing.assert_allclose(heads["cls"].to_numpy().reshape(2, 4), want.column("cls"), rtol=1e-5)
    tooltips = [tip.get("title", tip["field"]) for tip in json.loads(grid.proto.spec)["encoding"]["tooltip"]]
    assert "first token" in tooltips and "[SEP]" not in tooltips and "sep" not in tooltips
    frame = pd.read_csv(io.StringIO(made["head-atlas-text.csv"]()))
    assert list(frame.columns) == CSV_COLUMNS and frame["sep"].isna().all()
    assert "the first token" in " ".join(c.value for c in page.caption)


def test_pages_asking_for_a_corpus_atlas_at_once_compute_it_once(monkeypatch):
    """The second page waits for the first one's atlas (before taking a heavy slot) and reads it."""
    import threading
    import time

    from components.caches import atlas as kept

    computed = []

    def slow_atlas(model, pairs, settings, on_batch):
        computed.append(len(pairs))
        time.sleep(0.3)
        return f"the atlas of {len(pairs)} sentences"

    monkeypatch.setattr(kept.atlas, "head_atlas", slow_atlas)
    monkeypatch.setattr(kept, "model", lambda name: None)
    got = []
    pages = [threading.Thread(target=lambda: got.append(kept.corpus_atlas("a model no test loads"))) for _ in range(3)]
    for page in pages:
        page.start()
    for page in pages:
        page.join()
    assert computed == [len(corpus_sentences())] and len(set(got)) == 1 and len(got) == 3
    assert kept.corpus_atlas_kept("a model no test loads") == got[0]
