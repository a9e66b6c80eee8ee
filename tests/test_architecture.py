"""The shape of the house, checked: the core computes, components/compute.py caches, the views only draw.

Read off the source with ast, so a broken rule is named with its file and line:
- every cache of the page is in components/compute.py, and no view calls a function of the core (types and
  constants only);
- imports between the project's modules go one way: no circle anywhere, imports inside functions included;
- the core never imports Streamlit.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("attention", "components", "bench", "harness", "tests")
VIEWS = sorted((ROOT / "components" / "views").glob("*.py"))
UNCACHED = [p for p in sorted((ROOT / "components").rglob("*.py")) if p.name != "compute.py"]
CACHE_DECORATORS = {"cache_data", "cache_resource", "cache", "lru_cache"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    paths = [ROOT / "streamlit_app.py"] + [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    return {module_name(path): path for path in paths if path.exists()}


def imported_modules(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules a file imports anywhere in it: `from a import b` counts a.b when that is a module."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import, from the file's own package upwards
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {name for name in found if name in modules}


def test_no_import_circle_anywhere():
    modules = project_modules()
    graph = {name: imported_modules(path, modules) - {name} for name, path in modules.items()}
    circles = []
    state: dict[str, str] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                circles.append(" -> ".join([*trail[trail.index(other):], other]))
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_bench_and_tests_share_the_harness_without_importing_each_other():
    modules = project_modules()
    for name, path in modules.items():
        imported = imported_modules(path, modules)
        if name.startswith("bench"):
            assert not {m for m in imported if m.startswith("tests")}, f"{name} imports a test module"
        if name.startswith("tests"):
            assert not {m for m in imported if m.startswith("bench")}, f"{name} imports the benchmarks"
        if name.startswith("harness"):
            assert not {m for m in imported if m.startswith(("tests", "bench"))}, f"{name} imports tests or bench"


def test_the_core_never_imports_streamlit():
    for path in sorted((ROOT / "attention").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "streamlit" for name in names), f"{path.name}:{node.lineno}"


@pytest.mark.parametrize("path", UNCACHED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cache_of_the_page_lives_in_compute(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                assert name not in CACHE_DECORATORS, (
                    f"{path.name}:{decorator.lineno}: {node.name} is cached here; caches live in components/compute.py")


@pytest.mark.parametrize("path", VIEWS, ids=lambda p: p.name)
def test_a_view_takes_only_types_and_constants_from_the_core(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            assert not any(alias.name.split(".")[0] == "attention" for alias in node.names), (
                f"{path.name}:{node.lineno} imports the core as a module; call components/compute.py instead")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "attention":
            source = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(source, alias.name)
                assert not (inspect.isfunction(value) or inspect.ismodule(value)), (
                    f"{path.name}:{node.lineno} takes {alias.name} from the core; call components/compute.py instead")


# compute's functions that build or load something large
HEAVY = {"trace", "encoding", "model", "masked_lm", "masked_lm_head"}


def test_heavy_caches_are_entered_only_holding_a_slot():
    """A cached function of compute.py that builds on a trace, an encoding or a model is private, and each
    call to it stands inside `with heavy_work():`. Else a thread could hold the cache's lock on a key while it
    waits for a slot that the threads waiting on that lock hold (compute.heavy_work)."""
    tree = ast.parse((ROOT / "components" / "compute.py").read_text())
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    heavy_cached = set()
    for function in functions:
        cached = any(_decorator_name(d) in {"cache_data", "cache_resource"} for d in function.decorator_list)
        calls = {n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if cached and calls & HEAVY and function.name not in HEAVY:
            heavy_cached.add(function.name)
    assert heavy_cached, "the check found no cached function that builds on a trace: it reads the wrong file"
    problems = [f"compute.py: {name} is cached, builds on a trace or a model, and is public"
                for name in sorted(heavy_cached) if not name.startswith("_")]
    for function in functions:
        guarded = {id(call) for with_node in ast.walk(function) if isinstance(with_node, ast.With)
                   and any(ast.unparse(item.context_expr) == "heavy_work()" for item in with_node.items)
                   for call in ast.walk(with_node) if isinstance(call, ast.Call)}
        for call in ast.walk(function):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in heavy_cached
                    and id(call) not in guarded):
                problems.append(f"compute.py:{call.lineno}: {call.func.id} called outside `with heavy_work():`")
    assert not problems, "\n".join(problems)


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def test_every_view_of_the_one_list_is_a_module_and_every_view_module_is_on_the_list():
    """page_state.VIEWS is the one list: the link parser, the selector's labels and the views' modules follow it."""
    from components import page_state, views

    names = [name for name, _ in page_state.VIEWS]
    modules = sorted(path.stem for path in VIEWS if path.stem != "__init__")
    assert sorted(names) == modules
    assert list(views.VIEW_LABELS) == names
    assert all(callable(importlib.import_module(f"components.views.{name}").render) for name in names)
    for name in names:
        state, notices = page_state.from_query({"view": [name]}, ["all-MiniLM-L6-v2"])
        assert state.view == name and not notices
