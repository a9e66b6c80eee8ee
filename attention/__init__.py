"""Attention Anatomy's core: self-attention dissected step by step, with no Streamlit.

    from attention.dissect.trace import build_trace
    from attention.models.loading import load_model
    from attention.stages.settings import TraceSettings
    from attention.text.encoding import encode

    bert = load_model()                                  # the bundled all-MiniLM-L6-v2
    encoding = encode(bert, "time flies like an arrow")  # one forward pass, reused below
    trace = build_trace(bert, encoding, TraceSettings(layer=2, head=5))
    trace["weights"].shape                               # (1, 7, 7)

The packages, each importing only those listed before it:
- stages: one head's computation (projections, scores, masks, softmax) and the settings a user chooses
- models: the model families, finding and loading a checkpoint, its tokenizer and language-model head
- text: a text's tokens and hidden states, words, sentence pairs
- dissect: a trace of named steps, its outline, all heads of a layer, the proof against transformers
- analyses: what heads do over a text or a corpus (atlas, scores, the lesson's claims, the neuron view)
- experiments: switching heads off and measuring what the model loses
- labs: toy models the page trains on the CPU (counting letters, induction) and the scaling lab

Nothing is imported here: the page reads the settings' names and ranges before torch is imported, and most of
the core imports torch. Import each name from the module that defines it.
"""
