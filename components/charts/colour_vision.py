"""How a colour looks to a reader with a colour vision deficiency, and how far apart two colours look: the numbers
that tell whether a colour scale stays readable for every reader (tests/charts/test_colour_vision.py).

The simulation is Machado, Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
Vision Deficiency" (IEEE TVCG 15(6)), at severity 1.0: dichromacy, the strongest form, so that a scale readable
under it is readable under the milder anomalous forms too. Its matrices act on linear RGB, so a colour is decoded
from sRGB first and encoded again after. Distances are CIELAB's (D65 white): L* for lightness, ΔE*ab (CIE 1976)
for how different two colours look. numpy only.
"""

from __future__ import annotations

import numpy as np

# Machado et al. 2009, Table 1, severity 1.0: linear RGB in (columns) -> linear RGB as the dichromat sees it (rows).
# Each row sums to 1, so that greys, white and black look the same to every reader.
DEFICIENCIES = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}

# sRGB's linear RGB -> CIE XYZ (IEC 61966-2-1, D65), and the D65 white XYZ is divided by, as CIELAB does.
_RGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                        [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
_D65_WHITE = _RGB_TO_XYZ.sum(axis=1)  # (3,): XYZ of linear white (1, 1, 1)


def linear_rgb(srgb: np.ndarray) -> np.ndarray:
    """(…, 3) sRGB 0-255 -> (…, 3) linear RGB 0-1 (the sRGB curve undone)."""
    encoded = np.asarray(srgb, dtype=np.float64) / 255
    return np.where(encoded <= 0.04045, encoded / 12.92, ((encoded + 0.055) / 1.055) ** 2.4)


def srgb(linear: np.ndarray) -> np.ndarray:
    """(…, 3) linear RGB 0-1 -> (…, 3) sRGB 0-255, as floats (a colour outside the gamut clipped to it first)."""
    linear = np.clip(linear, 0.0, 1.0)
    return 255 * np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def simulated(colours: np.ndarray, deficiency: str) -> np.ndarray:
    """(…, 3) sRGB 0-255 -> (…, 3) sRGB 0-255 (floats) as a reader with the deficiency (a DEFICIENCIES key) sees
    them. Clipped to the gamut: a few colours fall just outside it (Machado's matrices have negative entries)."""
    return srgb(linear_rgb(colours) @ DEFICIENCIES[deficiency].T)


def cielab(colours: np.ndarray) -> np.ndarray:
    """(…, 3) sRGB 0-255 -> (…, 3) CIELAB L*, a*, b* under D65: L* 0 (black) to 100 (white)."""
    xyz = linear_rgb(colours) @ _RGB_TO_XYZ.T / _D65_WHITE  # (…, 3), white at 1
    cubed = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    x, y, z = cubed[..., 0], cubed[..., 1], cubed[..., 2]
    return np.stack([116 * y - 16, 500 * (x - y), 200 * (y - z)], axis=-1)


def lightness(colours: np.ndarray) -> np.ndarray:
    """(…, 3) sRGB 0-255 -> (…,) CIELAB L*."""
    return cielab(colours)[..., 0]


def delta_e(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """ΔE*ab (CIE 1976) between colours (…, 3, sRGB 0-255): about 2.3 is a just-noticeable difference, and two
    colours 10 or more apart are told apart at a glance."""
    return np.linalg.norm(cielab(first) - cielab(second), axis=-1)
