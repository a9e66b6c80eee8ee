"""A floor for bench/fragment_floor.py: bench/floor_app.py's slider and line in a fragment, and `n` captions that no
move changes, drawn outside the fragment (`where=outside`), inside it, after the line (`where=inside`), or not at
all (`where=none`): what elements a move leaves alone cost against those it sends again."""

import streamlit as st

where = st.query_params.get("where", "none")
count = int(st.query_params.get("n", "60")) if where != "none" else 0


def captions() -> None:
    for index in range(count):
        st.caption(f"A caption no move changes, number {index}")


@st.fragment
def moved() -> None:
    x = st.slider("x", min_value=0, max_value=100, key="x")
    st.write(f"x is {x}")
    if where == "inside":
        captions()


if where == "outside":
    captions()
moved()
