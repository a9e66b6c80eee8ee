"""The server, browser and session helpers, and the checkpoints, that the tests and the benchmarks share.

tests/ asserts and bench/ prints figures, but both start the same Streamlit servers and drive the
same pages, so the code that does it lives here, where neither has to import the other. Nothing
here imports tests/ or bench/, nor pytest.

- server.py: `streamlit run` on a free loopback port, its session counters, its process's CPU and memory;
- browser.py: a headless Chromium, pages that watch their websocket, and waiting until a page has settled;
- session_client.py: one Streamlit session driven over its websocket, without a browser;
- nginx.py: deploy/nginx.conf in front of two replicas;
- classroom.py: a class of sessions moving the page's controls at once on one server (short texts on one view,
  or long texts over five), and the same one at a time;
- checkpoints.py: GPT-2 checkpoints with random weights and a byte-level BPE tokenizer trained offline.
"""
