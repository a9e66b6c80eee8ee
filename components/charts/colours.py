"""The colour ramps of every chart, stop by stop, and the scales Vega colours cells with: the same colours in the
browser's cells and in the server's pictures (colour_ramp), in the reader's palette (palettes.py)."""

from __future__ import annotations

import altair as alt
import numpy as np

from components.charts.palettes import drawn_scheme

# The colour ramps, stop by stop, interpolated linearly in RGB by Vega (cells) and by colour_ramp (pictures) alike.
# "blues" is Vega's own scheme from white: Vega's starts at a pale blue (207, 225, 242), and no attention looked
# like some. "redblue" is Vega's, white at its middle.
SCHEMES = {
    "blues": "ffffffcfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
    "redblue": "8c0d25bf363adf745ef4ae91fbdbc9f2efeed2e5ef9dcae15da2cb2f78b3134b85",
    # "blues" from Vega's own pale blue, not white: for a chart where every cell holds something (the overview's
    # entropies), whose light end must read as "spread out", never as "nothing there".
    "tinted blues": "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
    # For colour-blind readers (palettes.COLOUR_BLIND). Vega's "cividis" turned round, its light yellow first: 0 at
    # the light end, as in "blues".
    "cividis": (
        "fce647fae249f7de4cf3da4ff0d652ebd355e7cf58e2cb5cddc85fd8c462d3c065cebd68c9b96ac5b66dc0b26fbbaf71b6ab73b2a874"
        "aea575a9a177a59e77a19b789e97789a9478969178938e78908b788c8877898577868276827f757f7c757c7974797673757372727071"
        "6e6d716a6a7066676f62646f5e616e5a5e6e555b6e51586e4c566d47536d42506e3c4d6e374a6e31476e2c456e26426e213f6e1c3c6e"
        "16396d11366c0d346b083169042e67012b6500296100265d002358002051"
    ),
    # Vega's "blueorange" turned round: orange below zero, blue above, as "redblue" has blue above.
    "orangeblue": "994a07c5690de8932ffbbf74fce0baf2f0ebd2e5ef9dcae15da2cb2f78b3134b85",
}
# The signed schemes, white at their middle, and the name Vega knows each by (and whether it is turned round): the
# browser's cells take Vega's own scheme, which the stops above copy for the pictures.
DIVERGING = {"redblue": ("redblue", False), "orangeblue": ("blueorange", True)}


def colour_scale(scheme: str, reverse: bool = False, clip_end: str | None = None,
                 domain: list[float] | None = None) -> alt.Scale:
    """The scale of a chart's colours, scheme a role ("blues", "tinted blues", "redblue") drawn in the reader's
    palette (palettes.drawn_scheme). Its ends are the data's, carried with them (heatmap.range_carrier and
    colour_ranges.colour_domain): white at zero for "redblue", 0 at the light end of "blues" (the dark end,
    reversed). clip_end: the name of a parameter whose value c makes the ends of a "redblue" scale ±c whatever the
    data, a cell beyond them at the end colour (heatmap.clip_end). domain: the ends of a "blues" scale, fixed in the
    spec whatever the data."""
    drawn = drawn_scheme(scheme)
    if drawn in DIVERGING:
        if clip_end is not None:
            return alt.Scale(**vega_scheme(drawn), domain=[alt.ExprRef(f"-{clip_end}"), alt.ExprRef(clip_end)],
                             clamp=True)
        return alt.Scale(**vega_scheme(drawn), domainMid=0)
    if domain is not None:
        return alt.Scale(domain=domain, range=colour_stops(drawn), interpolate="rgb")
    return alt.Scale(range=colour_stops(drawn), interpolate="rgb", zero=True, reverse=reverse)


def vega_scheme(scheme: str) -> dict:
    """A signed scheme (DIVERGING) as an alt.Scale's properties: Vega's own scheme, turned round where ours is."""
    name, turned = DIVERGING[scheme]
    return {"scheme": name, "reverse": True} if turned else {"scheme": name}


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
