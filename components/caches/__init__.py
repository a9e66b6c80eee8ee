"""The page's caches, and its one door to the core: a view calls `caches.trace(...)`, never attention/.

Each module keeps one job's caches, keyed on plain values (a model name, a text, frozen settings), so that
equal inputs share an entry across sessions; how many entries each keeps is set in budget.CACHE_ENTRIES.

- budget: how much each cache keeps, out of the server's memory budget (memory_budget)
- work: the slots a thread holds while it builds something large or draws a view
- models: the models, loaded once per server process, and Hub downloads
- texts: a text's tokens and each layer's input
- layers: every head of a layer computed once, one head's trace made from it, the proof
- moves: what the heads move, α·‖f(x)‖, and where a layer's attention parks
- stacks: heads sent to the browser at once (HeadStack, NeuronStack: what a chart's datasets are made of)
- experiments: two texts side by side, the scaling lab, switching heads off, the lesson, the counting toy, the
  induction lab
- chart_memos: chart specs and datasets built once, a student's last charts kept in their session
- atlas: what every head does, over the corpus (kept for every session) and over one text
- offered: which models the page offers (no torch: the page's sidebar is drawn before it is imported)
- stores: the class store, which every session meets (no torch either)
- shared: what every session meets besides: the line of trainings, the induction lab's runs
"""

from __future__ import annotations

from components.lazy_names import lazy_names

# Each name the caches offer, by the module that keeps it. Imported when first asked for (PEP 562): the page asks
# for the offered models and the class store before torch is imported, and most of the caches import the core.
_HOMES = {
    "CORPUS_SENTENCES": "atlas",
    "corpus_atlas": "atlas",
    "corpus_atlas_kept": "atlas",
    "text_atlas": "atlas",
    "CACHE_ENTRIES": "budget",
    "chart_data": "chart_memos",
    "chart_data_by_key": "chart_memos",
    "chart_spec": "chart_memos",
    "drawn_chart": "chart_memos",
    "new_run": "chart_memos",
    "view_run": "chart_memos",
    "DEFAULT_SECOND": "experiments",
    "TRAINING_LIMIT_S": "experiments",
    "aligned_positions": "experiments",
    "alignment_words": "experiments",
    "diagonal_wins": "experiments",
    "drop_grid": "experiments",
    "embedding_ranking": "experiments",
    "equal_letters": "experiments",
    "example_windows": "experiments",
    "falling_layers": "experiments",
    "head_block": "experiments",
    "head_change": "experiments",
    "head_softmax_statistics": "experiments",
    "history_rows": "experiments",
    "induction_training": "experiments",
    "inspect_counting": "experiments",
    "letter_counts": "experiments",
    "masked_cells": "experiments",
    "moved": "experiments",
    "moved_grid": "experiments",
    "prediction": "experiments",
    "random_softmax_statistics": "experiments",
    "random_temperature_statistics": "experiments",
    "ranking": "experiments",
    "row_sum_error": "experiments",
    "sentence_pair": "experiments",
    "shared_word": "experiments",
    "shared_words": "experiments",
    "sink_shares": "experiments",
    "strongest_keys": "experiments",
    "telling_word": "experiments",
    "temperature_row": "experiments",
    "train_counting": "experiments",
    "twin_wins": "experiments",
    "untrained_counting_accuracy": "experiments",
    "untrained_counting_windows": "experiments",
    "untrained_induction": "experiments",
    "variance_by_head_size": "experiments",
    "word_text": "experiments",
    "aggregate_heads": "layers",
    "entropy_by_layer": "layers",
    "head_summary": "layers",
    "proof": "layers",
    "rollout_by_layer": "layers",
    "settings_for": "layers",
    "trace": "layers",
    "MODEL_DIRS_ENV": "offered",
    "check_can_download": "models",
    "downloads": "models",
    "language_model": "models",
    "loaded_now": "models",
    "model": "models",
    "model_names": "offered",
    "needs_download": "models",
    "head_moved": "moves",
    "head_value_norms": "moves",
    "layer_value_norms": "moves",
    "park_shares": "moves",
    "classes": "stores",
    "induction_runs": "shared",
    "training_turns": "shared",
    "AlignedDifference": "stacks",
    "HeadStack": "stacks",
    "NeuronStack": "stacks",
    "head_stack": "stacks",
    "neuron_heads": "stacks",
    "neuron_view": "stacks",
    "encoding": "texts",
    "merged_words": "texts",
    "outline": "texts",
    "text_words": "texts",
    "unknown_characters": "texts",
    "visible_tokens": "texts",
    "visible_words": "texts",
    "word_similarity_by_layer": "texts",
    "HEAVY_SLOTS": "work",
    "PAGE_SLOTS": "work",
    "heavy_work": "work",
    "heavy_work_within": "work",
    "page_work": "work",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
