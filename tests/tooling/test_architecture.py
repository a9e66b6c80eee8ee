"""The shape of the house, checked: the core computes, components/caches/ caches, the charts build, the views draw.

Read off the source with ast, so a broken rule is named with its file and line:
- every cache of the page is in components/caches/, and only that package calls a function of the core:
  every other module of components/ (and the page's script) takes types, constants and the pure helpers named in
  PURE_HELPERS from it only;
- the charts (components/charts/) are built from numbers: they import nothing of the caches;
- one module writes the URL (components/page/url.py);
- no module of components/ is longer than MAX_MODULE_LINES;
- imports between the project's modules go one way: no circle anywhere, imports inside functions included;
- the core never imports Streamlit;
- only components/private_hooks.py (and its test) imports a private part of Streamlit or Altair, or reads a private
  attribute of another library's object.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("attention", "components", "bench", "harness", "tests")
CACHES = ROOT / "components" / "caches"
VIEWS = sorted((ROOT / "components" / "views").glob("*.py"))
COMPONENTS = sorted((ROOT / "components").rglob("*.py"))
SCRIPTS = [ROOT / "streamlit_app.py", ROOT / "page.py"]  # the App the server runs, and its page
OUTSIDE_THE_CACHES = [*SCRIPTS, *(p for p in COMPONENTS if CACHES not in p.parents)]
CHARTS = sorted((ROOT / "components" / "charts").rglob("*.py"))
CACHE_DECORATORS = {"cache_data", "cache_resource", "cache", "lru_cache"}
URL_WRITER = ROOT / "components" / "page" / "url.py"
MAX_MODULE_LINES = 400


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    paths = SCRIPTS + [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    return {module_name(path): path for path in paths if path.exists()}


def imported_modules(path: Path, modules: dict[str, Path], name: str | None = None) -> set[str]:
    """The project modules a file imports anywhere in it: `from a import b` counts a.b when that is a module.
    name: the file's module name, when it does not follow from its path."""
    found = set()
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
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


# The packages of each layer of the house, lowest first: a module imports only from its own package or one
# listed before it, so that the data path reads one way, from the core's stages up to the labs.
PACKAGE_ORDER = {
    "attention": ("stages", "models", "text", "dissect", "analyses", "experiments", "labs"),
    "components": ("server", "charts", "caches", "page", "classroom", "views", "api"),
}
MAX_CORE_TOP_LEVEL = 8  # modules and packages at the core's top level


def package_of(module: str, layer: str) -> str | None:
    """The package of the layer that holds the module: attention.stages.masks -> stages; None outside them."""
    parts = module.split(".")
    return parts[1] if parts[0] == layer and len(parts) > 1 and parts[1] in PACKAGE_ORDER[layer] else None


def upward_imports(modules: dict[str, Path], layer: str) -> list[str]:
    order = PACKAGE_ORDER[layer]
    found = []
    for name, path in modules.items():
        own = package_of(name, layer)
        if own is None:
            continue
        for other in sorted(imported_modules(path, modules, name)):
            theirs = package_of(other, layer)
            if theirs is not None and theirs != own and order.index(theirs) > order.index(own):
                found.append(f"{name} ({own}) imports {other} ({theirs})")
    return found


@pytest.mark.parametrize("layer", sorted(PACKAGE_ORDER))
def test_packages_import_only_downward(layer):
    modules = project_modules()
    packages = {name.split(".")[1] for name in modules if name.startswith(layer + ".")
                and (ROOT / layer / name.split(".")[1]).is_dir()}
    assert packages == set(PACKAGE_ORDER[layer]), f"{layer}'s packages are not all in PACKAGE_ORDER: {packages}"
    assert not upward_imports(modules, layer), "imports up the order:\n" + "\n".join(upward_imports(modules, layer))


def test_an_upward_import_between_packages_is_found(tmp_path):
    """The check above, seen failing: a stage that imports the labs."""
    planted = tmp_path / "planted_upward.py"
    planted.write_text("from attention.labs import counting\n")
    modules = {**project_modules(), "attention.stages.planted_upward": planted}
    assert upward_imports(modules, "attention") == [
        "attention.stages.planted_upward (stages) imports attention.labs.counting (labs)"]


def test_the_core_keeps_few_modules_at_its_top_level():
    top = [p.name for p in (ROOT / "attention").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()]
    assert len(top) <= MAX_CORE_TOP_LEVEL, f"attention/ has {len(top)} modules at its top: {sorted(top)}"


def test_bench_and_tests_share_the_harness_without_importing_each_other():
    """A test of the bench's own code (its results file, its table) is the one test that imports it."""
    modules = project_modules()
    for name, path in modules.items():
        imported = imported_modules(path, modules)
        if name.startswith("bench"):
            assert not {m for m in imported if m.startswith("tests")}, f"{name} imports a test module"
        if name.startswith("tests") and not path.name.startswith("test_bench_"):
            assert not {m for m in imported if m.startswith("bench")}, f"{name} imports the benchmarks"
        if name.startswith("harness"):
            assert not {m for m in imported if m.startswith(("tests", "bench"))}, f"{name} imports tests or bench"


def test_the_core_never_imports_streamlit():
    for path in sorted((ROOT / "attention").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "streamlit" for name in names), f"{path.name}:{node.lineno}"


# Streamlit's documented modules: the package itself, AppTest, custom components, column configuration, and the type
# of every container (st.container(), st.sidebar), which Streamlit's own signatures name.
PUBLIC_STREAMLIT = {"streamlit", "streamlit.testing.v1", "streamlit.components.v1", "streamlit.column_config",
                    "streamlit.delta_generator"}
PUBLIC_MODULES = {"streamlit": PUBLIC_STREAMLIT, "altair": {"altair"}}  # Altair's API is its top-level namespace
ALTAIR_INSIDES = {"utils", "vegalite", "jupyter"}  # what alt.<name> reaches behind that namespace (alt.expr is in it)
PRIVATE_HOOKS = [ROOT / "components" / "private_hooks.py", ROOT / "tests" / "tooling" / "test_private_hooks.py"]


def _library_modules(node: ast.AST) -> list[str]:
    """The modules of Streamlit or Altair that a statement reaches: `from streamlit import config` reaches
    streamlit.config, `from streamlit import session_state` the package itself, `alt.utils.x` altair.utils."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] in PUBLIC_MODULES]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "alt":
        return [f"altair.{node.attr}"] if node.attr in ALTAIR_INSIDES or node.attr.startswith("_") else []
    top = (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) and not node.level else ""
    if top not in PUBLIC_MODULES:
        return []
    if node.module != top:
        return [node.module]
    return [f"{top}.{alias.name}" if importlib.util.find_spec(f"{top}.{alias.name}") else top for alias in node.names]


def test_only_the_hooks_module_reaches_a_private_part_of_streamlit_or_altair():
    """An upgrade that moves a private part fails in one named place (components/private_hooks.py, checked by
    tests/tooling/test_private_hooks.py), not in whichever module reached for it."""
    found, reached = [], 0
    for path in project_modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            for name in _library_modules(node):
                reached += 1
                if name not in PUBLIC_MODULES[name.split(".")[0]] and path not in PRIVATE_HOOKS:
                    found.append(f"{relative(path)}:{node.lineno} reaches {name}")
    assert reached, "the check found no import of Streamlit or Altair: it reads the wrong files"
    assert not found, "private parts outside components/private_hooks.py:\n" + "\n".join(found)


def _own_private_names(modules: dict[str, Path]) -> set[str]:
    """The names with one leading underscore that the project's classes define: their methods and class attributes,
    and every self._name assigned."""
    names = set()
    for path in modules.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names |= {item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
                names |= {target.id for item in node.body if isinstance(item, (ast.Assign, ast.AnnAssign))
                          for target in (item.targets if isinstance(item, ast.Assign) else [item.target])
                          if isinstance(target, ast.Name)}
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_only_the_hooks_module_reads_a_private_attribute_of_another_librarys_object():
    """`thing._name` where thing is not self, cls or a module or class of the project, and no class of the project
    defines _name: another library's insides (AppTest's element tree, a torch module's hooks), which an upgrade may
    move. Those the project needs go through components/private_hooks.py. A library's private name that a class of
    the project happens to define too passes unseen."""
    modules = project_modules()
    own = _own_private_names(modules)
    found = []
    for path in modules.values():
        if path in PRIVATE_HOOKS:
            continue
        tree = ast.parse(path.read_text())
        ours = {"self", "cls"} | {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
                                  if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names
                                  if (getattr(node, "module", None) or alias.name).split(".")[0] in
                                  {name.split(".")[0] for name in modules} or getattr(node, "level", 0)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and node.attr not in own and not (isinstance(node.value, ast.Name) and node.value.id in ours)):
                found.append(f"{relative(path)}:{node.lineno} reads {ast.unparse(node)}")
    assert not found, "private attributes read outside components/private_hooks.py:\n" + "\n".join(found)


@pytest.mark.parametrize("path", OUTSIDE_THE_CACHES, ids=relative)
def test_every_cache_of_the_page_lives_in_the_caches_package(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                assert _decorator_name(decorator) not in CACHE_DECORATORS, (
                    f"{relative(path)}:{decorator.lineno}: {node.name} is cached here; caches live in "
                    "components/caches/")


# The core's pure helpers, which a module outside the caches may call itself: functions of numpy arrays and the
# core's frozen records that take no model and run no torch (test_the_pure_helpers_take_no_model_and_run_no_torch
# holds them to it). They compute in microseconds on numbers a view holds already, so a cache would keep nothing
# worth keeping. Everything else of the core (a model, a trace to build, torch's softmax, a training) goes through
# components/caches/, where the heavy-work slots and the memory budget see it. A module named with ALL holds nothing
# else; of the others, which also hold heavy functions, only the functions named.
ALL = None
PURE_HELPERS: dict[str, frozenset[str] | None] = {
    "attention.analyses.lesson": ALL,  # the lesson's facts about a trace's arrays
    "attention.analyses.compare": ALL,  # two texts' tokens aligned, their weights' differences
    "attention.dissect.heads": frozenset({"aggregate_heads", "head_summary"}),  # a layer's weights summed up
    "attention.dissect.value_norms": frozenset({"moved"}),  # α_ij·‖f(x_j)‖ from the weights and the norms
    "attention.experiments.head_switch": frozenset({"drop_grid"}),  # the switch view's ranking as a grid
    "attention.experiments.embedding_switch": frozenset({"moved_grid"}),  # the same for the sentence embedding
    "attention.labs.counting": frozenset({"letter_counts", "equal_letters"}),  # a counting trace read
    "attention.labs.induction": frozenset({"history_rows"}),  # a run's scores as the CSV's columns
}
# What a pure helper never names: torch itself and its modules, as the core imports them.
TORCH_NAMES = {"torch", "nn", "F"}
# Parameter annotations that say a function is given a model (attention/models/).
MODEL_TYPES = ("LoadedModel", "LanguageModel", "Module", "Tensor")


def is_pure_helper(module: str, name: str) -> bool:
    return module in PURE_HELPERS and (PURE_HELPERS[module] is ALL or name in PURE_HELPERS[module])


def core_calls(path: Path) -> list[str]:
    """Where a file outside the caches takes from the core anything but a type, a constant or a pure helper: a
    computation that no cache keeps or guards, or a door to the core beside the caches'."""
    found = []
    where = relative(path) if path.is_relative_to(ROOT) else path.name
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno} imports the core's module {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] == "attention"]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "attention":
            source = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(source, alias.name)
                if inspect.ismodule(value) or (inspect.isfunction(value) and not is_pure_helper(node.module,
                                                                                                   alias.name)):
                    found.append(f"{where}:{node.lineno} takes {alias.name} from {node.module}")
    return found


@pytest.mark.parametrize("path", OUTSIDE_THE_CACHES, ids=relative)
def test_only_the_caches_call_the_core_but_for_its_pure_helpers(path):
    assert not core_calls(path), "ask components/caches/ instead:\n" + "\n".join(core_calls(path))


def test_a_call_of_the_core_beside_the_caches_is_found(tmp_path):
    """The check above, seen failing: a view that builds a trace itself, imports a core module whole, or takes a
    heavy function from a module that also holds pure helpers; a pure helper and a type pass."""
    planted = tmp_path / "planted_view.py"
    planted.write_text("from attention.dissect.trace import build_trace\n"
                       "from attention.analyses import lesson\n"
                       "import attention.labs.counting\n"
                       "from attention.dissect.heads import aggregate_heads, head_stage\n"
                       "from attention.analyses.lesson import diagonal_wins\n"
                       "from attention.stages.settings import TraceSettings\n")
    assert core_calls(planted) == [
        "planted_view.py:1 takes build_trace from attention.dissect.trace",
        "planted_view.py:2 takes lesson from attention.analyses",
        "planted_view.py:3 imports the core's module attention.labs.counting",
        "planted_view.py:4 takes head_stage from attention.dissect.heads",
    ]


def _pure_helper_problems(module: str, names: frozenset[str] | None) -> list[str]:
    """What keeps the module's listed helpers (every function of it, with ALL) from being pure: a parameter given
    a model or a tensor, torch named in its body or in a function of the module it calls; with ALL, torch imported
    by the module itself."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    problems = []
    if names is ALL:
        names = frozenset(name for name in functions if not name.startswith("_"))
        problems += [f"{module} imports torch" for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                     and any((getattr(node, "module", None) or alias.name).split(".")[0] == "torch"
                             for alias in node.names)]
    missing = sorted(names - set(functions))
    problems += [f"{module} has no function {name}" for name in missing]
    seen, queue = set(), sorted(names & set(functions))
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        function = functions[name]
        for argument in [*function.args.args, *function.args.kwonlyargs]:
            annotation = ast.unparse(argument.annotation) if argument.annotation else ""
            if any(kind in annotation for kind in MODEL_TYPES):
                problems.append(f"{module}.{name} takes {argument.arg}: {annotation}")
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in TORCH_NAMES:
                problems.append(f"{module}.{name}:{node.lineno} names {node.id}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                queue.append(node.func.id)
    return problems


@pytest.mark.parametrize("module", sorted(PURE_HELPERS))
def test_the_pure_helpers_take_no_model_and_run_no_torch(module):
    assert not _pure_helper_problems(module, PURE_HELPERS[module]), "\n".join(
        _pure_helper_problems(module, PURE_HELPERS[module]))


def test_a_heavy_function_listed_as_a_pure_helper_is_found():
    """The check above, seen failing: softmax over temperatures runs torch, and the whole of head_switch runs a
    model; head_summary's own helper, row_entropy, is read too."""
    assert _pure_helper_problems("attention.labs.scaling_lab", frozenset({"temperature_row"}))
    assert any("takes language_model" in problem for problem in
               _pure_helper_problems("attention.experiments.head_switch", ALL))
    assert not _pure_helper_problems("attention.dissect.heads", frozenset({"head_summary"}))


@pytest.mark.parametrize("path", CHARTS, ids=relative)
def test_the_charts_are_built_from_numbers_and_never_ask_a_cache(path):
    modules = project_modules()
    for imported in imported_modules(path, modules):
        assert not imported.startswith("components.caches"), (
            f"{relative(path)} imports {imported}: a chart builder takes numbers; the view asks the caches for them")


def test_one_module_writes_the_url():
    writers = []
    for path in [*SCRIPTS, *COMPONENTS]:
        for node in ast.walk(ast.parse(path.read_text())):
            if _writes_query_params(node):
                writers.append(f"{relative(path)}:{node.lineno}")
    assert writers and all(writer.startswith(relative(URL_WRITER)) for writer in writers), (
        f"the URL is written outside {relative(URL_WRITER)}: {writers}")


def _writes_query_params(node: ast.AST) -> bool:
    """st.query_params changed: a method called on it other than a read, an item set or deleted, or it assigned."""
    def is_query_params(expression: ast.AST) -> bool:
        return isinstance(expression, ast.Attribute) and expression.attr == "query_params"

    reads = {"get", "get_all", "to_dict", "keys", "values", "items"}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_query_params(node.func.value):
        return node.func.attr not in reads
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return any(is_query_params(target) or (isinstance(target, ast.Subscript) and is_query_params(target.value))
                   for target in targets)
    return False


@pytest.mark.parametrize("path", COMPONENTS, ids=relative)
def test_every_module_of_the_components_fits_in_one_screen_of_thought(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{relative(path)} has {lines} lines: split it by job"


# the caches' functions that build or load something large
HEAVY = {"trace", "encoding", "model", "language_model", "lm_head"}


def test_heavy_caches_are_entered_only_holding_a_slot():
    """A cached function of the caches that builds on a trace, an encoding or a model is private, and each
    call to it stands inside `with heavy_work():`. Else a thread could hold the cache's lock on a key while it
    waits for a slot that the threads waiting on that lock hold (components/caches/work.py)."""
    problems, found = [], 0
    for path in sorted(CACHES.glob("*.py")):
        functions = [node for node in ast.parse(path.read_text()).body if isinstance(node, ast.FunctionDef)]
        heavy_cached = set()
        for function in functions:
            cached = any(_decorator_name(d) in {"cache_data", "cache_resource"} for d in function.decorator_list)
            calls = {n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            if cached and calls & HEAVY and function.name not in HEAVY:
                heavy_cached.add(function.name)
        found += len(heavy_cached)
        problems += [f"{relative(path)}: {name} is cached, builds on a trace or a model, and is public"
                     for name in sorted(heavy_cached) if not name.startswith("_")]
        for function in functions:
            guarded = {id(call) for with_node in ast.walk(function) if isinstance(with_node, ast.With)
                       and any(ast.unparse(item.context_expr) == "heavy_work()" for item in with_node.items)
                       for call in ast.walk(with_node) if isinstance(call, ast.Call)}
            for call in ast.walk(function):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in heavy_cached
                        and id(call) not in guarded):
                    problems.append(f"{relative(path)}:{call.lineno}: {call.func.id} called outside "
                                    "`with heavy_work():`")
    assert found, "the check found no cached function that builds on a trace: it reads the wrong files"
    assert not problems, "\n".join(problems)


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def test_every_view_of_the_one_list_is_a_module_and_every_view_module_is_on_the_list():
    """components/page/view_list.py's records are the one list: the link parser, the selector and the views' modules
    follow it. The modules are imported only when shown: the views' package imports none of them."""
    from components.page import page_state, view_list

    names = [view.name for view in view_list.VIEWS]
    modules = sorted(path.stem for path in VIEWS if path.stem != "__init__")
    assert sorted(names) == modules
    assert list(view_list.LABELS) == names
    assert all(callable(importlib.import_module(f"components.views.{name}").render) for name in names)
    for name in names:
        state, notices = page_state.from_query({"view": [name]}, ["all-MiniLM-L6-v2"])
        assert state.view == name and not notices
    package = ROOT / "components" / "views" / "__init__.py"
    eager = imported_modules(package, project_modules()) & {f"components.views.{name}" for name in names}
    assert not eager, f"the views' package imports {sorted(eager)} as the page starts; render imports a view's module"


def served_page() -> str:
    """The page script streamlit_app.py's App serves: the first argument of its `st.App(...)` call."""
    calls = [node for node in ast.walk(ast.parse((ROOT / "streamlit_app.py").read_text()))
             if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.App"]
    assert len(calls) == 1, "streamlit_app.py builds one st.App"
    return calls[0].args[0].value


def test_the_image_copies_what_the_server_runs():
    """deploy/Dockerfile copies the App, the page it serves and every package of ours that either imports."""
    modules = project_modules()
    needed, queue = set(), ["streamlit_app", module_name(ROOT / served_page())]
    while queue:
        name = queue.pop()
        if name not in needed:
            needed.add(name)
            queue.extend(imported_modules(modules[name], modules))
    tops = {name.partition(".")[0] for name in needed}
    sources = {word.rstrip("/") for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
               if line.startswith("COPY ") for word in line.split()[1:-1]}
    missing = sorted(top for top in tops if f"{top}.py" not in sources and top not in sources)
    assert tops >= {"streamlit_app", "page", "attention", "components"} and not missing, f"not copied: {missing}"
