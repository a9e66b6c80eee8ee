"""The induction lab's charts, built from numbers: the two models' loss and every head's scores over training,
and every head's attention at the kept steps, the step picked in the browser.

The maps are all sent once, one small picture per kept step and head, drawn as the all-heads grid's are
(heatmap.placed_picture and placed_pictures): every picture stays drawn, those of the steps not picked 0 px wide,
so that moving the Step input repaints without a round trip to the server and without loading a picture again. The
step is a point selection bound to a range input, as the one-head view's layer and head are (scrub.picker), and
nothing reports it to the server: the page has nothing to redo for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from attention.analyses.head_scores import INDUCTION_THRESHOLD
from components.charts.heatmap import picked, pixel_scales, placed_picture, placed_pictures
from components.charts.lettering import READING, Lettering

# The selection that picks the kept step, and the field it picks. Not "step": Vega-Lite reads a key of a binding
# named after a selection's field as that field's own binding, and the range input's "step" was taken for one (a
# text input came instead).
STEP = "kept"
MAPS = "maps"  # the maps' dataset: one row per kept step, model, layer and head
MAPS_DESCRIBED = "Every head"  # how the maps' description starts: a page's style finds the chart by it
SHOWN = "shown_steps"  # one row per kept step: the title over the maps
WEIGHTS = [0.0, 1.0]  # every map's colours: the same colour is the same weight at every step and in every head
# The maps' groups, in reading order: (the model's layers, the layer), each a row of heads.
GROUPS = ((1, 0), (2, 0), (2, 1))
GROUP_COLOURS = {"1 layer: layer 0": "#7f7f7f", "2 layers: layer 0": "#e6842a", "2 layers: layer 1": "#1f4e9c"}
MAP_MOST, MAP_LEAST, MAP_GAP = 160, 64, 10  # px: a map's side, and between two
MAP_PROJECTED = 200  # px: a map's side at most in presentation mode, for the back of a room
# px of a window the maps leave to the rest: the page's header, the Step input and the title above them
MAPS_CHROME_PX = 150
GROUP_GAP = 28  # px between two groups side by side
# px the maps leave free at their column's right: Vega pads a chart, and on a phone four maps filled the column to
# its last px and touched the screen's edge
MAPS_MARGIN_PX = 16
HEAD_LABEL, GROUP_LABEL = 16, 24  # px above each map for "head h", above each row of maps for its model and layer
CURVE_HEIGHT = 170
CURVE_PLOT = 220  # px, a curve's plot, at most
CURVE_AXIS_PX = 70  # px left of a curve's plot for its axis
LOSSES, SCORES = "losses", "scores"  # the curves' datasets
LOSS_COLOURS = {"1 layer": "#7f7f7f", "2 layers": "#1f4e9c"}


def group_name(layers: int, layer: int) -> str:
    return f"{layers} layer{'s' if layers > 1 else ''}: layer {layer}"


@dataclass(frozen=True)
class MapsLayout:
    """Where the maps stand: side px each, `columns` to a row within a group (its heads wrap onto more rows), and
    `across` groups side by side (a model's layer each), the next groups under them."""

    heads: int
    side: int = MAP_MOST
    columns: int = 4
    across: int = 1

    def rows(self) -> int:  # rows of maps per group
        return math.ceil(self.heads / self.columns)

    def group_width(self) -> int:
        return min(self.heads, self.columns) * (self.side + MAP_GAP) - MAP_GAP

    def group_height(self) -> int:
        return GROUP_LABEL + self.rows() * (HEAD_LABEL + self.side + MAP_GAP)

    def place(self, group: int, head: int) -> tuple[int, int]:
        """The x and y (px, from the top left) of a map."""
        group_row, group_column = divmod(group, self.across)
        row, column = divmod(head, self.columns)
        return (group_column * (self.group_width() + GROUP_GAP) + column * (self.side + MAP_GAP),
                group_row * self.group_height() + GROUP_LABEL + row * (HEAD_LABEL + self.side + MAP_GAP) + HEAD_LABEL)

    def size(self) -> tuple[int, int]:
        return (self.across * (self.group_width() + GROUP_GAP) - GROUP_GAP,
                math.ceil(len(GROUPS) / self.across) * self.group_height())


def maps_layout(heads: int, width: int, projected: bool = False, height: int | None = None) -> MapsLayout:
    """As many maps to a row as a column width px wide holds (at least MAP_LEAST px each), as many groups side by
    side as fit, the maps as large as they may be (larger on a projector) but no taller together than a window
    height px high leaves them: every head of every model in sight while the reader drags the Step input."""
    width -= MAPS_MARGIN_PX
    columns = max(1, min(heads, (width + MAP_GAP) // (MAP_LEAST + MAP_GAP)))
    side = max(MAP_LEAST, min(MAP_PROJECTED if projected else MAP_MOST, (width + MAP_GAP) // columns - MAP_GAP))
    rows = math.ceil(heads / columns)
    for _ in range(2):  # smaller maps may let more groups stand side by side, which leaves them more height
        across = max(1, min(len(GROUPS), (width + GROUP_GAP) // (columns * (side + MAP_GAP) - MAP_GAP + GROUP_GAP)))
        if height is not None:
            per_group = (height - MAPS_CHROME_PX) // math.ceil(len(GROUPS) / across)
            side = max(MAP_LEAST, min(side, (per_group - GROUP_LABEL) // rows - HEAD_LABEL - MAP_GAP))
    return MapsLayout(heads, side, columns, across)


def maps_frames(kept_one: np.ndarray, kept_two: np.ndarray, scores: tuple[np.ndarray, ...], kept_steps: np.ndarray,
                layout: MapsLayout) -> dict[str, pd.DataFrame]:
    """The maps' datasets. kept_one (K, 1, nh, P, P) and kept_two (K, 2, nh, P, P): every head's attention at the
    kept steps (K,); scores: the previous-token and induction scores on the maps, (K, 1, nh) and (K, 2, nh) each,
    in that order. Each map is shown from its step until the next kept one."""
    previous = {1: scores[0], 2: scores[1]}
    induction = {1: scores[2], 2: scores[3]}
    kept = {1: kept_one, 2: kept_two}
    until = np.append(kept_steps[1:], np.iinfo(np.int32).max)  # (K,)
    rows = []
    for index, (step, end) in enumerate(zip(kept_steps.tolist(), until.tolist(), strict=True)):
        for group, (layers, layer) in enumerate(GROUPS):
            for head in range(layout.heads):
                x, y = layout.place(group, head)
                rows.append({STEP: step, "until": end, "model": group_name(layers, layer), "head": head,
                             "previous_token": float(previous[layers][index, layer, head]),
                             "induction": float(induction[layers][index, layer, head]),
                             **placed_picture(kept[layers][index, layer, head], WEIGHTS, x, y, layout.side)})
    return {MAPS: pd.DataFrame(rows), SHOWN: pd.DataFrame({STEP: kept_steps, "until": until})}


def maps_spec(layout: MapsLayout, last_step: int, every: int, lettering: Lettering = READING) -> dict:
    """Every head's map at the step the Step input picks (0 to last_step, by every), under its "head h", each
    group of heads under its model and layer, and a title naming the step shown."""
    width, height = layout.size()
    top = -(-last_step // every) * every  # a run stopped between kept steps: its last map from there on
    step = alt.selection_point(name=STEP, fields=[STEP], value=[{STEP: top}], clear=False,
                               bind=alt.binding_range(min=0, max=top, step=every, name="Step"))
    # Before training there is one step to show, and no input to move.
    params = [step] if top > 0 else []
    shown = f"datum.{STEP} <= {picked(STEP)} && {picked(STEP)} < datum.until" if params else "true"
    x, y = pixel_scales(width, height)
    base = alt.Chart(alt.NamedData(name=MAPS))
    # Every step's pictures stay drawn; the others are 0 px wide (heatmap.placed_pictures).
    pictures = placed_pictures(base, x, y, shown, [
        alt.Tooltip("model:N", title="model"), alt.Tooltip("head:O"), alt.Tooltip(f"{STEP}:Q", title="step"),
        alt.Tooltip("previous_token:Q", title="previous-token score on this sequence", format=".2f"),
        alt.Tooltip("induction:Q", title="induction score on this sequence", format=".2f")]).add_params(*params)
    font = max(12, lettering.font_px)
    first_step = base.transform_filter(f"datum.{STEP} == 0")
    heads = first_step.transform_calculate(label="'head ' + datum.head").mark_text(
        align="left", baseline="bottom", dy=-3, fontSize=font).encode(
        x=alt.X("x:Q", axis=None, scale=x), y=alt.Y("y:Q", axis=None, scale=y), text="label:N")
    groups = first_step.transform_filter("datum.head == 0").transform_calculate(
        top=f"datum.y - {HEAD_LABEL}").mark_text(align="left", baseline="bottom", dy=-4, fontSize=font + 1,
                                                 fontWeight="bold").encode(
        x=alt.X("x:Q", axis=None, scale=x), y=alt.Y("top:Q", axis=None, scale=y), text="model:N")
    chart = alt.layer(pictures, heads, groups).properties(width=width, height=height)
    title = alt.Chart(alt.NamedData(name=SHOWN)).transform_filter(shown).transform_calculate(
        label=f"'Every head\\'s attention at step ' + datum.{STEP}").mark_text(
        align="left", baseline="top", fontSize=font + 2, fontWeight="bold", limit=width).encode(
        x=alt.value(0), y=alt.value(0), text="label:N").properties(width=width, height=font + 8)
    return alt.vconcat(title, chart, spacing=4).configure_view(strokeWidth=0).properties(
        autosize=alt.AutoSizeParams(type="pad"), usermeta={"embedOptions": {"renderer": "canvas"}},
        description=f"{MAPS_DESCRIBED}'s attention at the step picked: the first layer's previous-token stripe and the "
                    "second layer's induction stripe appear as training goes").to_dict(validate=False)


def curves_frames(rows: dict[str, np.ndarray]) -> dict[str, pd.DataFrame]:
    """The curves' datasets from the scores over training as the CSV's columns (attention.labs.induction.history_rows):
    each model's loss per measured step, and every head's scores per measured step."""
    frame = pd.DataFrame(rows)
    frame["model"] = [group_name(layers, layer) for layers, layer in zip(frame["layers"], frame["layer"],
                                                                          strict=True)]
    frame["line"] = frame["model"] + ", head " + frame["head"].astype(str)
    losses = frame.drop_duplicates(["layers", "step"])[["layers", "step", "loss"]]
    losses = losses.assign(model=losses["layers"].map({1: "1 layer", 2: "2 layers"}))
    return {LOSSES: losses.reset_index(drop=True), SCORES: frame[["step", "model", "line", "previous_token",
                                                                   "induction"]]}


def curves_spec(total_steps: int, width: int, lettering: Lettering = READING) -> dict:
    """The loss on the repeated part of both models, and every head's previous-token and induction score, over the
    steps measured, on an x axis spanning the run: side by side where a column width px wide holds three, else one
    under the other. Its data are named (curves_frames): a redraw while training swaps them into the same spec."""
    beside = width >= 3 * (CURVE_PLOT + CURVE_AXIS_PX)
    plot = CURVE_PLOT if beside else max(160, min(520, width - CURVE_AXIS_PX - 150))
    x = alt.X("step:Q", title="step", scale=alt.Scale(domain=[0, total_steps]))
    models = alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical"),
                       scale=alt.Scale(domain=list(LOSS_COLOURS), range=list(LOSS_COLOURS.values())))
    loss = alt.Chart(alt.NamedData(name=LOSSES)).mark_line().encode(
        x=x, y=alt.Y("loss:Q", title="cross-entropy", scale=alt.Scale(zero=True)), color=models,
        tooltip=["model:N", "step:Q", alt.Tooltip("loss:Q", format=".3f")],
    ).properties(title="Loss on the repeated part", width=plot, height=CURVE_HEIGHT)
    groups = alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical"),
                       scale=alt.Scale(domain=list(GROUP_COLOURS), range=list(GROUP_COLOURS.values())))
    # Where a head becomes one (attention.analyses.head_scores), the same for both kinds.
    rule = alt.Chart(alt.Data(values=[{"score": INDUCTION_THRESHOLD}])).mark_rule(
        strokeDash=[4, 4], color="gray").encode(y="score:Q")

    def scores(field: str, title: str) -> alt.LayerChart:
        lines = alt.Chart(alt.NamedData(name=SCORES)).mark_line(strokeWidth=1.5).encode(
            x=x, y=alt.Y(f"{field}:Q", title=f"score (dashed: {INDUCTION_THRESHOLD})", scale=alt.Scale(domain=[0, 1])),
            color=groups, detail="line:N", tooltip=["line:N", "step:Q", alt.Tooltip(f"{field}:Q", format=".2f")])
        return alt.layer(lines, rule).properties(title=title, width=plot, height=CURVE_HEIGHT)

    parts = [loss, scores("previous_token", "Previous-token scores"), scores("induction", "Induction scores")]
    chart = (alt.hconcat if beside else alt.vconcat)(*parts).resolve_scale(color="independent")
    return chart.properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"),
                            description="The loss on the repeated part and every head's scores over training"
                            ).to_dict(validate=False)
