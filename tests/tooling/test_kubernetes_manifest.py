"""deploy/kubernetes.yaml says what the app reads: its settings are the app's, its allow-list comment names the
models the app allows by default, and a pod sizes its heavy work from its own share of the cores.

What the provided Redis does under a flood and when full (its eviction policy):
tests/classroom/test_class_store_strangers.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from attention.models.model_list import ALLOWED_MODELS_ENV, DEFAULT_ALLOWED_HUB_IDS
from components.caches.memory_budget import MEMORY_ENV
from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_store import STORE_ENV
from components.server.cpus import CPUS_ENV, usable_cpus
from components.server.turns import SLOTS_ENV

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes.yaml"
APP_SETTINGS = {ALLOWED_MODELS_ENV, MEMORY_ENV, MODEL_DIRS_ENV, STORE_ENV, DEFAULT_MODEL_ENV, CPUS_ENV, SLOTS_ENV,
                "HF_HUB_OFFLINE"}


def manifest(kind: str, name: str) -> dict:
    for document in yaml.safe_load_all(MANIFEST.read_text()):
        if document and document["kind"] == kind and document["metadata"]["name"] == name:
            return document
    raise LookupError(f"{MANIFEST.name} has no {kind} {name}")


def test_every_setting_of_the_config_map_is_one_the_app_reads():
    assert set(manifest("ConfigMap", "attention-anatomy")["data"]) <= APP_SETTINGS


def test_the_allow_list_comment_names_every_model_allowed_by_default():
    lines = MANIFEST.read_text().splitlines()
    setting = next(index for index, line in enumerate(lines) if line.strip().startswith(ALLOWED_MODELS_ENV + ":"))
    comment = []
    for line in reversed(lines[:setting]):
        if not line.strip().startswith("#"):
            break
        comment.append(line)
    said = " ".join(comment)
    assert [model for model in DEFAULT_ALLOWED_HUB_IDS if model not in said] == []


def test_a_pod_runs_as_many_heavy_computations_as_it_requested_cores(tmp_path):
    """The app's own reading of its cores, with the pod's environment and a cgroup without a quota (the pod has a
    request and no limit), whatever the machine running this test has."""
    app = manifest("Deployment", "attention-anatomy")["spec"]["template"]["spec"]["containers"][0]
    (tmp_path / "cpu.max").write_text("max 100000\n")
    requested = app["resources"]["requests"]["cpu"]
    cores = int(requested[:-1]) / 1000 if requested.endswith("m") else float(requested)
    assert "cpu" not in app["resources"].get("limits", {})  # else the quota says it, and the setting may go
    environment = manifest("ConfigMap", "attention-anatomy")["data"]
    assert usable_cpus(environ=environment, cgroup_root=tmp_path) == math.ceil(cores)
