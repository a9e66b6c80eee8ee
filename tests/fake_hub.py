"""A Hugging Face Hub on loopback for tests: one model repository served from a folder, no network.

It answers what huggingface_hub's downloads ask: HEAD and GET of ``/{repo}/resolve/{revision}/{file}``
with the headers they check (ETag, X-Repo-Commit, Content-Length; Range for resumed downloads), and
404s carrying the Hub's X-Error-Code, so a missing file reads as missing rather than as an outage.
It also answers the API calls of snapshot_download and of transformers loading a model by its Hub id:
the model's info (``/api/models/{repo}``, ``.../revision/{revision}``; with ``?blobs=true`` each file's
size and blob id, as the Hub adds them) and its file tree (``.../tree/{revision}/{folder}``). The files
are served as plain git blobs, not LFS or Xet, so huggingface_hub fetches them over plain HTTP.
For the tests of progress and failure, the weights can be served slowly (bytes_per_second), held
part-way until the test releases them (hold_at), or cut off mid-file, after which the Hub answers
503 until healed (interrupt_after). For the tests of what fits, the API can tell sizes other than the
files' own (claimed_sizes): gpt2's 548 MB of weights, refused before a byte of them is asked for.

    with FakeHub("tiny-org/tiny-bert", save_hub_bert(folder), bytes_per_second=8e6) as hub:
        ...  # HF_ENDPOINT=hub.url, or endpoint=hub.url per call
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

COMMIT = "0123456789abcdef0123456789abcdef01234567"  # the repository's one commit (40 hex digits, as on the Hub)
SLOW_FILES = ("model.safetensors",)  # throttled, held and cut off; small files always go at once
_PIECE = 64 * 1024  # bytes written at a time
_HOLD_LIMIT_S = 120  # a held download never outlives a test that forgot to release it


class FakeHub:
    """Serves the files of `folder` as the Hub repository `repo_id` at `url` while in a `with` block."""

    def __init__(self, repo_id: str, folder: str | Path, *, bytes_per_second: float | None = None,
                 hold_at: int | None = None, claimed_sizes: dict[str, int] | None = None):
        self.repo_id = repo_id
        self.files = {path.name: path.read_bytes() for path in Path(folder).iterdir() if path.is_file()}
        self.claimed_sizes = claimed_sizes or {}  # {file: bytes} the API tells instead of the file's own size
        self.bytes_per_second = bytes_per_second
        self.hold_at = hold_at  # a slow file's download waits at this byte until release()
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order
        self._released = threading.Event()
        self._cut_after: int | None = None
        self._down = False
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.hub = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeHub:
        threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def info(self, blobs: bool = False) -> dict:
        """What GET /api/models/{repo} answers; with blobs (?blobs=true) the files' sizes and blob ids too."""
        siblings = [{"rfilename": file, **({"blobId": _etag(content), "size": self._told_size(file)} if blobs else {})}
                    for file, content in self.files.items()]
        return {"id": self.repo_id, "modelId": self.repo_id, "sha": COMMIT, "private": False, "gated": False,
                "disabled": False, "library_name": "transformers", "tags": ["transformers", "bert"],
                "siblings": siblings}

    def tree(self) -> list[dict]:
        """What GET /api/models/{repo}/tree/{revision} answers: the files, all at the top level."""
        return [{"type": "file", "path": file, "size": self._told_size(file), "oid": _etag(content)}
                for file, content in self.files.items()]

    def size(self, file: str) -> int:
        return len(self.files[file])

    def _told_size(self, file: str) -> int:
        return self.claimed_sizes.get(file, len(self.files[file]))

    def release(self) -> None:
        """Let a held download go on to the end."""
        self._released.set()

    def interrupt_after(self, size: int) -> None:
        """Cut the next download of a slow file after `size` bytes; then answer 503 until heal()."""
        with self._lock:
            self._cut_after = size

    def heal(self) -> None:
        with self._lock:
            self._cut_after = None
            self._down = False

    def fetched(self, file: str) -> int:
        """How many GET requests asked for `file`."""
        return sum(1 for method, path in self.requests if method == "GET" and path.endswith(f"/{file}"))

    def _take_cut(self) -> int | None:
        with self._lock:
            cut, self._cut_after = self._cut_after, None
            if cut is not None:
                self._down = True  # the connection drops, and the Hub stays unreachable after it
            return cut

    def _is_down(self) -> bool:
        with self._lock:
            return self._down


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx expects; every answer has a Content-Length

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def log_message(self, format, *args) -> None:  # quiet: the test's output is for the test
        return None

    def _answer(self, body: bool) -> None:
        hub: FakeHub = self.server.hub
        hub.requests.append((self.command, self.path))
        path, _, query = self.path.partition("?")
        api = f"/api/models/{hub.repo_id}"
        if hub._is_down():
            self._error(503, "ServiceUnavailable", "The Hub is down (fake).")
        elif path.startswith(f"/{hub.repo_id}/resolve/"):
            self._file(hub, path.split("/resolve/", 1)[1].split("/", 1)[-1], body)
        elif path == api or re.fullmatch(r"/revision/[^/]+", path.removeprefix(api)):
            self._json(hub.info(blobs=parse_qs(query).get("blobs") == ["true"]))
        elif tree := re.fullmatch(r"/tree/[^/]+(?P<folder>/.*)?", path.removeprefix(api)):
            if (tree["folder"] or "/") != "/":  # the repository has no folders
                self._error(404, "EntryNotFound", f"{tree['folder']} does not exist.", commit=True)
            else:
                self._json(hub.tree())
        else:
            self._error(404, "RepoNotFound", "Repository not found.")

    def _file(self, hub: FakeHub, file: str, body: bool) -> None:
        content = hub.files.get(file)
        if content is None:
            self._error(404, "EntryNotFound", "Entry not found.", commit=True)
            return
        start = _range_start(self.headers.get("Range"))
        self.send_response(206 if start else 200)
        self.send_header("ETag", f'"{_etag(content)}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(content) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}")
        self.end_headers()
        if not body:
            return
        try:
            if file in SLOW_FILES:
                self._send_slowly(hub, content, start)
            else:
                self.wfile.write(content[start:])
        except (BrokenPipeError, ConnectionResetError):  # the client gave up; nothing to answer
            self.close_connection = True

    def _json(self, value) -> None:
        payload = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_slowly(self, hub: FakeHub, content: bytes, start: int) -> None:
        cut = hub._take_cut()
        stop = len(content) if cut is None else min(len(content), start + cut)
        position = start
        paced_from, clock = start, time.monotonic()
        while position < stop:
            end = min(position + _PIECE, stop)
            if hub.hold_at is not None:
                if position < hub.hold_at < end:
                    end = hub.hold_at
                elif position >= hub.hold_at and not hub._released.is_set():
                    hub._released.wait(_HOLD_LIMIT_S)
                    paced_from, clock = position, time.monotonic()
            self.wfile.write(content[position:end])
            position = end
            if hub.bytes_per_second:  # wait until the bytes sent so far fit the rate
                time.sleep(max(0.0, (position - paced_from) / hub.bytes_per_second - (time.monotonic() - clock)))
        if position < len(content):  # cut off: the connection closes with the body short of its Content-Length
            self.close_connection = True

    def _error(self, status: int, code: str, message: str, commit: bool = False) -> None:
        payload = f'{{"error": "{message}"}}'.encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        if commit:
            self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


def save_hub_bert(folder: str | Path) -> Path:
    """A small random BERT (2 layers, 4 heads, hidden size 128) with the bundled model's tokenizer.

    Bigger than the tests' tiny BERT (hidden size 32) on purpose: its model.safetensors (about 16 MB)
    spans two of the 10 MB chunks huggingface_hub writes at a time, so progress inside a file shows.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from attention.models.loading import bundled_model_path

    config = BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    BertModel(config, add_pooling_layer=False).save_pretrained(folder)
    AutoTokenizer.from_pretrained(bundled_model_path()).save_pretrained(folder)
    return Path(folder)


def _etag(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _range_start(header: str | None) -> int:
    """The first byte asked for by a `Range: bytes=N-` header (0 without one)."""
    match = re.fullmatch(r"bytes=(\d+)-", header or "")
    return int(match[1]) if match else 0
