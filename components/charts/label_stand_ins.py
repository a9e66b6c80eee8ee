"""Charts built once for every text of the same lengths: their specs carry stand-in labels, and the copy drawn for a
text reads its own from datasets sent beside the spec (a chart's labels are parameters, token_axes.token_labels,
never expression source). The spec drawn is then the same for every text of those lengths: the browser swaps the
datasets in the chart it has drawn, where a new spec made it build the chart again (embedding Vega anew, a few
hundred ms of a page's answer to a new text)."""

from __future__ import annotations

import pandas as pd

from components.charts.token_axes import labels_name

LABEL = "label"  # the labels' datasets' one column


def stand_ins(*label_lists) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each distinct list of labels -> as many labels that say only which list they stand for. A spec built on them
    is the same for every text of those lengths, built once (chart_memos.chart_spec), and with_labels gives it a
    text's own labels: Altair's building was a third of the page's run for a new 32-token text."""
    distinct = dict.fromkeys(tuple(labels) for labels in label_lists)
    return {labels: (f"#{index}",) * len(labels) for index, labels in enumerate(distinct)}


def with_labels(spec: dict, standing: dict[tuple[str, ...], tuple[str, ...]]) -> tuple[dict, dict[str, pd.DataFrame]]:
    """The spec to draw for a spec built on stand_ins' labels (standing), and the datasets that carry the real
    labels, by name, for draw_spec beside the chart's own. Each label parameter (token_labels') reads its dataset's
    column LABEL; a mark that draws nothing names the datasets, so that Vega-Lite keeps them in the chart. The kept
    spec is left as it is."""
    labels = {labels_name(list(stand_in)): list(real) for real, stand_in in standing.items()}
    frames = {dataset_of(name): pd.DataFrame({LABEL: real}, dtype=object) for name, real in labels.items()}
    return _reading(spec, {name: f"pluck(data('{dataset_of(name)}'), '{LABEL}')" for name in labels}, frames)


def with_label_lists(spec: dict, parameter: str, lists: dict[str, list[str]]
                     ) -> tuple[dict, dict[str, pd.DataFrame]]:
    """with_labels for a parameter that holds label lists by key (the counting maps' letters of each window size,
    built into the spec on stand-ins): the spec whose parameter reads each list from a dataset sent beside it, and
    those datasets. The spec is then the same for every window of those sizes."""
    names = {key: dataset_of_list(parameter, key) for key in lists}
    read = ", ".join(f"'{key}': pluck(data('{name}'), '{LABEL}')" for key, name in names.items())
    frames = {name: pd.DataFrame({LABEL: list(lists[key])}, dtype=object) for key, name in names.items()}
    return _reading(spec, {parameter: f"{{{read}}}"}, frames)


def dataset_of(parameter: str) -> str:
    """The name of the dataset that carries a label parameter's labels."""
    return f"{parameter}-text"


def dataset_of_list(parameter: str, key: str) -> str:
    """The name of the dataset that carries one of a parameter's label lists (with_label_lists)."""
    return f"{dataset_of(parameter)}-{key}"


def _reading(spec: dict, expressions: dict[str, str], frames: dict[str, pd.DataFrame]
             ) -> tuple[dict, dict[str, pd.DataFrame]]:
    """The spec whose parameters named in expressions read their value from it (an expression over the datasets
    frames, sent beside the chart), the datasets named in it, and the frames."""
    params = [{"name": param["name"], "expr": expressions[param["name"]]} if param.get("name") in expressions
              else param for param in spec.get("params", [])]
    return _naming({**spec, "params": params}, list(frames)), frames


def _naming(spec: dict, datasets: list[str]) -> dict:
    """The spec with a layer that names the datasets and draws nothing, in its first layered view: a dataset that no
    mark reads is left out of the chart Vega-Lite compiles, and an expression's data() would find nothing."""
    named = _named_in_first_layer(spec, datasets)
    if named is None:
        raise ValueError("a chart with label datasets needs a layered view to name them in")
    return named


def _named_in_first_layer(spec: dict, datasets: list[str]) -> dict | None:
    if "layer" in spec:
        # aria false: no mark container for a screen reader to find unnamed (axe's svg-img-alt, in an SVG chart)
        quiet = [{"data": {"name": name}, "mark": {"type": "point", "aria": False}, "transform": [{"filter": "false"}]}
                 for name in datasets]
        return {**spec, "layer": [*spec["layer"], *quiet]}
    for children in ("hconcat", "vconcat", "concat"):
        for index, child in enumerate(spec.get(children, [])):
            named = _named_in_first_layer(child, datasets)
            if named is not None:
                return {**spec, children: [*spec[children][:index], named, *spec[children][index + 1:]]}
    return None
