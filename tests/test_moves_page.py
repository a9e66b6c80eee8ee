"""What a head moves on the page, through AppTest: the one-head CSV's alpha_fx_norm against transformers' own
modules (tests/test_value_norms.py's references), for BERT and GPT-2."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from tests.pages import TEXT, assert_healthy, open_keeping_downloads
from tests.test_value_norms import bert_reference, gpt2_reference


def head_csv(query: dict[str, str]) -> pd.DataFrame:
    page, made = open_keeping_downloads(query)
    assert_healthy(page)
    [name] = [name for name in made if name.endswith(".csv")]
    return pd.read_csv(io.StringIO(made[name]()), keep_default_na=False)


def as_matrix(table: pd.DataFrame, column: str) -> np.ndarray:
    count = table["query_index"].max() + 1
    return table[column].to_numpy(np.float32).reshape(count, count)  # rows by query, then key


def test_the_csv_says_what_each_key_moves_as_transformers_computes_it_for_bert(bundled):
    table = head_csv({"layer": "3", "head": "5"})
    np.testing.assert_allclose(as_matrix(table, "alpha_fx_norm"), bert_reference(bundled, TEXT, 3)[5],
                               rtol=1e-4, atol=1e-5)


def test_the_csv_says_what_each_key_moves_as_transformers_computes_it_for_gpt2(tiny_gpt2_checkpoint,
                                                                              tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "what if it rains tomorrow, then."
    table = head_csv({"model": str(tiny_gpt2_checkpoint), "text": text, "layer": "1", "head": "2"})
    np.testing.assert_allclose(as_matrix(table, "alpha_fx_norm"), gpt2_reference(tiny_gpt2_model, text, 1)[2],
                               rtol=1e-4, atol=1e-5)
