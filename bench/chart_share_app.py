"""The app's page (page.py) for bench/chart_share.py, its one-head view's chart drawn as the app draws it, with the
picked head alone in its data, or not at all, as the environment's BENCH_CHART says: "every", "one" or "none".
What the rest of the page draws is the app's own. Not the app: a bench's page."""

import os
import runpy
from pathlib import Path

from components.views import head as one_head_view

DRAWN = ("every", "one", "none")
drawn = os.environ.get("BENCH_CHART", "every")
if drawn not in DRAWN:
    raise SystemExit(f"BENCH_CHART must be one of {', '.join(DRAWN)}, not {drawn!r}")


def picked_alone(num_layers: int, num_heads: int, rows: int, columns: int, layer: int, head: int,
                 drawn_as: str = "heatmap") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """scrub.send_plan's answer for a text too long for more: the page's layer and head alone."""
    return (layer,), (head,)


if drawn == "one":
    one_head_view.send_plan = picked_alone
elif drawn == "none":
    one_head_view.scrub_heatmap = lambda *arguments, **options: None

runpy.run_path(str(Path(__file__).resolve().parents[1] / "page.py"), run_name="__main__")
