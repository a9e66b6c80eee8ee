"""The proof's reference, transformers' own BertAttention, built once per layer of a model and gone with it.

A proof runs on every new text; building the module each time was half of its cost. The numbers it gives are
transformers' (tests/core/test_parity.py); here, that a second text reuses the module and still gets the numbers of
one built for it alone, and that a model let go takes its modules along.
"""

from __future__ import annotations

import gc
import weakref

import torch

from attention.models.families import bert
from attention.models.loading import load_model
from attention.text.encoding import encode


def reference_weights(loaded, text: str, layer: int) -> torch.Tensor:
    """(1, nh, T, T): the reference's weights for text at layer."""
    encoding = encode(loaded, text)
    with torch.inference_mode():
        return loaded.family.reference(loaded.model, layer, torch.from_numpy(encoding.layer_input(layer)),
                                       torch.from_numpy(encoding.attention_mask)).weights


def test_a_second_text_reuses_the_layers_module_and_gets_the_numbers_of_a_new_one(tiny):
    reference_weights(tiny, "time flies like an arrow", 1)
    kept = bert._transformers_attention(tiny.model, 1)
    second = reference_weights(tiny, "fruit flies like a banana", 1)
    assert bert._transformers_attention(tiny.model, 1) is kept
    bert._REFERENCE_MODULES.pop(tiny.model)  # the next call builds the module anew
    assert torch.equal(second, reference_weights(tiny, "fruit flies like a banana", 1))
    assert bert._transformers_attention(tiny.model, 1) is not kept


def test_a_model_let_go_takes_its_reference_modules_along(tiny_checkpoint):
    loaded = load_model(str(tiny_checkpoint))
    reference_weights(loaded, "time flies like an arrow", 0)
    gone = weakref.ref(bert._transformers_attention(loaded.model, 0))
    del loaded
    gc.collect()
    assert gone() is None
