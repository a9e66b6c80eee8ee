"""What a full collection of Python's cyclic garbage collector costs the server once a page has been drawn: the pause in
which every session waits, since the collector holds the interpreter. Asserts nothing.

    python -m bench.gc_pause [--view head] [--collections 5]

In a fresh process, as a new server: the page (page.py) run once on the 32-token text, in Streamlit's own test
runner, then its layer moved twice; then a full collection timed again and again (the median), with the objects it
scans and those frozen out of its sight (components/server/process.freeze_long_lived). Then the same collection with
nothing frozen (gc.unfreeze), in the same process: what the freeze spares each full collection.

Python runs a full collection on its own, once enough objects have outlived the younger generations: on the app's
server, about every few dozen presses, in the middle of one.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

from bench.page_speed import ROOT, TEXT_32

PAGE = str(ROOT / "page.py")


def collection_ms(collections: int) -> float:
    """The median of full collections timed one after another, in ms."""
    times = []
    for _ in range(collections):
        start = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--view", default="head")
    parser.add_argument("--collections", type=int, default=5)
    arguments = parser.parse_args()
    from streamlit.testing.v1 import AppTest

    page = AppTest.from_file(PAGE, default_timeout=300)
    page.query_params.update(view=arguments.view, text=TEXT_32)
    modules_before = len(sys.modules)
    page.run()
    for layer in (1, 2):  # two moves: what a session keeps between runs is alive, as on a server
        page.query_params["layer"] = str(layer)
        page.run()
    if page.exception:
        sys.exit(f"the page failed: {page.exception[0].message}")
    frozen, scanned = gc.get_freeze_count(), len(gc.get_objects())
    as_served = collection_ms(arguments.collections)
    gc.unfreeze()
    unfrozen = collection_ms(arguments.collections)
    imported = len(sys.modules) - modules_before
    print(f"The {arguments.view} view's page, run once and moved twice in a fresh process ({imported} modules imported "
          "by its runs):\n")
    print(f"| | objects the collector scans | frozen out of its sight | a full collection, median of "
          f"{arguments.collections} |")
    print("|---|---|---|---|")
    print(f"| as the server freezes | {scanned:,} | {frozen:,} | {as_served:.1f} ms |")
    print(f"| nothing frozen | {scanned + frozen:,} | 0 | {unfrozen:.1f} ms |")


if __name__ == "__main__":
    main()
