"""Which models the page offers, read without torch: the sidebar's model selector and the link parser ask for
them before the page imports torch and transformers (components/page/first_paint.py)."""

from __future__ import annotations

import os

from attention.models.model_list import BUNDLED_MODEL, allowed_hub_ids, packaged_models

# Folders of local BERT checkpoints the page may offer, separated like PATH ("a:b").
MODEL_DIRS_ENV = "ATTENTION_ANATOMY_MODEL_DIRS"


def model_names() -> tuple[str, ...]:
    """What the model selector offers: the bundled model, the models whose file a package ships (found, never
    imported: SmolLM2-135M-Instruct once requirements-offline.txt is installed), the allowed Hub ids, configured
    folders."""
    folders = [p for p in os.environ.get(MODEL_DIRS_ENV, "").split(os.pathsep) if p.strip()]
    return (BUNDLED_MODEL, *packaged_models(), *allowed_hub_ids(), *folders)
