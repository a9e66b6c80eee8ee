"""The head ranking's memory: every head of a layer runs at once as nh copies of the text, and its attention stages
went with them whole, (nh, nh, T, T) floats four times over, 0.6 GB for two sentences of 256 tokens, outside the
server's memory budget. It now attends a few heads at a time and keeps one layer's tensors at a time.

Measured in a process of its own: the growth of its peak resident memory (ru_maxrss) across one ranking, after a
small one has warmed up torch and the model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEAK_LIMIT_MB = 400  # the ranking now peaks near 280 MB at 2 × 256 tokens; it peaked near 990 MB unchunked

_RANKING = """
import resource
import torch
torch.set_num_threads(1)
from attention.experiments import embedding_switch
from attention.models.model_list import BUNDLED_MODEL
from attention.models.loading import load_model

loaded = load_model(BUNDLED_MODEL)
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
text = " ".join(words[i % 12] + str(i) for i in range(400))
second = " ".join(words[i * 5 % 12] + str(i) for i in range(400))
embedding_switch.head_ranking(loaded, "a warm-up", "of torch and the model")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
intact, _ = embedding_switch.head_ranking(loaded, text, second)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(*(len(tokens) for tokens in intact.tokens), grown // 1024)
"""


def test_ranking_every_head_of_two_256_token_sentences_peaks_within_its_limit():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _RANKING], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    tokens_a, tokens_b, grown_mb = (int(part) for part in done.stdout.split())
    assert (tokens_a, tokens_b) == (256, 256), "each sentence at the model's 256 tokens"
    assert grown_mb < PEAK_LIMIT_MB, f"the ranking's peak grew {grown_mb} MB"
