"""The head atlas: what every head of the model does (Clark et al. 2019), over the corpus or over the text alone.

A layer × head grid of glyphs, each coloured by the head's label and as large as the share behind it, with all
its numbers on hover; the heads placed on a plane by how alike they attend; the table as CSV. A click on a head,
in either chart, opens it in the One head view, as the model runs it (source bert, √d_k, its own mask): the
atlas measured the model's own heads (attention/analyses/atlas.py says how).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention.analyses.atlas import BEHAVIOURS, COLUMNS, LABELS, THRESHOLDS, HeadAtlas
from components.caches import atlas
from components.charts.atlas import OPEN_HEAD, alike_plane, atlas_grid, describe_grid, describe_plane
from components.charts.draw import show
from components.page import controls
from components.page.downloads import csv_download
from components.page.page_state import ATLASES
from components.views.parts.scrubbed import said

CSV_COLUMNS = ["layer", "head", *COLUMNS, "label"]
GRID_KEY, PLANE_KEY = "atlas_grid", "atlas_plane"
SIDE_BY_SIDE_PX = 900  # a view at least this wide has the words beside the grid, else under it
GRID_SHARE = 0.6


def render(context) -> None:
    family = context.family
    names = _label_names(family)
    over = controls.bound_widget(st.segmented_control, "atlas", "Measured over", options=list(ATLASES),
                                 format_func=ATLASES.get)
    measured = _corpus_atlas(context.model_name) if over == "corpus" else atlas.text_atlas(
        context.model_name, context.text, context.text_b)
    heads = _table(measured, names)
    numbers = [(name, _column_title(name, family)) for name in COLUMNS if name != "sep" or family.separator]
    side_by_side = not context.stacked and context.width >= SIDE_BY_SIDE_PX
    grid_column, words_column = st.columns([GRID_SHARE, 1 - GRID_SHARE]) if side_by_side else (st.container(),) * 2
    with grid_column:
        show(atlas_grid(heads, names, numbers, measured.num_layers, measured.num_heads,
                        context.column_px(GRID_SHARE) if side_by_side else context.width, context.lettering),
             key=GRID_KEY, lettering=context.lettering, on_select=lambda: _open(GRID_KEY), selection_mode=OPEN_HEAD)
        said([describe_grid(heads, names, measured.num_layers, measured.num_heads)])
    with words_column:
        st.markdown(_in_words(heads, names))
        st.caption((f"Averaged over the {measured.sentences} sentences of the page's corpus, varied English written "
                    "for it (attention/data/atlas_corpus.txt, CC0), not over the sidebar's text: \"this text\" "
                    "measures that alone. " if over == "corpus" else
                    "Measured on the sidebar's text alone. ") + "Point at a head for its numbers; click it to open "
                   "it in the One head view.")
        csv_download(lambda: heads[CSV_COLUMNS].to_csv(index=False, float_format="%.6g"), f"head-atlas-{over}")
    st.caption("What each head does, in the numbers Clark et al. (2019, \"What does BERT look at?\") measured: the "
               "share of its attention on the token before (previous), after (next), on itself (self), on "
               f"{family.first_token}, " + (f"on {family.separator}, " if family.separator else "") +
               "on \".\" and \",\" (punct), each averaged over the queries, and how spread out its rows are "
               "(entropy ÷ ln of the number of keys its mask lets a row see: 1 is a row spread evenly over all of "
               "them, whether a token looks both ways or back only). A head is named by its strongest behaviour above "
               f"{THRESHOLDS['previous']:.1f} (previous, next, self) or {THRESHOLDS['cls']:.1f} (the others), else "
               "broad (entropy above 0.8), else mixed; its glyph is as large as that share.")
    _plane(context, measured, heads, numbers, over)


def _corpus_atlas(name: str) -> HeadAtlas:
    """The corpus atlas, with a progress bar the first time the server computes it."""
    kept = atlas.corpus_atlas_kept(name)
    if kept is not None:
        return kept
    bar = st.progress(0.0, text=f"Measuring every head over the corpus's {atlas.CORPUS_SENTENCES} sentences, "
                                "once for this server…")

    def report(done: int, total: int) -> None:
        bar.progress(done / total, text=f"Measuring every head over the corpus: {done} of {total} sentences…")

    measured = atlas.corpus_atlas(name, report)
    bar.empty()
    return measured


def _label_names(family) -> dict[str, str]:
    """Each label (attention.analyses.atlas.LABELS) this model's family has, as the page names it: the sink labels are
    the family's own tokens, and a family with no separator (GPT-2) has no "sep"."""
    names = {"previous": "previous token", "next": "next token", "self": "itself",
             "cls": family.first_token.removeprefix("the "), "sep": family.separator,
             "punct": "punctuation", "broad": "broad", "mixed": "mixed"}
    return {label: name for label, name in names.items() if name}


def _column_title(name: str, family) -> str:
    return {"cls": family.first_token.removeprefix("the "), "sep": family.separator or "sep",
            "entropy": "entropy / ln keys seen"}.get(name, name)


def _table(measured: HeadAtlas, names: dict[str, str]) -> pd.DataFrame:
    """One row per head: layer, head, the COLUMNS, label, its name on the page, its strength and its place on
    the plane (x, y; none when the text is too long for the divergences)."""
    heads = pd.DataFrame(measured.rows())
    heads["behaviour"] = heads["label"].map(names)
    heads["strength"] = measured.strength().ravel()
    plane = measured.plane()
    if plane is not None:
        heads["x"], heads["y"] = plane[:, 0], plane[:, 1]
    return heads


def _in_words(heads: pd.DataFrame, names: dict[str, str]) -> str:
    """The clearest head of each behaviour found, and how many heads each label has."""
    lines = []
    for behaviour in BEHAVIOURS:
        found = heads[heads["label"] == behaviour]
        if len(found):
            best = found.loc[found[behaviour].idxmax()]
            others = f" ({len(found) - 1} more)" if len(found) > 1 else ""
            lines.append(f"- **{names[behaviour]}**: layer {best['layer']}, head {best['head']} gives "
                         f"{best[behaviour]:.0%} of its attention to {_where(behaviour, names)}{others}")
    counts = heads["label"].value_counts()
    tally = ", ".join(f"{counts[label]} {names[label]}" for label in LABELS if label in counts)
    return ("\n".join(lines) + "\n\n" if lines else "No head passes a behaviour's threshold. ") + \
        f"Of {len(heads)} heads: {tally}."


def _where(behaviour: str, names: dict[str, str]) -> str:
    return {"previous": "the token before", "next": "the token after", "self": "itself",
            "punct": "\".\" and \",\""}.get(behaviour, names[behaviour])


def _plane(context, measured: HeadAtlas, heads: pd.DataFrame, numbers: list[tuple[str, str]], over: str) -> None:
    st.subheader("Heads that attend alike", anchor=False)
    if "x" not in heads:
        st.info("This text is too long to compare every two heads here: the corpus atlas (Measured over: the "
                "corpus) has the plane.")
        return
    st.caption("Every head placed so that heads close together attend alike: the mean Jensen–Shannon divergence "
               "between two heads' rows " + ("over the corpus's sentences" if over == "corpus" else "on this text") +
               ", laid on a plane by classical multidimensional scaling (Clark et al.'s Fig. 6). Colour is the "
               "layer; the axes have no unit, only distances count. Click a head to open it.")
    show(alike_plane(heads, numbers, measured.num_layers, min(context.plot_px(), 460), context.lettering),
         key=PLANE_KEY, lettering=context.lettering, on_select=lambda: _open(PLANE_KEY), selection_mode=OPEN_HEAD)
    said([describe_plane(heads)])


def _open(chart_key: str) -> None:
    """A head was clicked: open it in the One head view as the model runs it, which is what the atlas measured."""
    points = st.session_state[chart_key]["selection"].get(OPEN_HEAD) or []
    if points:
        controls.request(view="head", layer=int(points[0]["layer"]), head=int(points[0]["head"]), source="bert",
                         scaling="sqrt", mask="model")
