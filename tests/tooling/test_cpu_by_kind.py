"""harness/cpu_by_kind.py (bench/suite_cpu.py): the suite's CPU told apart by the kind of process that spent it."""

from __future__ import annotations

import sys

from harness.cpu_by_kind import command_words, kind_of, measure, report

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"


def test_each_process_of_the_suite_is_told_apart_by_its_command_line():
    # Playwright starts the browser with --disable-renderer-backgrounding: a word in it is not a process type
    assert kind_of([CHROMIUM, "--disable-renderer-backgrounding"]) == "Chromium: browser process"
    assert kind_of([CHROMIUM, "--type=renderer"]) == "Chromium: renderers (the pages)"
    assert kind_of([CHROMIUM, "--type=gpu-process"]) == "Chromium: GPU process (compositing)"
    assert kind_of([CHROMIUM, "--type=utility"]) == "Chromium: other helpers"
    assert kind_of(["/site-packages/playwright/driver/node", "cli.js", "run-driver"]) == "Playwright's driver"
    assert kind_of([sys.executable, "-m", "streamlit", "run", "streamlit_app.py"]) == "Streamlit servers"
    assert kind_of([sys.executable, "-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"]) == \
        "pytest and its workers"  # an xdist worker, started by execnet
    assert kind_of(command_words(b"nginx: worker process\0")) == "nginx"
    assert kind_of(command_words(b"/usr/bin/redis-server 127.0.0.1:6379\0")) == "redis"
    assert kind_of([sys.executable, "-c", "print(1)"]) == kind_of([]) == "other"


def test_a_title_rewritten_into_one_string_is_read_word_by_word():
    # how Chromium's helpers show in /proc: one string, no NUL between the words
    renderer = f"{CHROMIUM} --type=renderer --lang=en-US".encode()
    assert command_words(renderer) == [CHROMIUM, "--type=renderer", "--lang=en-US"]
    assert kind_of(command_words(renderer)) == "Chromium: renderers (the pages)"
    assert command_words(b"python\0-m\0streamlit\0run\0my app.py\0") == ["python", "-m", "streamlit", "run",
                                                                          "my app.py"]


def test_a_command_s_cpu_is_counted_under_its_kind():
    busy_loop = "import time\nwhile time.process_time() < 1.5: pass\ntime.sleep(1)"  # then idle, to be sampled
    spent, wall, busy, code = measure([sys.executable, "-c", busy_loop])
    assert code == 0
    # every process of the machine is read (nothing else should run beside the suite): a lower bound only
    assert spent["other"] >= 1.4 and busy >= 1.4, (spent, busy)
    assert f"| other | {spent['other']:,.0f} |" in report(spent, wall, busy, cores=2)
