"""The JavaScript and CSS of the page's modules, kept in files beside them (head_toggles.js beside head_toggles.py),
where an editor reads them as what they are; each module reads its own once, when it is imported.

A value that Python holds (a wait in ms, a cookie's name, a widget's key in a selector) stands in a file as a
placeholder, `$answer_wait_ms`: a dollar and a lower-case name, which JavaScript reads as a name too, so the file
stays valid JavaScript. JavaScript's own `${…}` in a template literal is no placeholder. `filled` writes each value
in as Python prints it (str), as an f-string did, and refuses a placeholder left without a value or a value that
fills none, so that a misspelt name fails at import rather than in the reader's browser.

The files ship with the source tree: the page reads them from there (deploy/Dockerfile copies components/ whole).
"""

from __future__ import annotations

import re
from pathlib import Path

PLACEHOLDER = re.compile(r"\$([a-z][a-z0-9_]*)")  # $answer_wait_ms; not ${…}, nor $Upper


def read_beside(module_file: str, name: str) -> str:
    """The text of the file called name in the folder of module_file (a module's __file__)."""
    return (Path(module_file).parent / name).read_text(encoding="utf-8")


def filled(text: str, **values: object) -> str:
    """text with each $name replaced by str(values[name]); ValueError for a placeholder without a value, or a
    value with no placeholder."""
    named = set(PLACEHOLDER.findall(text))
    if named != set(values):
        raise ValueError(f"placeholders {sorted(named)} but values for {sorted(values)}")
    return PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), text)


def style_tag(css: str) -> str:
    """CSS as st.html takes it: in a <style> element, which Streamlit puts in the page with no room taken.
    ValueError for a '<' anywhere in it, a comment's too: DOMPurify, which st.html's HTML passes through, drops a
    style element whose text holds one, and the page would silently lose the whole stylesheet."""
    if "<" in css:
        raise ValueError("a '<' in CSS for st.html: DOMPurify would drop the whole style element")
    return f"<style>{css}</style>"
