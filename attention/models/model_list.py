"""Which models the page may offer, without torch: the page checks a link's model= against them before torch
is imported (attention/models/loading.py loads them).
"""

from __future__ import annotations

import os

BUNDLED_MODEL = "all-MiniLM-L6-v2"
DEFAULT_ALLOWED_HUB_IDS = ("bert-base-uncased", "bert-base-cased", "bert-large-uncased", "gpt2", "distilgpt2")
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
