"""A checkpoint's weights read from its files: which file holds them, and its tensors under today's names.

transformers' from_pretrained does this for the families it loads; BERT's own encoder (attention.models.families.
bert_modules) and every family's language-model head (attention.models.lm_heads) read them here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from attention.models.hub import WEIGHTS

if TYPE_CHECKING:
    import torch

OLD_NAMES = {".gamma": ".weight", ".beta": ".bias"}  # LayerNorm as checkpoints converted from TensorFlow name it


def checkpoint_folder(source: str | Path, cache_only: bool) -> Path:
    """The folder that holds a checkpoint's files: a local folder itself, or a Hub model's snapshot in the cache,
    its config.json fetched unless cache_only (what else it holds depends on what was fetched); OSError when
    there is none."""
    if isinstance(source, Path):
        return source
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(source, "config.json", local_files_only=cache_only)).parent


def checkpoint_file(source: str | Path, cache_only: bool) -> Path:
    """The weights file of a checkpoint: model.safetensors (else pytorch_model.bin) of a folder, or a Hub model's
    model.safetensors, fetched unless cache_only; OSError when there is none."""
    if isinstance(source, Path):
        for file in (WEIGHTS, "pytorch_model.bin"):
            if (source / file).is_file():
                return source / file
        raise FileNotFoundError(f"no {WEIGHTS} or pytorch_model.bin in {str(source)!r}")
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(source, WEIGHTS, local_files_only=cache_only))


def read_weights(path: Path, wanted: Callable[[str], bool] = lambda key: True) -> dict[str, torch.Tensor]:
    """{key: tensor} of a safetensors or PyTorch weights file, the keys for which wanted is true only; the
    LayerNorm's gamma and beta of checkpoints converted from TensorFlow named weight and bias. A GGUF file's tensors
    have llama.cpp's names and are read whole by transformers (attention/models/gguf.py): none is read here."""
    import torch

    if path.suffix == ".gguf":
        return {}
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as weights:
            names = weights.keys()  # noqa: SIM118 (safe_open is no mapping: it has keys() and no __iter__)
            found = {key: weights.get_tensor(key) for key in names if wanted(key)}
    else:
        every = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        found = {key: tensor.clone() for key, tensor in every.items() if wanted(key)}
    return {_new_name(key): tensor for key, tensor in found.items()}


def _new_name(key: str) -> str:
    for old, new in OLD_NAMES.items():
        if key.endswith(old):
            return key.removesuffix(old) + new
    return key
