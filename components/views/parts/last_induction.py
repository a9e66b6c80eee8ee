"""The induction lab's last trained decoders in this session, kept for the logit lens: what the lens reads of each
(attention.labs.induction.TrainedStreams, their residual streams on the run's probe and their unembedding), never
the run itself, whose kept attention is most of its weight. One per session, replaced by the next run shown: 46 kB
at the lab's defaults, 62 kB at its largest settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attention.labs.induction import InductionConfig, InductionRun, TrainedStreams

LAST = "induction_last_trained"  # session key: the LastTrained of the last run the lab showed


@dataclass(frozen=True, eq=False)
class LastTrained:
    """The settings of the lab's last run shown in this session, and what the lens reads of each of its models."""

    config: InductionConfig
    models: tuple[TrainedStreams, ...]  # one layer, then two

    def model(self, layers: int) -> TrainedStreams:
        return next(streams for streams in self.models if streams.layers == layers)

    @property
    def nbytes(self) -> int:
        return sum(streams.nbytes for streams in self.models)


def remember(run: InductionRun) -> None:
    """The run the lab shows, if it trained at all, as this session's last trained decoders."""
    if run.steps_run > 0:
        st.session_state[LAST] = LastTrained(run.config, tuple(history.streams for history in run.models))


def last() -> LastTrained | None:
    return st.session_state.get(LAST)
