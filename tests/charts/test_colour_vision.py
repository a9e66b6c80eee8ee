"""The colour scales stay readable under the common colour vision deficiencies (Machado et al. 2009 at severity
1.0: protanopia, deuteranopia, tritanopia), for both palettes of the page: a sequential ramp darkens all the way
(CIELAB L* monotonic) and its ends lie far apart; a diverging ramp's two ends are told apart from each other and
from its middle, each half darkening away from the middle. Each ramp is checked as drawn: 256 colours of 8 bits."""

from __future__ import annotations

import numpy as np
import pytest

from components.charts import colour_vision
from components.charts.colours import DIVERGING, SCHEMES, colour_ramp
from components.charts.palettes import PALETTES, drawn_in, drawn_scheme

VISIONS = (None, *colour_vision.DEFICIENCIES)  # None: normal colour vision
CLEAR_DELTA_E = 40  # ΔE*ab: told apart at a glance (a just-noticeable difference is about 2.3)
# L* two neighbours of an 8-bit ramp may go the wrong way by: each channel is rounded to a whole value, and near
# white half a step of green moves L* by up to 0.2. A real reversal spans many steps and goes further.
ROUNDING_L = 0.25
# Vega's "viridis", which the atlas' layers and the scaling lab's τ are coloured in (a scheme by name: no stops of
# ours to read).
VIRIDIS = ("440154470e61481a6c482575472f7d443a834144873d4e8a39568c35608d31688e2d708e2a788e27818e23888e21918d"
           "1f988b1fa08822a8842ab07f35b77943bf7154c56866cc5d7ad1518fd744a5db36bcdf27d2e21be9e51afde725")
SEQUENTIAL = [name for name in SCHEMES if name not in DIVERGING]


def seen(colours: np.ndarray, vision: str | None) -> np.ndarray:
    return colours.astype(np.float64) if vision is None else colour_vision.simulated(colours, vision)


def ramp_of(stops: str) -> np.ndarray:
    """(256, 3) a ramp interpolated between hex stops, as colours.colour_ramp does."""
    SCHEMES["_test"] = stops
    try:
        return colour_ramp("_test")
    finally:
        del SCHEMES["_test"]


# The simulation against published values.


def test_cielab_of_srgb_red_and_white_is_the_published_value():
    # sRGB (255, 0, 0) under D65: L* 53.24, a* 80.09, b* 67.20 (Lindbloom's calculator; IEC 61966-2-1 primaries).
    np.testing.assert_allclose(colour_vision.cielab(np.array([255, 0, 0])), [53.24, 80.09, 67.20], atol=0.01)
    np.testing.assert_allclose(colour_vision.cielab(np.array([255, 255, 255])), [100, 0, 0], atol=1e-6)


@pytest.mark.parametrize("deficiency", colour_vision.DEFICIENCIES)
def test_greys_look_the_same_to_every_reader(deficiency):
    greys = np.array([[0, 0, 0], [119, 119, 119], [200, 200, 200], [255, 255, 255]])
    np.testing.assert_allclose(colour_vision.simulated(greys, deficiency), greys, atol=0.01)


def test_pure_red_and_blue_as_machado_simulates_them():
    # Machado's matrices act on linear RGB: pure red becomes their first column, pure blue their last, encoded again
    # in sRGB (clipped to the gamut). Protanopia: red (0.152286, 0.114503, -0.003882) -> sRGB (108.8, 95.0, 0),
    # a dark olive; tritanopia: blue (-0.178779, 0.147602, 0.303900) -> (0, 107.2, 149.8), a teal.
    np.testing.assert_allclose(colour_vision.simulated(np.array([255, 0, 0]), "protanopia"), [108.79, 95.03, 0],
                               atol=0.01)
    np.testing.assert_allclose(colour_vision.simulated(np.array([0, 0, 255]), "tritanopia"), [0, 107.20, 149.76],
                               atol=0.01)


def test_red_and_green_meet_under_deuteranopia_but_not_for_normal_vision():
    red, green = np.array([214, 39, 40]), np.array([44, 160, 44])  # tab10's red and green (block and lines use them)
    assert colour_vision.delta_e(red, green) > 80
    assert colour_vision.delta_e(*(colour_vision.simulated(c, "deuteranopia") for c in (red, green))) < 40


# Every scale of the page, in both palettes, under every vision.


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("scheme", [*SEQUENTIAL, "viridis"])
def test_a_sequential_ramp_darkens_all_the_way_and_its_ends_lie_far_apart(scheme, vision):
    ramp = seen(ramp_of(VIRIDIS)[::-1] if scheme == "viridis" else colour_ramp(scheme), vision)  # light end first
    lightness = colour_vision.lightness(ramp)  # (256,)
    assert np.diff(lightness).max() <= ROUNDING_L, f"{scheme} lightens somewhere under {vision}"
    assert colour_vision.delta_e(ramp[0], ramp[-1]) >= CLEAR_DELTA_E


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("scheme", DIVERGING)
def test_a_diverging_ramps_ends_are_told_apart_from_each_other_and_from_its_middle(scheme, vision):
    ramp = seen(colour_ramp(scheme), vision)
    low, middle, high = ramp[0], ramp[127:129].mean(axis=0), ramp[-1]
    assert colour_vision.delta_e(low, high) >= CLEAR_DELTA_E, "negative and positive look alike"
    assert min(colour_vision.delta_e(low, middle), colour_vision.delta_e(high, middle)) >= CLEAR_DELTA_E
    lightness = colour_vision.lightness(ramp)  # (256,)
    assert np.diff(lightness[:128]).min() >= -ROUNDING_L, "the negative half lightens all the way to the middle"
    assert np.diff(lightness[128:]).max() <= ROUNDING_L, "the positive half darkens all the way from the middle"


@pytest.mark.parametrize("palette", PALETTES)
def test_every_role_is_drawn_in_a_scheme_this_file_checks(palette):
    with drawn_in(palette):
        drawn = {role: drawn_scheme(role) for role in ("blues", "tinted blues", "redblue")}
    assert set(drawn.values()) <= set(SCHEMES)
    assert (drawn["redblue"] in DIVERGING) and all(drawn[role] not in DIVERGING for role in ("blues", "tinted blues"))


def test_the_colour_blind_palette_draws_every_role_otherwise():
    with drawn_in("colour-blind"):
        assert [drawn_scheme(role) for role in ("blues", "tinted blues", "redblue")] == ["cividis", "cividis",
                                                                                        "orangeblue"]
    assert drawn_scheme("blues") == "blues", "outside, the standard palette"
