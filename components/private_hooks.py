"""Every hook into a library's private parts that the project still relies on, in one place, each with the reason
no public form serves.

Where a library documents a way, the project takes it: a selection read as `layer.layer` in a chart's expressions,
pyarrow for the Arrow bytes, webbrowser for the server's browser tab, st.get_option for settings. What is left is
here. tests/tooling/test_private_hooks.py exercises each hook against the installed versions, so that an upgrade that
moves one fails there, by name, rather than as a chart that stops following its inputs or a load test that hangs; and
tests/tooling/test_architecture.py checks that no other module imports a private part of Streamlit or Altair, or reads a
private attribute of another library's object.

The hooks:
- arrow_dataset: st.vega_lite_chart takes a named dataset's Arrow IPC bytes as they are. Its documentation speaks of
  DataFrames only; handing it bytes lets a cache keep a chart's converted datasets, which a move would otherwise
  convert again on every rerun (the neuron view's numbers: 100 ms).
- bound_input_name: Vega-Lite names the HTML input bound to a selection after the signal it compiles the selection's
  field into, <name>_<field>. Nothing public names it, and the input's label is wording that may change; browser tests
  and the benchmarks find a chart's inputs by it.
- bound_input_signal: the same signal, in a chart's expressions, for the value a picker holds. Vega-Lite documents
  `layer.layer`, which reads the selection's store: when a new spec comes for a chart under the same key (a follower
  moved by its teacher, a head opened from the all-heads view), Streamlit puts back the selection the reader's own
  presses had left, and the store says the old head while the input says the new one. The input's signal follows
  the value the spec gives it, so the chart draws what its input, heading and link say.
- Streamlit's wire messages (BackMsg, ClientState, DoubleArray, StringArray, Element, ForwardMsg, VegaLiteChart,
  WidgetState, Alert), element_key and component_events_id: harness/session_client.py drives a session over its
  websocket as a browser's frontend does, for load tests, and finds elements by the key their id ends with; Streamlit
  publishes no client. tests/pages.py sends a chart's selection to AppTest as a WidgetState, as the frontend would:
  AppTest has no call for a chart's selection.
- MediaFileManager: a deferred download's data is made only when a browser asks for it; tests/pages.py catches its
  callable where Streamlit files it (MediaFileManager.add_deferred), as AppTest has no download to click.
- cache_component_manifests: a Streamlit server looks through every installed package for components once as it
  starts; AppTest does it for each page it opens (three quarters of a page test's time). The tests keep the first
  answer, as the server does; no setting turns the scan off.
- app_test_tree and run_app_test_with: AppTest's element tree (to read what its accessors leave out: a dialog's
  elements) and a run with widget states the test writes (a chart's selection, which AppTest cannot set).
- forward_hooks: the hooks registered on a torch module. torch lists them nowhere public; the tests check that a
  computation that hooks a model leaves none behind.
- attention_implementation: the attention a transformers config asks for. Its public form is the argument the core
  gives at construction (attn_implementation="eager"); reading it back has none, and a test checks it took.
- clear_nested_fragments_too: when a run of a fragment is cut short by another run of it, Streamlit drops from the
  queue to the browser the cut run's messages not yet sent, but keeps those of the fragments nested in it (a table's
  toggle in the lesson's step). Those name places in the step after the dropped ones, and the browser stops at the
  first ("Bad delta path index 15 (should be between [0, 12])"): the page stays "running" and takes no more moves.
  The queue is told the nested fragments' ids with the running ones', so that it drops theirs as well. The nesting
  is kept in the session's fragment storage, which nothing public reads.
- keep_made_downloads: the file a deferred download button makes when clicked (MediaFileManager.execute_deferred) is
  left to no session by Streamlit, and every run of every session ends by collecting such files: marked at one run's
  end, deleted at the next. On a busy server two runs of other readers can end between the file made and the
  browser's fetch of it, and the download fails (Chromium: "Download.path: canceled"); a class downloading its charts
  is such a server. The file is filed as the asking session's, as a file its run had drawn, until its next whole run.
- run_temporary_folder: a folder in pytest's own temporary folder, from a hook that is given only the config (xdist's
  pytest_configure_node): pytest makes its TempPathFactory for fixtures only.
"""

from __future__ import annotations

import functools

import pandas as pd
import pyarrow as pa
from streamlit.components.v2 import manifest_scanner
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Common_pb2 import DoubleArray, StringArray
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX

__all__ = ["Alert", "BackMsg", "ClientState", "DoubleArray", "Element", "ForwardMsg", "MediaFileManager", "StringArray",
           "VegaLiteChart", "WidgetState", "app_test_tree", "arrow_dataset", "attention_implementation",
           "bound_input_name", "bound_input_signal", "cache_component_manifests", "component_events_id",
           "element_key", "forward_hooks", "keep_made_downloads", "made_file_id", "run_app_test_with",
           "run_temporary_folder"]


def arrow_dataset(frame: pd.DataFrame | pa.Table) -> bytes:
    """A chart's dataset as st.vega_lite_chart sends it to the browser, ready to hand it in a spec's datasets: the
    Arrow IPC stream of the table, a DataFrame converted as Streamlit converts one (pyarrow keeps a default
    RangeIndex as metadata only, any other index as a column)."""
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def bound_input_name(selection: str, field: str | None = None) -> str:
    """The name attribute of the HTML input that Vega-Lite binds to a point selection's field (by default, the
    field named as the selection, as every picker of charts/ is)."""
    return f"{selection}_{field or selection}"


def bound_input_signal(selection: str, field: str | None = None) -> str:
    """The Vega signal of a point selection's field bound to an input, as an expression: the value the input holds
    (bound_input_name's signal)."""
    return bound_input_name(selection, field)


def element_key(element_id: str) -> str | None:
    """The key an element was created with, from the id Streamlit gives it ("$$ID-<hash>-<key>"), or None for an
    element without a key (or an id of another form)."""
    if not element_id.startswith("$$ID-"):
        return None
    key = element_id.split("-", 2)[2]
    return None if key == "None" else key


def component_events_id(component_id: str) -> str:
    """The id of the widget state that carries a custom component's triggered events (setTriggerValue), for the
    component whose element id is component_id."""
    return f"{STREAMLIT_INTERNAL_KEY_PREFIX}_{component_id}__events"


def cache_component_manifests() -> None:
    """Streamlit's scan of the installed packages for components answers once per process from now on."""
    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


def app_test_tree(page):
    """The element tree of an AppTest page (streamlit.testing.v1), every node of it, dialogs' included."""
    return page._tree


def run_app_test_with(page, add_states):
    """Run an AppTest page again with the widget states of its last run, to which add_states(states) adds (a
    WidgetStates message, as the frontend sends it); return the page."""
    states = page._tree.get_widget_states()
    add_states(states)
    return page._run(states)


def forward_hooks(module) -> list:
    """The forward hooks and forward pre-hooks registered on a torch.nn.Module (not its children)."""
    return [*module._forward_hooks.values(), *module._forward_pre_hooks.values()]


def attention_implementation(config) -> str:
    """The attention a transformers PretrainedConfig asks its model for ("eager", "sdpa", …)."""
    return config._attn_implementation


def run_temporary_folder(config, name: str):
    """A new folder named after name in the temporary folder pytest keeps for this run (config: a pytest Config)."""
    return config._tmp_path_factory.mktemp(name)


def nested_fragment_ids(storage, fragment_ids) -> list[str]:
    """fragment_ids and every fragment nested in one of them, at any depth, as storage (a session's FragmentStorage)
    registered them."""
    with storage._lock:
        parents = dict(storage._parent_by_id)
    running = set(fragment_ids)

    def inside_running(fragment_id: str) -> bool:
        seen, ancestor = {fragment_id}, parents.get(fragment_id)
        while ancestor is not None and ancestor not in seen:
            if ancestor in running:
                return True
            seen.add(ancestor)
            ancestor = parents.get(ancestor)
        return False

    return [*fragment_ids, *(fragment_id for fragment_id in parents
                             if fragment_id not in running and inside_running(fragment_id))]


def clear_nested_fragments_too() -> None:
    """From now on, a session's queue to the browser, cleared as a fragment's run starts, drops what the fragments
    nested in it had queued, as it drops the fragment's own (the module's docstring says why)."""
    clear = AppSession._clear_queue
    if hasattr(clear, "streamlits_own"):
        return

    def clear_queue(session, fragment_ids_this_run=None):
        if fragment_ids_this_run:
            fragment_ids_this_run = nested_fragment_ids(session._fragment_storage, fragment_ids_this_run)
        clear(session, fragment_ids_this_run)

    clear_queue.streamlits_own = clear  # for the test that checks Streamlit still needs it
    AppSession._clear_queue = clear_queue


def keep_made_downloads() -> None:
    """From now on, the file a deferred download makes is the asking session's until its next whole run (the module's
    docstring says why), as a file its run had drawn is; then Streamlit collects it as before."""
    execute = MediaFileManager.execute_deferred
    if hasattr(execute, "streamlits_own"):
        return

    def execute_deferred(manager: MediaFileManager, file_id: str) -> str:
        url = execute(manager, file_id)
        made = made_file_id(url)
        with manager._lock:
            if made in manager._file_metadata:
                for session, deferred in manager._deferred_ids_by_session.items():
                    if file_id in deferred:  # one place a button: a second click replaces the first's file
                        manager._files_by_session_and_coord[session][f"made by {file_id}"] = made
        return url

    execute_deferred.streamlits_own = execute  # for the test that checks Streamlit still needs it
    MediaFileManager.execute_deferred = execute_deferred


def made_file_id(url: str) -> str:
    """The media file's id in the URL Streamlit's memory storage gives it: <endpoint>/<file id><extension>."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]
