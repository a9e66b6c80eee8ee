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
- shared: what every session meets: the class store, the line of trainings, the induction lab's runs
"""

from components.caches.atlas import CORPUS_SENTENCES, corpus_atlas, corpus_atlas_kept, text_atlas
from components.caches.budget import CACHE_ENTRIES
from components.caches.chart_memos import (
    chart_data,
    chart_data_by_key,
    chart_spec,
    drawn_chart,
    new_run,
    view_run,
)
from components.caches.experiments import (
    DEFAULT_SECOND,
    TRAINING_LIMIT_S,
    aligned_positions,
    alignment_words,
    diagonal_wins,
    drop_grid,
    embedding_ranking,
    equal_letters,
    example_windows,
    falling_layers,
    head_block,
    head_change,
    head_softmax_statistics,
    history_rows,
    induction_training,
    inspect_counting,
    letter_counts,
    masked_cells,
    moved,
    moved_grid,
    prediction,
    random_softmax_statistics,
    random_temperature_statistics,
    ranking,
    row_sum_error,
    sentence_pair,
    shared_word,
    shared_words,
    sink_shares,
    strongest_keys,
    telling_word,
    temperature_row,
    train_counting,
    twin_wins,
    untrained_counting,
    untrained_induction,
    variance_by_head_size,
    word_text,
)
from components.caches.layers import (
    aggregate_heads,
    entropy_by_layer,
    head_summary,
    proof,
    rollout_by_layer,
    settings_for,
    trace,
)
from components.caches.models import (
    MODEL_DIRS_ENV,
    check_can_download,
    downloads,
    language_model,
    model,
    model_names,
    needs_download,
)
from components.caches.moves import head_moved, head_value_norms, layer_value_norms, park_shares
from components.caches.shared import classes, induction_runs, training_turns
from components.caches.stacks import AlignedDifference, HeadStack, NeuronStack, head_stack, neuron_heads, neuron_view
from components.caches.texts import (
    encoding,
    merged_words,
    outline,
    text_words,
    unknown_characters,
    visible_tokens,
    visible_words,
    word_similarity_by_layer,
)
from components.caches.work import HEAVY_SLOTS, PAGE_SLOTS, heavy_work, page_work
