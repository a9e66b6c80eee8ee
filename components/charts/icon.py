"""The browser tab's icon: a small attention pattern in the page's blues."""

from __future__ import annotations

import numpy as np
from PIL import Image

from components.charts.colours import colour_ramp


def page_icon() -> Image.Image:
    """The browser tab's icon: a small attention pattern in the page's blues, drawn here so that
    the page asks no font or image server for it (an icon name would, and classrooms go offline)."""
    pattern = np.array([[0.9, 0.2, 0.1, 0.1], [0.3, 0.8, 0.2, 0.1], [0.1, 0.4, 0.7, 0.2], [0.1, 0.1, 0.5, 0.9]])
    pixels = colour_ramp("blues")[np.round(pattern * 255).astype(np.uint8)]  # (4, 4, 3)
    return Image.fromarray(pixels).resize((64, 64), Image.NEAREST)
