"""bench/press_anatomy.py's readings of what the server sent and of the browser's trace and profile."""

from __future__ import annotations

from bench.press_anatomy import main_thread_tasks, message_kind, script_files
from components.private_hooks import ForwardMsg


def frame(fill) -> bytes:
    message = ForwardMsg()
    fill(message)
    return message.SerializeToString()


def test_a_frame_is_named_by_what_it_draws():
    assert message_kind(frame(lambda m: m.delta.new_element.markdown.SetInParent())) == "element: markdown"
    assert message_kind(frame(lambda m: m.delta.add_block.column.SetInParent())) == "block: column"
    assert message_kind(frame(lambda m: setattr(m, "script_finished", 1))) == "script_finished"


def test_the_main_threads_tasks_are_summed_by_kind_a_press_and_other_threads_left_out():
    names = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "CrRendererMain"}},
             {"ph": "M", "name": "thread_name", "pid": 1, "tid": 8, "args": {"name": "Compositor"}}]
    events = [{"ph": "X", "name": "Paint", "pid": 1, "tid": 7, "dur": 3000},
              {"ph": "X", "name": "Paint", "pid": 1, "tid": 7, "dur": 1000},
              {"ph": "X", "name": "Layout", "pid": 1, "tid": 7, "dur": 6000},
              {"ph": "X", "name": "Paint", "pid": 1, "tid": 8, "dur": 50_000}]
    assert main_thread_tasks({"traceEvents": names + events}, presses=2) == [("Layout", 3.0, 0.5), ("Paint", 2.0, 1.0)]


def test_the_profiles_own_time_is_by_script_file_idle_left_out():
    def node(number: int, url: str, function: str) -> dict:
        return {"id": number, "callFrame": {"url": url, "functionName": function}}

    profile = {"nodes": [node(1, "http://x/static/js/react-dom.Dz.js", "a"), node(2, "", "(idle)"),
                         node(3, "", "(program)")],
               "samples": [1, 2, 3, 1], "timeDeltas": [1000, 5000, 2000, 3000]}
    assert script_files(profile, presses=2) == [("react-dom", 2.0), ("(program)", 1.0)]
