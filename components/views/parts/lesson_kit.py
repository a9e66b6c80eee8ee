"""The guided lesson's pieces that every step uses: a step's heatmaps, formula, shapes table and prose, and the
trained trace most steps read (components/views/lesson.py draws the steps with them)."""

from __future__ import annotations

import streamlit as st

from attention.stages.settings import SOURCE_LABELS
from components.caches import chart_memos
from components.charts.chart_summaries import describe_matrix
from components.charts.clipped import clip_note
from components.charts.draw import draw_spec
from components.charts.heatmap import heatmap
from components.charts.plot_sizes import MIN_PLOT_PX, MIN_ROW_PX
from components.charts.token_axes import second_sentence_from
from components.page.downloads import chart_downloads
from components.page.lesson_steps import lesson_of, trained_head
from components.page.shapes_panel import shape_rows
from components.page.viewport import COLUMN_GAP_PX
from components.views.parts.in_place import caption_in_place
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.scrubbed import said


def trained(context, quiet: bool = False):
    """The trace with the model's trained projections, whatever the source chosen beside this view; unless quiet,
    a note in place (caption_in_place) that says so when that source is another."""
    changes = trained_head(context.state.head, context.shape.num_heads)
    head = changes["head"]
    if not quiet:
        caption_in_place(f"This step shows the model's trained weights (source: {SOURCE_LABELS[changes['source']]}), "
                         f"layer {context.state.layer}, head {head}, whatever the source chosen beside this view."
                         if context.state.source != changes["source"] else None)
    return context.trace(**changes), head


def heatmap_in(context, matrix, rows, columns, title, key, *, row_title="query token", column_title="key token",
             scheme="blues", second_sentence=(None, None), width: int | None = None, download: bool = False,
             clip_at: float | None = None, text: str | None = None, where: str = "") -> None:
    """A heatmap sized to a column width px wide (the view's, by default), with its axes and legend around the
    plot, its text as large as the view's lettering; second_sentence: sentence B's first row and column
    (heatmap's); download: PNG and SVG buttons under it (for the step's main chart); clip_at: where a signed
    scale ends, the cells beyond it ringed (heatmap's; colour_ranges.robust_bound). text: what a screen reader
    reads of it (chart_summaries; by default its size, range and largest cells, computed from matrix), written
    in the step's container, so that it is shown and hidden with the step; and its numbers as a table, on request
    (number_table). where: the layer and head it shows ("layer 2, head 5"), in its words, its table's caption and
    its downloads' title, never in the chart's own: a title that changed with them would change the chart's spec,
    and the browser would build the chart anew at every move instead of swapping its numbers in."""
    named = f"{title}, {where}" if where else title
    options = dict(title=title, row_title=row_title, column_title=column_title, scheme=scheme, canvas=True,
                   size=context.plot_px(width), second_sentence=second_sentence, lettering=context.lettering,
                   clip_at=clip_at)
    spec, frames = chart_memos.kept_heatmap(matrix, rows, columns, **options)
    if where:  # over the chart, in words: a phone's side column, with the layer and head, is far below
        st.caption(where[0].upper() + where[1:])
    draw_spec(spec, frames, key=f"lesson-{key}", lettering=context.lettering)
    if clip_at is not None:
        st.caption(clip_note(matrix, clip_at))
    said([text or describe_matrix(named, matrix, rows, columns, row_title, column_title)])
    tables_on_request(f"lesson-{key}", lambda: number_table(matrix, rows, columns, caption=named,
                                                            row_title=row_title, column_title=column_title))
    if download:  # built again on a click only
        chart_downloads(lambda: heatmap(matrix, rows, columns, **options), f"lesson-{key}", f"lesson-{key}",
                        title=named)


def two_heatmaps(context, tokens: int):
    """Two places for two heatmaps of a text of `tokens` tokens, and the width each may take: side by side where
    both fit with readable rows, else one under the other (a phone, a projector, a long text)."""
    beside = context.width >= 2 * (max(MIN_PLOT_PX, MIN_ROW_PX * tokens) + context.lettering.label_room_px) + \
        COLUMN_GAP_PX
    if not beside:
        return st.container(), st.container(), context.width
    left, right = st.columns(2, gap="medium")
    return left, right, (context.width - COLUMN_GAP_PX) // 2


def pair_starts(trace, columns_too: bool = True) -> tuple[int | None, int | None]:
    """Where sentence B starts among the trace's tokens (None: not a pair), for rows and, if they are tokens
    too, for columns."""
    if "token_type_ids" not in trace.names:  # a family that reads one text (GPT-2) has no segments
        return None, None
    second = second_sentence_from(trace["token_type_ids"][0].tolist())
    return second, second if columns_too else None


def shapes_table(trace, names: list[str]) -> None:
    """The shapes of the named steps, as Python prints them, with the core's formulas."""
    rows = [row for row in shape_rows(trace.steps) if row[1] in names]
    lines = [f"| `{name}` | `{shape}` | `{formula}` |" for _, name, shape, formula in rows]
    st.markdown("| step | shape | formula |\n|---|---|---|\n" + "\n".join(lines))


def formula(context, *parts: str, between: str = r"\qquad") -> None:
    """A formula of several parts: in a row, with between, or one under the other on a phone, where the row ran
    up to 150 px past the screen and KaTeX cut it there (the reader saw "token e" and no more). Spaces go round
    between: joined bare, "\\qquad" and the next part's "K" read as one unknown command."""
    if context.stacked:
        st.latex(r"\begin{gathered}" + r" \\ ".join(parts) + r"\end{gathered}")
    else:
        st.latex(f" {between} ".join(parts))


def explain(*sentences: str) -> None:
    st.markdown(" ".join(sentences))


def points(*parts: str) -> None:
    """Parts of an explanation as a list, one point each, where one paragraph would run for ten lines."""
    if parts:
        st.markdown("\n".join(f"- {part}" for part in parts))


def model_lesson(context) -> tuple[str, ...]:
    """The names of the steps of the lesson on the context's model, read off its trained outline as the shapes
    panel beside the lesson reads them (lesson_steps.step_outlines): a Llama's has its rotary and shared steps."""
    return lesson_of(context.outline(**trained_head(context.state.head, context.shape.num_heads)).names)


def step_number(context, name: str) -> int:
    """The number of the step of this name in the lesson on the context's model (a Llama's has two more)."""
    return model_lesson(context).index(name) + 1


def numbers(count: int) -> list[str]:
    return [str(i) for i in range(count)]
