"""The page's state is the one list of what a link holds and what a class follows: a new control cannot be forgotten
in either. Every field of PageState is followed or named as an exception, with its reason; every input widget the
page draws has a field's name for its key, or is named in page_state.UNLINKED_CONTROLS with why the link leaves it
out. The widgets are found by reading the page's source (page.py and components/), so a widget added anywhere counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

from components.classroom import classroom
from components.page import page_state
from components.page.page_state import FOLLOWED, NOT_FOLLOWED

ROOT = Path(__file__).resolve().parents[2]
# Streamlit's widgets that take a value from the reader (buttons, which only act, are not among them).
INPUT_WIDGETS = frozenset({"slider", "select_slider", "selectbox", "radio", "segmented_control", "pills", "toggle",
                           "checkbox", "text_input", "text_area", "number_input", "multiselect", "color_picker",
                           "date_input", "time_input", "data_editor", "file_uploader", "feedback", "chat_input"})


def test_every_field_of_the_page_state_is_followed_or_named_as_an_exception():
    fields = set(page_state.PARAMS)
    assert set(NOT_FOLLOWED) <= fields, f"exceptions that are no field: {sorted(set(NOT_FOLLOWED) - fields)}"
    assert all(reason.strip() for reason in NOT_FOLLOWED.values())
    assert not set(FOLLOWED) & set(NOT_FOLLOWED)
    assert classroom.FOLLOWED == FOLLOWED, "the class follows the page state's list"
    forgotten = fields - set(FOLLOWED) - set(NOT_FOLLOWED)
    assert not forgotten, f"fields a class neither follows nor names as an exception: {sorted(forgotten)}"
    # the settings a teacher's students were seen to miss
    assert {"mask", "window", "hide_special", "words", "value_norm", "weight_scale", "pair", "aggregate", "atlas",
            "head_stage", "off"} <= set(FOLLOWED)


def test_every_input_widget_of_the_page_is_a_field_or_named_as_unlinked():
    found = input_widget_keys()
    assert len(found) >= 40, f"the scan found only {len(found)} widgets: it no longer reads the page's source"
    unresolved = [where for key, where in found if key is None]
    assert not unresolved, f"widgets whose key the scan cannot read (give it a named constant): {unresolved}"
    fields, unlinked = set(page_state.PARAMS), page_state.UNLINKED_CONTROLS
    stray = sorted(f"{key} ({where})" for key, where in found if key not in fields and key not in unlinked)
    assert not stray, f"input widgets that are neither a PageState field nor in UNLINKED_CONTROLS: {stray}"
    assert not fields & set(unlinked), "a field cannot be unlinked as well"
    assert all(reason.strip() for reason in unlinked.values())
    unused = set(unlinked) - {key for key, _ in found}
    assert not unused, f"UNLINKED_CONTROLS names widgets the page no longer draws: {sorted(unused)}"


def test_the_scan_finds_a_widget_whose_key_is_no_field():
    source = "import streamlit as st\nNEW = 'colour_blind'\ndef draw():\n    st.toggle('Colours', key=NEW)\n"
    assert widget_keys(ast.parse(source), "planted.py") == [("colour_blind", "planted.py:4")]


def input_widget_keys() -> list[tuple[str | None, str]]:
    """(key, "path:line") of every input widget drawn in page.py and components/: bound_widget's key, or a widget
    call's key=; None for a key the scan cannot read."""
    found = []
    for path in [ROOT / "page.py", *sorted((ROOT / "components").rglob("*.py"))]:
        found += widget_keys(ast.parse(path.read_text()), str(path.relative_to(ROOT)))
    return found


def widget_keys(tree: ast.Module, name: str) -> list[tuple[str | None, str]]:
    constants = _module_constants(tree)
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    found = []

    class Widgets(ast.NodeVisitor):
        """Each call of a widget, with the innermost function around it (the module, outside any)."""

        def __init__(self) -> None:
            self.around = [tree]

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            self.around.append(node)
            self.generic_visit(node)
            self.around.pop()

        def visit_Call(self, node: ast.Call) -> None:
            self.generic_visit(node)
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called == "bound_widget" and len(node.args) >= 2:
                key = node.args[1]
            elif called in INPUT_WIDGETS:
                key = next((keyword.value for keyword in node.keywords if keyword.arg == "key"), None)
            else:
                return
            values = [None] if key is None else _key_values(key, constants, functions, self.around[-1], tree)
            found.extend((value, f"{name}:{node.lineno}") for value in values)

    Widgets().visit(tree)
    return found


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "text" and A, B = "a", "b"."""
    constants = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for name, value in zip(names, values, strict=False):
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    constants[name.id] = value.value
    return constants


def _key_values(key: ast.expr, constants: dict, functions: dict, function, tree) -> list[str | None]:
    """What a key expression can be: a string, a module constant, a parameter given a string where the module calls
    its function, a local set from a function that returns an f-string (its stem, up to the first value), else
    None."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return [key.value]
    if isinstance(key, ast.JoinedStr):
        stem = ""
        for part in key.values:
            if isinstance(part, ast.Constant):
                stem += part.value
            elif isinstance(part.value, ast.Name) and part.value.id in constants and not stem:
                stem += constants[part.value.id]
            else:
                return [stem] if stem else [None]
        return [stem]
    if not isinstance(key, ast.Name):
        return [None]
    if key.id in constants:
        return [constants[key.id]]
    if function is tree:
        return [None]
    parameters = [argument.arg for argument in function.args.args]
    if key.id in parameters:
        return _given(function.name, parameters.index(key.id), key.id, tree, constants, functions) or [None]
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == key.id for t in node.targets)):
            continue
        if isinstance(node.value, ast.JoinedStr):  # key = f"quiz_vote_{number}"
            return _key_values(node.value, constants, functions, tree, tree)
        if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) in functions:  # word_key(step)
            returned = [r.value for r in ast.walk(functions[node.value.func.id]) if isinstance(r, ast.Return)]
            return [value for r in returned for value in _key_values(r, constants, functions, tree, tree)]
    return [None]


def _given(function: str, index: int, parameter: str, tree, constants: dict, functions: dict) -> list[str | None]:
    """The values the module's calls of function give its parameter at index (or by name)."""
    values = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function:
            given = node.args[index] if index < len(node.args) else next(
                (keyword.value for keyword in node.keywords if keyword.arg == parameter), None)
            values += _key_values(given, constants, functions, tree, tree) if given is not None else [None]
    return values
