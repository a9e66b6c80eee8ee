"""Charts built once for every text of the same lengths: their specs carry stand-in labels, and a copy made for a
text carries its own (a chart's labels are parameters, token_axes.token_labels, never expression source)."""

from __future__ import annotations

from components.charts.token_axes import token_labels


def stand_ins(*label_lists) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each distinct list of labels -> as many labels that say only which list they stand for. A spec built on them
    is the same for every text of those lengths, built once (chart_memos.chart_spec), and with_labels puts a text's own
    labels into a copy: Altair's building was a third of the page's run for a new 32-token text."""
    distinct = dict.fromkeys(tuple(labels) for labels in label_lists)
    return {labels: (f"#{index}",) * len(labels) for index, labels in enumerate(distinct)}


def with_labels(spec: dict, standing: dict[tuple[str, ...], tuple[str, ...]]) -> dict:
    """A copy of a spec built on stand_ins' labels (standing) that carries the real ones: the values of its label
    parameters (token_labels') replaced; the kept spec is left as it is."""
    values = {token_labels(list(stand_in)).name: list(labels) for labels, stand_in in standing.items()}
    params = [{**param, "value": values[param["name"]]} if param.get("name") in values else param
              for param in spec.get("params", [])]
    return {**spec, "params": params}
