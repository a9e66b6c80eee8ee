"""The colour ramps of every chart, stop by stop, and the scales Vega colours cells with: the same colours in the
browser's cells and in the server's pictures (colour_ramp)."""

from __future__ import annotations

import altair as alt
import numpy as np

# The colour ramps, stop by stop, interpolated linearly in RGB by Vega (cells) and by colour_ramp (pictures) alike.
# "blues" is Vega's own scheme from white: Vega's starts at a pale blue (207, 225, 242), and no attention looked
# like some. "redblue" is Vega's, white at its middle.
SCHEMES = {
    "blues": "ffffffcfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
    "redblue": "8c0d25bf363adf745ef4ae91fbdbc9f2efeed2e5ef9dcae15da2cb2f78b3134b85",
    # "blues" from Vega's own pale blue, not white: for a chart where every cell holds something (the overview's
    # entropies), whose light end must read as "spread out", never as "nothing there".
    "tinted blues": "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
}


def colour_scale(scheme: str, reverse: bool = False, clip_at: float | None = None,
                 domain: list[float] | None = None) -> alt.Scale:
    """The scale of a chart's colours. Its ends are the data's, carried with them (heatmap.range_carrier and
    colour_ranges.colour_domain): white at zero for "redblue", 0 at the light end of "blues" (the dark end,
    reversed). clip_at: the ends of a "redblue" scale are ±clip_at whatever the data, a cell beyond them at the end
    colour (colour_ranges.robust_bound). domain: the ends of a "blues" scale, fixed in the spec whatever the data."""
    if scheme == "redblue":
        if clip_at is not None:
            return alt.Scale(scheme=scheme, domain=[-clip_at, clip_at], clamp=True)
        return alt.Scale(scheme=scheme, domainMid=0)
    if domain is not None:
        return alt.Scale(domain=domain, range=colour_stops(scheme), interpolate="rgb")
    return alt.Scale(range=colour_stops(scheme), interpolate="rgb", zero=True, reverse=reverse)


def colour_stops(scheme: str) -> list[str]:
    """The scheme's stops as CSS colours, "#rrggbb"."""
    stops = SCHEMES[scheme]
    return [f"#{stops[i:i + 6]}" for i in range(0, len(stops), 6)]


def colour_ramp(scheme: str) -> np.ndarray:
    """256 RGB colours interpolated linearly between the scheme's stops, as Vega does."""
    stops = np.array([[int(stop[j:j + 2], 16) for j in (1, 3, 5)] for stop in colour_stops(scheme)],
                     dtype=np.float64)  # (n, 3)
    where = np.linspace(0, len(stops) - 1, 256)
    ramp = np.stack([np.interp(where, np.arange(len(stops)), stops[:, c]) for c in range(3)], axis=1)
    return np.round(ramp).astype(np.uint8)  # (256, 3)
