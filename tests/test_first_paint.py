"""The page draws its frame before torch and transformers are imported (components/page/first_paint.py).

Each check runs in a new Python process, since this one has long imported torch. The first imports what the page's
script imports before its first paint, read off the script itself; the second runs the page with torch and
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

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "streamlit_app.py"
HEAVY = ("torch", "transformers")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def imports_before_first_paint() -> list[str]:
    """The script's import statements above its call of first_paint.loading, as source."""
    body = ast.parse(APP.read_text()).body
    paint = next(node for node in body if "first_paint.loading(" in ast.unparse(node))
    imports = [ast.unparse(node) for node in body[:body.index(paint)] if isinstance(node, ast.Import | ast.ImportFrom)]
    assert any("first_paint" in line for line in imports), imports
    return imports


def test_what_the_page_imports_before_its_first_paint_brings_no_torch_or_transformers():
    imports = imports_before_first_paint()
    code = "\n".join([*imports, "import sys, json", f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"])
    assert json.loads(run_python(code)) == []


def test_the_sidebar_title_the_page_title_and_a_loading_status_are_drawn_before_torch_is_imported():
    code = f"""
import json, sys
for name in {HEAVY!r}:
    sys.modules[name] = None  # importing it now raises ImportError: the run stops at the page's heavy imports
from streamlit.testing.v1 import AppTest
page = AppTest.from_file({str(APP)!r}, default_timeout=120).run()
print(json.dumps({{
    "stopped": len(page.exception),
    "sidebar": [title.value for title in page.sidebar.title],
    "main": [title.value for title in page.main.title],
    "status": [block.label for block in page.main.get("status")],
}}))
"""
    drawn = json.loads(run_python(code))
    assert drawn["stopped"] == 1, drawn  # at the heavy imports: nothing below them was drawn
    assert drawn["sidebar"] == ["Attention Anatomy"]
    assert drawn["main"] == ["Attention Anatomy"]
    assert drawn["status"] == ["Loading the model (torch, transformers)…"]
