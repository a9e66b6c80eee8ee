"""How a chart's text alternative says a number: two decimals, or two significant figures where two decimals would
say nothing (a head's 1 − cos of 0.0012, a rescale of 0.00031), so that a screen reader reads as much as a glance at
the chart shows and no more."""

from __future__ import annotations

SMALL = 0.1  # below this (and above 0), two decimals keep at most one figure: two significant figures instead


def figure(value: float) -> str:
    """'0.41', '12.30', '0.0012', '0.050', '-0.00031', '0.00'."""
    value = float(value)
    return f"{value:#.2g}" if 0 < abs(value) < SMALL else f"{value:.2f}"


def signed(value: float) -> str:
    """figure with its sign always written: '+12.30', '-0.0012' (a change, where up and down both happen)."""
    return ("+" if float(value) >= 0 else "") + figure(value)


def counted(count: int, noun: str) -> str:
    """'1 block', '4 blocks', '0 keys': a count with its noun, as a sentence says it."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
