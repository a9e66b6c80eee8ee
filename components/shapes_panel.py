"""The side panel: every step of the trace with its actual shape and its formula."""

from __future__ import annotations

import streamlit as st

STAGE_TITLES = {
    "inputs": "Tokens",
    "embeddings": "Embeddings",
    "projections": "Projections, all heads",
    "head": "One head",
    "heads": "All heads together",
}


def shape_rows(steps) -> list[tuple[str, str, str, str]]:
    """(stage, name, shape as Python prints a tuple, formula) for each step, in order."""
    return [(step.stage, step.name, str(tuple(step.shape)), step.formula) for step in steps]


def shapes_panel(steps, letters: str) -> None:
    """steps: the trace's steps (names and formulas are the core's own text, never user input).

    One list item per step, name and shape on the first line and the formula under them: a
    narrow column wraps a list gracefully, where a three-column table would be cut off.
    """
    st.subheader("Tensor shapes", anchor=False)
    rows = shape_rows(steps)
    blocks = [f":small[:gray[{letters}]]"]
    for stage, title in STAGE_TITLES.items():
        items = [f"- `{name}` `{shape}`  \n  {_formula(formula)}" for s, name, shape, formula in rows if s == stage]
        if items:
            blocks.append(f"**{title}**\n\n" + "\n".join(items))
    # One Markdown element, not one per stage: the browser redraws every element a rerun sends.
    st.markdown("\n\n".join(blocks))


def _formula(formula: str) -> str:
    return f":small[`{formula}`]"
