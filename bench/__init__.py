"""Benchmarks that print figures and assert nothing. Run them from the repository's root as modules:

    python -m bench                      every figure of the performance targets (about 5 minutes)
    python -m bench --only slider,trace  a subset (python -m bench --help lists the groups)
    python -m bench.trace_overhead       the trace against the bare forward pass alone

Being a package is what puts the repository on sys.path (python -m runs from the current directory),
so no module here edits sys.path. Everything runs offline: the Hugging Face Hub is never asked.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# transformers' load reports and progress bars would bury the figures (the servers inherit this too).
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
