"""The page's JavaScript and CSS live in files beside the modules that read them (components/assets.py): every such
file is read by a module beside it, every file a module reads is there, and every script the page mounts as a
Streamlit component is real JavaScript with its values filled in."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest
import streamlit as st

from components.assets import PLACEHOLDER, filled, style_tag

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ROOT / "components"
ASSETS = sorted(path for suffix in ("*.js", "*.css") for path in COMPONENTS.rglob(suffix))
MODULES = sorted(COMPONENTS.rglob("*.py"))


def _calls(path: Path):
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)]


def _read_beside(path: Path) -> set[str]:
    """The files the module at path reads with read_beside(__file__, "name")."""
    return {call.args[1].value for call in _calls(path)
            if isinstance(call.func, ast.Name) and call.func.id == "read_beside" and len(call.args) == 2
            and isinstance(call.args[1], ast.Constant)}


def _mounts_a_component(path: Path) -> bool:
    """Whether the module at path makes a Streamlit component (st.components.v2.component(...))."""
    return any(ast.unparse(call.func).endswith("components.v2.component") for call in _calls(path))


def test_the_components_have_scripts_and_stylesheets_beside_them():
    names = {path.name for path in ASSETS}
    assert {"head_toggles.js", "head_toggles.css", "viewport.js", "class_watch.js", "page_head.css"} <= names


@pytest.mark.parametrize("asset", ASSETS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_script_and_stylesheet_is_read_by_a_module_beside_it(asset):
    readers = [module.name for module in asset.parent.glob("*.py") if asset.name in _read_beside(module)]
    assert readers, f"no module in {asset.parent.relative_to(ROOT)} reads {asset.name}: left over, or misspelt"
    text = asset.read_text(encoding="utf-8")
    assert text.strip(), f"{asset.name} is empty"
    if asset.suffix == ".css":
        # st.html's DOMPurify drops a style element whose text holds a '<' (style_tag refuses one at import too).
        assert "<" not in text, f"{asset.name}: a '<', even in a comment, loses the whole stylesheet"


@pytest.mark.parametrize("module", [path for path in MODULES if _read_beside(path)],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_every_file_a_module_reads_is_beside_it(module):
    for name in _read_beside(module):
        assert (module.parent / name).is_file(), f"{module.name} reads {name}, which is not beside it"


def _mounted_scripts(monkeypatch) -> dict[str, dict]:
    """What each module of components/ that makes a Streamlit component hands Streamlit, by component name: a
    fresh run of each module with st.components.v2.component recording its arguments."""
    made = {}

    def component(name, **parts):
        made[name] = parts
        return lambda **_: None

    monkeypatch.setattr(st.components.v2, "component", component)
    for path in (path for path in MODULES if _mounts_a_component(path)):
        name = f"_assets_probe_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)  # for its dataclasses, and gone after the test
        spec.loader.exec_module(module)
    return made


def test_every_component_script_is_javascript_with_its_values_filled_in(monkeypatch):
    made = _mounted_scripts(monkeypatch)
    assert {"attention_anatomy.head_switches", "attention_anatomy.viewport", "attention_anatomy.main_to_top",
            "attention_anatomy.class_watch", "attention_anatomy.sidebar_to_top",
            "attention_anatomy.lesson_steps"} <= set(made)
    for name, parts in made.items():
        js = parts.get("js") or ""
        assert "export default function" in js, f"{name}: no script"
        # Streamlit takes a one-line string for a file's path (ComponentPathUtils.looks_like_inline_content).
        assert "\n" in js.strip(), f"{name}: a one-line script would be taken for a path"
        assert not PLACEHOLDER.search(js), f"{name}: {PLACEHOLDER.search(js).group()} left unfilled"
        if "css" in parts:
            assert parts["css"].strip() and not PLACEHOLDER.search(parts["css"]), name


def test_the_values_a_script_names_are_written_in(monkeypatch):
    from components.page.viewport import COOKIE, COOKIE_DAYS, SIZE_JS, STEP_PX
    from components.views.parts.head_toggles import ANSWER_WAIT_MS

    made = _mounted_scripts(monkeypatch)
    assert SIZE_JS.startswith("main => {") and f"/ {STEP_PX}) * {STEP_PX}" in SIZE_JS
    measure = made["attention_anatomy.viewport"]["js"]
    assert f"const sizeOf = {SIZE_JS};" in measure
    assert f"`{COOKIE}=${{size.main}}" in measure and f"max-age=${{{COOKIE_DAYS} * 86400}}" in measure
    assert f"const ANSWER_WAIT_MS = {ANSWER_WAIT_MS};" in made["attention_anatomy.head_switches"]["js"]


def test_filled_refuses_a_placeholder_without_a_value_and_a_value_without_a_placeholder():
    assert filled("a { max-height: $row_height; }", row_height="1.6rem") == "a { max-height: 1.6rem; }"
    assert filled("`${size.main}px` $n", n=2) == "`${size.main}px` 2", "JavaScript's own ${…} is left alone"
    with pytest.raises(ValueError, match="row_height"):
        filled("a { max-height: $row_height; }")
    with pytest.raises(ValueError, match="unused"):
        filled("a { top: 0; }", unused=1)


def test_a_stylesheet_for_st_html_holds_no_angle_bracket():
    assert style_tag(".a > .b { top: 0; }") == "<style>.a > .b { top: 0; }</style>"
    with pytest.raises(ValueError, match="DOMPurify"):
        style_tag("/* the <details> element */ .a { top: 0; }")
