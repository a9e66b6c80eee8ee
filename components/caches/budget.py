"""How much each cache of the page keeps: entries, and bytes out of the server's memory budget."""

from __future__ import annotations

import logging

from components.caches.memory_budget import MemoryBudget, memory_budget

log = logging.getLogger(__name__)

# How many entries each cache keeps, least recently used out first. Sizes are for a 512-token text.
CACHE_ENTRIES = {
    "model": 3,  # a BERT's weights: 90 MB bundled, 440 MB bert-base
    # The language-model head alone (BERT's: a few MB; GPT-2's tied one: nothing), put on model()'s model at each
    # use, for the switch view.
    "lm_head": 2,
    # What a model's weights take once loaded, an int, weighed once per weights file: a GGUF's header takes seconds
    # to read (SmolLM2-135M-Instruct's vocabulary is in it). Every model the page offers, and more.
    "model_weights": 32,
    # Tokens, ids and masks of a text (a few kB): a class of 30, each with a text of their own.
    "encoding": 64,
    "unknown_characters": 64,  # what each [UNK] of a text stands for: a few characters
    # A class of 30, each with a text of their own, must not push each other out (every move would run
    # the model again): the input of one layer, 0.75 MB at 512 tokens on the bundled model, 1.5 MB on bert-base.
    "layer_encoding": 128,
    # The lesson's last step: a word's similarity in two texts, a float per layer (read off every layer's
    # hidden states, which are not kept: a class's texts would need too many).
    "word_similarity_by_layer": 64,
    # What a trace of any head of the layer is made of: every head's context, 0.75 MB at 512 tokens. A class's
    # worth and more (a student of the lesson looks at two or three settings): a head move then computes one head.
    "layer_contexts": 128,
    # One stage other than the weights (scores, scaled, context) of every head of the layers sent: 0.3 MB for
    # every layer at 32 tokens, 12.6 MB for one layer at 512. The weights are read off layer_weights instead.
    "head_stack": 16,
    # The neuron view's numbers of the heads sent, every query: (h, T, T) three times, 2.8 MB for one head at 484
    # tokens. A long text's students move the query most: one entry each.
    "neuron_heads": 32,
    "layer_proof": 512,  # (nh,) floats: every layer of a class's texts
    "entropy_by_layer": 16,  # (L, nh) floats
    "layer_value_norms": 128,  # ‖f(x_j)‖ of every head of a layer, (nh, T) floats: 24 kB at 512 tokens
    "park_shares": 64,  # (L, P) floats twice: where a text's attention parks, by weight and by what moves
    # (model, text, second text, settings, layers): (len(layers), T, T) floats, 0.1 MB for 6 layers at 64 tokens
    "rollout_by_layer": 16,
    "lab_variance": 1,  # a few dozen floats; the samples never change
    "lab_random_scores": 16,  # (H, R, T) floats, about 0.3 MB
    "lab_random_statistics": 64,  # a few dozen floats per token count and τ
    "lab_random_by_tau": 16,  # (N, H) floats twice per token count: 400 τ × 10 head sizes, 32 kB
    "lab_head_statistics": 64,  # a few dozen floats per text, layer and τ
    "switch_prediction": 64,  # five words and their probabilities
    # Every layer's input of a sentence, intact: (L + 1) x (T, C) floats, 0.3 MB at 32 tokens on the bundled model,
    # 5 MB at the 500 characters' 128 tokens or so on bert-base. Lost, it costs one forward pass again.
    "switch_layer_inputs": 8,
    "switch_ranking": 16,  # one line per head
    "switch_embeddings": 64,  # two sentence embeddings, 3 kB on the bundled model
    "switch_embedding_ranking": 16,  # one line per head
    # Every layer's input of the two sentences, intact: (L + 1) x (2, T, C) floats, 0.6 MB at 32 tokens on the
    # bundled model, 5.5 MB at its 256 at most. Lost, it costs one forward pass again.
    "switch_pair_layer_inputs": 8,
    "head_changes": 128,  # the compare view: a largest change per head of a layer, a class's worth
    "chart_spec": 128,  # a Vega-Lite spec without its data, a few kB
    # An Altair chart's spec and datasets: the lesson's heatmaps, 0.1 to 0.2 MB each at 474 tokens (their
    # pictures), two or three a step; a class's lesson students walking their steps up and down.
    "drawn_chart": 64,
    # A scrubbed chart's datasets, a class's worth: up to two per view and student (the heads grid and its
    # summary), about 0.3 MB at 32 tokens, 1.6 MB for a layer of pictures at 512 (scrub.send_plan's budgets).
    "chart_data": 96,
    # The counting lab's head before training: its held-out accuracy, a float per setting; what it does with one
    # window at every window size (19 small traces, a few kB), per setting but the window and per sample window.
    "untrained_counting_accuracy": 64,
    "untrained_counting_windows": 64,
    # The induction lab's models before training, measured: a few hundred kB of kept attention, per setting.
    "untrained_induction": 16,
    # The induction lab's finished runs, shared by their settings across sessions (server/shared_runs.py): about
    # 0.5 MB each with the defaults (kept attention of 21 steps × 12 heads × 24 × 24), up to 4 MB at 8 heads.
    "induction_runs": 16,
    # The head atlas: every head's seven numbers and the divergences between heads, (L·nh)² floats: 41 kB on the
    # bundled model, 166 kB on bert-base. Over the corpus, one per model the server offers; over a text, a class's.
    "corpus_atlas": 8,
    "text_atlas": 64,
    # Past the attention layer (caches/past_attention.py). A block: each step's per-token norms and the mixing's
    # (T, T) contributions, 1 MB at 512 tokens, a class's layers. A lens: (L + 1, T, k) ids and probabilities and
    # the tokens' strings, 0.3 MB for SmolLM2 at 128 tokens and k = 10. A generation: per step (L, nh, S) weights
    # and (L, nh, d) queries, and the last cache (L, n_kv, S, d) twice: 2 MB for SmolLM2 at 64 tokens; a what-if
    # is two of them.
    "block": 64,
    "lens": 32,
    "generation": 32,
    "streaming": 16,
}




def _budget() -> MemoryBudget:
    try:
        return memory_budget()
    except ValueError as error:  # a deployer's typo must not take the page down: said in the log, default used
        log.error("%s; using the default budget", error)
        return memory_budget(environ={})


# Every cache that can grow large is also bounded in bytes (its pickled size), by its share of the budget.
BUDGET = _budget()
log.info("memory budget: %s", BUDGET.describe())
