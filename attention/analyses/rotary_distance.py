"""Why a rotary model's scores see distances only: one query and one key, placed at every pair of positions.

RoPE turns pair i of a head's query at position p by p·θ_i and of its key at p' by p'·θ_i
(attention/stages/rotary.py), and a turn by a and one by b leave a dot product turned by a − b. So the same two
vectors score alike at (p, p') and (p + s, p' + s): the guided lesson shows it on the student's own text, with
the model's own rotation, rather than asserting it.

Letters used in shape comments: T tokens, d head size.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.stages.rotary import Rotation


def placed_scores(query: np.ndarray, key: np.ndarray, rotation: Rotation) -> np.ndarray:
    """(d,) one query and (d,) one key before their turn -> (T, T): the query turned to position p (row) against the
    key turned to position p' (column), for every position the rotation turns (its angles' T). Cell (i, j) of a
    head's query i and key j is that head's raw score q_i · k_j; every diagonal holds one number, up to float32
    rounding (attention.analyses.lesson.diagonal_spread)."""
    tokens = rotation.angles.shape[0]
    with torch.inference_mode():
        turned_query = rotation.rotate(torch.from_numpy(query).expand(tokens, -1))  # (T, d): row p turned by p·θ
        turned_key = rotation.rotate(torch.from_numpy(key).expand(tokens, -1))  # (T, d)
        return (turned_query @ turned_key.T).numpy()  # (T, T)
