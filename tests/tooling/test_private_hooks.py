"""Each hook of components/private_hooks.py, against the installed Streamlit, Vega-Lite and pyarrow: what the
project relies on still holds. A failure here names the hook an upgrade moved.

This module may reach into Streamlit's private parts to compare (tests/tooling/test_architecture.py lets it, and the
hooks' module, alone): the hooks must match what Streamlit itself does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import vl_convert
from streamlit import dataframe_util
from streamlit.components.v2 import manifest_scanner
from streamlit.components.v2.bidi_component import main as bidi_component
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest

from components import private_hooks
from components.charts.heatmap import cells_by_head
from components.charts.induction import STEP
from components.charts.scrub import picker
from components.private_hooks import (
    Alert,
    BackMsg,
    ClientState,
    DoubleArray,
    Element,
    ForwardMsg,
    MediaFileManager,
    WidgetState,
    app_test_tree,
    arrow_dataset,
    attention_implementation,
    bound_input_name,
    bound_input_signal,
    component_events_id,
    element_key,
    forward_hooks,
    run_app_test_with,
    run_temporary_folder,
)


def frames() -> list[pd.DataFrame | pa.Table]:
    """Datasets of the kinds the charts send: a scrubbed panel's cells (uint16 places, float32 with masked NaN),
    labels and pictures (text), a frame indexed by something else than 0…n-1, and an Arrow table."""
    values = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
    values[0, 1, 0, 3] = np.nan
    return [cells_by_head(values),
            pd.DataFrame({"token": ["[CLS]", "if", "datum", None], "weight": [0.5, np.nan, 1.0, 0.25]}),
            pd.DataFrame({"layer": [3, 4]}, index=[7, 9]),
            pa.table({"key": np.arange(5, dtype=np.uint16), "bound": np.linspace(0, 1, 5, dtype=np.float32)})]


@pytest.mark.parametrize("frame", frames(), ids=["cells", "labels", "indexed", "arrow"])
def test_a_datasets_bytes_are_what_streamlit_itself_would_send(frame):
    sent = arrow_dataset(frame)
    assert sent == dataframe_util.convert_anything_to_arrow_bytes(frame), "byte for byte Streamlit's own"
    table = pa.ipc.open_stream(sent).read_all()
    assert table.equals(frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame), check_metadata=True)
    if isinstance(frame, pd.DataFrame):
        pd.testing.assert_frame_equal(table.to_pandas(), frame)


def _chart_of_bytes():
    import pandas as pd
    import streamlit as st

    from components.private_hooks import arrow_dataset

    frame = pd.DataFrame({"x": [1, 2, 3], "y": [0.5, 0.25, 1.0]})
    st.session_state["sent"] = arrow_dataset(frame)
    st.vega_lite_chart(None, {"data": {"name": "points"}, "mark": "point",
                              "encoding": {"x": {"field": "x", "type": "quantitative"},
                                           "y": {"field": "y", "type": "quantitative"}},
                              "datasets": {"points": st.session_state["sent"]}})


def test_a_chart_given_a_datasets_bytes_sends_them_as_they_are():
    page = AppTest.from_function(_chart_of_bytes).run()
    assert not page.exception
    [chart] = page.get("vega_lite_chart")
    [dataset] = chart.proto.datasets
    assert dataset.name == "points" and dataset.data.data == page.session_state["sent"]
    assert "datasets" not in chart.proto.spec, "the bytes travel beside the spec, not in it"


@pytest.mark.parametrize(("name", "label", "count"), [("layer", "Layer", 6), ("head", "Head", 12), (STEP, "Step", 3)])
def test_vega_lite_names_a_pickers_input_as_the_hook_says(name, label, count):
    import altair as alt

    chart = alt.Chart(pd.DataFrame({name: range(count)})).mark_point().encode(x=f"{name}:O").add_params(
        picker(name, label, count))
    compiled = vl_convert.vegalite_to_vega(chart.to_dict())
    assert [signal["name"] for signal in compiled["signals"] if "bind" in signal] == [bound_input_name(name)]
    assert bound_input_signal(name) == bound_input_name(name), "the expressions read the input's own signal"


def test_a_components_events_are_sent_under_the_id_streamlit_gives_them():
    component = "$$ID-0123abcd-class_watch"
    assert component_events_id(component) == bidi_component._make_trigger_id(component, "events")


def test_the_wire_messages_hold_what_the_harness_sends_and_reads():
    """harness/session_client.py's messages, made as it makes them and read back as Streamlit reads them; a whole
    session over a real server's websocket is tests/deploy/test_load.py's."""
    states = [WidgetState(id="slider", double_array_value=DoubleArray(data=[3.0])),
              WidgetState(id="chart", string_value='{"selection": {}}'),
              WidgetState(id="button", trigger_value=True),
              WidgetState(id=component_events_id("c"), json_trigger_value='[{"event": "e", "value": 1}]')]
    asked = BackMsg(rerun_script=ClientState(query_string="text=a", page_script_hash="h", fragment_id="f"))
    asked.rerun_script.widget_states.widgets.extend(states)
    read = BackMsg.FromString(asked.SerializeToString())
    assert list(read.rerun_script.widget_states.widgets) == states and read.rerun_script.query_string == "text=a"
    ends = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ForwardMsg.FINISHED_WITH_COMPILE_ERROR}
    assert len(ends) == 3, "three ends of a run the harness tells apart"
    kinds = {field.name for field in ForwardMsg.DESCRIPTOR.oneofs_by_name["type"].fields}
    assert {"new_session", "delta", "ref_hash", "page_info_changed", "session_event", "script_finished"} <= kinds
    elements = {field.name for field in Element.DESCRIPTOR.oneofs_by_name["type"].fields}
    assert {"vega_lite_chart", "slider", "button", "bidi_component", "progress", "metric", "exception",
            "alert"} <= elements
    assert Alert.ERROR != Alert.INFO


def test_a_deferred_download_is_filed_with_its_callable_where_the_tests_catch_it():
    """tests/pages.py's open_keeping_downloads wraps add_deferred; tests/page/test_downloads.py clicks what it kept."""
    parameters = list(inspect.signature(MediaFileManager.add_deferred).parameters)
    assert parameters[:5] == ["self", "data_callable", "mimetype", "coordinates", "file_name"]


def made_download(execute) -> tuple[MediaFileManager, str]:
    """A media file manager, as a server has, with one deferred download of a session (this thread's, "dontcare"
    outside a run) made by execute(manager, file_id): the manager and the made file's id."""
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    deferred = manager.add_deferred(lambda: b"\x89PNG a chart", "image/png", "coordinates of the button",
                                    "chart.png")
    return manager, private_hooks.made_file_id(execute(manager, deferred))


def test_a_made_download_outlives_other_runs_until_its_sessions_next_whole_run():
    private_hooks.keep_made_downloads()
    streamlits_own = MediaFileManager.execute_deferred.streamlits_own
    manager, made = made_download(streamlits_own)
    for _ in range(2):  # two runs of other readers end
        manager.remove_orphaned_files()
    assert manager.read_file(made) is None, "Streamlit's own collects the file before it is fetched: the hook is needed"
    manager, made = made_download(MediaFileManager.execute_deferred)
    for _ in range(2):
        manager.remove_orphaned_files()
    assert manager.read_file(made).content == b"\x89PNG a chart"
    manager.clear_session_refs("dontcare")  # the session's next whole run starts
    for _ in range(2):
        manager.remove_orphaned_files()
    assert manager.read_file(made) is None, "collected once its session has moved on"


def _empty_page():
    import streamlit as st

    st.write("a page")


def test_apptest_scans_for_components_through_the_function_the_tests_keep():
    private_hooks.cache_component_manifests()  # as tests/conftest.py does, once
    scan = manifest_scanner.scan_component_manifests
    before = scan.cache_info()
    for _ in range(2):
        assert not AppTest.from_function(_empty_page).run().exception
    after = scan.cache_info()
    assert after.hits + after.misses >= before.hits + before.misses + 2, "AppTest asks it for each page"
    assert after.misses <= 1, "the first answer is kept"


def _chart_that_says_its_selection():
    import pandas as pd
    import streamlit as st

    picker = {"name": "head", "select": {"type": "point", "fields": ["head"]}, "value": [{"head": 0}],
              "bind": {"input": "range", "min": 0, "max": 3, "step": 1}}
    chosen = st.vega_lite_chart(pd.DataFrame({"head": [0, 1, 2, 3]}), {
        "mark": "point", "params": [picker], "encoding": {"x": {"field": "head", "type": "ordinal"}}},
        key="chart", on_select="rerun")
    with st.expander("inside"):
        st.markdown(f"picked: {chosen.selection['head']}")


def test_a_test_sends_a_charts_selection_as_the_frontend_would_and_reads_the_whole_tree():
    import json

    page = AppTest.from_function(_chart_that_says_its_selection).run()
    [chart] = page.get("vega_lite_chart")
    chosen = WidgetState(id=chart.proto.id, string_value=json.dumps({"selection": {"head": [{"head": 2}]}}))
    page = run_app_test_with(page, lambda states: states.widgets.append(chosen))
    assert not page.exception
    assert [m.value for m in page.markdown] == ["picked: [{'head': 2}]"], "the script was given the selection"

    def markdown_under(node) -> list[str]:
        own = [node.value] if getattr(node, "type", "") == "markdown" else []
        return own + [text for child in getattr(node, "children", {}).values() for text in markdown_under(child)]

    assert markdown_under(app_test_tree(page)) == ["picked: [{'head': 2}]"], "the tree holds the expander's element"


def test_a_torch_modules_hooks_are_listed_until_removed():
    import torch

    module = torch.nn.Linear(2, 2)
    assert forward_hooks(module) == []
    after = module.register_forward_hook(lambda *_: None)
    before = module.register_forward_pre_hook(lambda *_: None)
    assert len(forward_hooks(module)) == 2
    after.remove()
    before.remove()
    assert forward_hooks(module) == []


@pytest.mark.parametrize("asked", ["eager", "sdpa"])
def test_a_transformers_config_holds_the_attention_it_was_built_with(asked):
    from transformers import BertConfig

    assert attention_implementation(BertConfig(attn_implementation=asked)) == asked


def test_a_folder_from_the_config_is_in_pytests_own_temporary_folder(request, tmp_path_factory):
    folder = run_temporary_folder(request.config, "server")
    assert folder.is_dir() and folder.parent == tmp_path_factory.getbasetemp()


def test_an_elements_key_is_read_off_the_id_streamlit_gives_it():
    from streamlit.runtime.state.common import user_key_from_element_id

    page = AppTest.from_function(_chart_that_says_its_selection).run()
    [chart] = page.get("vega_lite_chart")
    assert element_key(chart.proto.id) == "chart" == user_key_from_element_id(chart.proto.id)
    assert element_key("") is None and element_key(chart.proto.id.rsplit("-", 1)[0] + "-None") is None


def test_streamlit_holds_a_selection_changed_in_an_input_as_long_as_chart_keys_says():
    """components/page/chart_keys.js tells Streamlit's chart (its minified useVegaLiteSelections) that a key pressed
    on a chart's own input was the reader's, as a click is, so that the selection is sent at once; keys within
    BURST_MS of each other are left to Streamlit's pause. The pause and the events it counts as the reader's are read
    from the installed bundle (tests/browser/test_heads_scrub_e2e.py sees the selection sent at once)."""
    import re
    from pathlib import Path

    import streamlit

    from components.page.chart_keys import BURST_MS

    bundles = list((Path(streamlit.__file__).parent / "static" / "static" / "js").glob("ArrowVegaLiteChart.*.js"))
    assert len(bundles) == 1, bundles
    pause = re.search(r"=(\d+),\w+=\[`click`,`dblclick`,`keydown`,`keyup`\]", bundles[0].read_text(encoding="utf-8"))
    assert pause, "Streamlit's chart no longer lists click among the reader's own events beside its pause"
    assert int(pause.group(1)) == BURST_MS


def a_session_with_queued_deltas() -> AppSession:
    """A session whose fragment "step" holds the fragment "toggle", beside the fragment "other", with a delta of
    each queued for the browser, as a cut run leaves them: the step's at place 12, its toggle's at 15."""
    async def made() -> AppSession:  # a session is made on the server's event loop
        return AppSession(ScriptData("page.py", is_hello=False), MemoryUploadedFileManager("/upload"),
                          ScriptCache(), None, {})

    # In a thread of its own: a worker that has run a browser test holds Playwright's event loop in this one, where
    # asyncio.run refuses to start another.
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        session = thread.submit(asyncio.run, made()).result()
    session._fragment_storage.register("step", lambda: None)
    session._fragment_storage.register("toggle", lambda: None, parent_fragment_id="step")
    session._fragment_storage.register("other", lambda: None)
    for fragment, path in (("step", [0, 5, 12]), ("toggle", [0, 5, 15]), ("other", [0, 9, 0])):
        message = ForwardMsg()
        message.metadata.delta_path[:] = path
        message.delta.fragment_id = fragment
        message.delta.new_element.markdown.body = fragment
        session._browser_queue.enqueue(message)
    return session


def queued_fragments(session: AppSession) -> list[str]:
    return [message.delta.fragment_id for message in session._browser_queue.flush()]


def test_a_fragments_run_starting_drops_what_its_nested_fragments_had_queued():
    private_hooks.clear_nested_fragments_too()
    streamlits_own = AppSession._clear_queue.streamlits_own
    session = a_session_with_queued_deltas()
    streamlits_own(session, ["step"])
    assert queued_fragments(session) == ["toggle", "other"], "Streamlit keeps the nested toggle's: the hook is needed"
    session = a_session_with_queued_deltas()
    session._clear_queue(["step"])
    assert queued_fragments(session) == ["other"]
    session = a_session_with_queued_deltas()
    session._clear_queue(None)  # a whole run's start: Streamlit's own clearing, nothing kept
    assert queued_fragments(session) == []
