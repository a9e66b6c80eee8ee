"""The page's caches, and its one door to the core's heavy work: whatever is given a model, builds a trace or runs
torch. A view imports the module that keeps what it asks for (`from components.caches import layers`, then
`layers.trace(...)`); the core's helpers that take numbers only it calls itself (tests/tooling/test_architecture.py
names them).

Each module keeps one job's caches, keyed on plain values (a model name, a text, frozen settings), so that
equal inputs share an entry across sessions; how many entries each keeps is set in budget.CACHE_ENTRIES.

- budget: how much each cache keeps, out of the server's memory budget (memory_budget)
- model_room: the room the loaded models' weights take, beside the bundled model's
- work: the slots a thread holds while it builds something large or draws a view
- models: the models, loaded once per server process, and Hub downloads
- texts: a text's tokens and each layer's input
- layers: every head of a layer computed once, one head's trace made from it, the proof
- moves: what the heads move, α·‖f(x)‖, and where a layer's attention parks
- stacks: heads sent to the browser at once (HeadStack, NeuronStack: what a chart's datasets are made of)
- experiments: two texts side by side, the scaling lab, switching heads off, the counting toy, the induction lab
- chart_memos: chart specs and datasets built once, a student's last charts kept in their session
- atlas: what every head does, over the corpus (kept for every session) and over one text
- offered: which models the page offers (no torch: the page's sidebar is drawn before it is imported)
- stores: the class store, which every session meets (no torch either)
- shared: what every session meets besides: the line of trainings, the induction lab's runs

This package imports none of them: offered and stores are read before torch is imported (the page's first paint),
and most of the others import the core, and with it torch.
"""
