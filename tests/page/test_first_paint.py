"""The page draws its frame and its sidebar before torch and transformers are imported
(components/page/first_paint.py).

Each check runs in a new Python process, since this one has long imported torch. The first imports what the page's
script imports before its sidebar is drawn, read off the script itself; the second runs the page with torch and
transformers made unimportable, so that the run stops at the heavy import: what it drew by then is what a reader
sees while a new server loads.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "page.py"
HEAVY = ("torch", "transformers")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


# The script's last call that draws in the sidebar: the text box, the view selector and the rest come above it.
LAST_SIDEBAR_CALL = "classroom.start_button()"


def imports_before_the_sidebar() -> list[str]:
    """The script's import statements above its last call that draws in the sidebar, as source."""
    body = ast.parse(APP.read_text()).body
    last = next(node for node in body if ast.unparse(node) == LAST_SIDEBAR_CALL)
    imports = [ast.unparse(node) for node in body[:body.index(last)] if isinstance(node, ast.Import | ast.ImportFrom)]
    assert any("first_paint" in line for line in imports), imports
    assert any("controls" in line for line in imports), imports
    return imports


def test_what_the_page_imports_before_its_sidebar_is_drawn_brings_no_torch_or_transformers():
    imports = imports_before_the_sidebar()
    code = "\n".join([*imports, "import sys, json", f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"])
    assert json.loads(run_python(code)) == []


# The caches read before the sidebar is drawn, and the package that holds them, which imports none of its modules.
TORCH_FREE_CACHES = ("components.caches", "components.caches.offered", "components.caches.stores")


def test_the_caches_package_and_the_caches_the_sidebar_reads_bring_no_torch_or_transformers():
    """Whatever the page imports today, a module that reaches these first (the page, a class's link, a test) pays
    for no torch: the heavy caches are modules of their own, imported by name where they are used."""
    code = "\n".join([f"import {name}" for name in TORCH_FREE_CACHES] +
                      ["import sys, json", f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"])
    assert json.loads(run_python(code)) == []


def drawn_without_torch(link: dict[str, str]) -> dict:
    """What a run of the page, opened with link, draws before it stops at the import of torch."""
    code = f"""
import json, sys
for name in {HEAVY!r}:
    sys.modules[name] = None  # importing it now raises ImportError: the run stops at the page's heavy imports
from streamlit.testing.v1 import AppTest
page = AppTest.from_file({str(APP)!r}, default_timeout=120)
page.query_params.update({link!r})
page.run()
print(json.dumps({{
    "stopped": len(page.exception),
    "sidebar": [title.value for title in page.sidebar.title],
    "main": [title.value for title in page.main.title],
    "status": [block.label for block in page.main.get("status")],
    "widgets": [widget.key for widget in page.sidebar if getattr(widget, "key", None)],
    "view": [radio.value for radio in page.sidebar.radio if radio.key == "view"],
    "text": [box.value for box in page.sidebar.text_area if box.key == "text"],
}}))
"""
    return json.loads(run_python(code))


def test_the_sidebar_title_the_page_title_and_a_loading_status_are_drawn_before_torch_is_imported():
    drawn = drawn_without_torch({})
    assert drawn["stopped"] == 1, drawn  # at the heavy imports: nothing below them was drawn
    assert drawn["sidebar"] == ["Attention Anatomy"]
    assert drawn["main"] == ["Attention Anatomy"]
    assert drawn["status"] == ["Loading the model (torch, transformers)…"]


def test_the_sidebar_controls_in_their_order_are_drawn_before_torch_is_imported():
    """The view selector, the example picker, the text box, the second sentence, the model and presentation mode:
    a reader can choose and type while the model loads, and nothing in the sidebar moves when it has loaded."""
    drawn = drawn_without_torch({})
    assert drawn["stopped"] == 1, drawn
    assert drawn["widgets"] == ["view", "preset", "text", "text_b", "model", "present", "colour_blind", "start_class"]
    assert drawn["view"] == ["head"] and drawn["text"] == ["time flies like an arrow"]


def test_a_links_view_and_text_are_the_sidebars_before_torch_is_imported():
    drawn = drawn_without_torch({"view": "lesson", "text": "the cat sat"})
    assert drawn["stopped"] == 1, drawn
    assert (drawn["view"], drawn["text"]) == (["lesson"], ["the cat sat"])
