"""The reason for √d_k, measured: var(q · k) grows like d_k, and dividing by √d_k undoes it."""

from __future__ import annotations

import pytest

from attention.labs.scaling_lab import dot_product_variance

HEAD_SIZES = [1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 100, 128, 255, 256]
RELATIVE_TOLERANCE = 0.10


@pytest.mark.parametrize("head_size", HEAD_SIZES)
def test_the_variance_of_q_dot_k_is_about_d_k(head_size):
    assert dot_product_variance(head_size) == pytest.approx(head_size, rel=RELATIVE_TOLERANCE)


@pytest.mark.parametrize("head_size", HEAD_SIZES)
def test_dividing_by_root_d_k_brings_it_back_to_one(head_size):
    assert dot_product_variance(head_size, divisor=head_size**0.5) == pytest.approx(1.0, rel=RELATIVE_TOLERANCE)


@pytest.mark.parametrize("head_size", [4, 64, 256])
def test_dividing_by_d_k_overshoots_to_one_over_d_k(head_size):
    assert dot_product_variance(head_size, divisor=head_size) == pytest.approx(1 / head_size, rel=RELATIVE_TOLERANCE)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_agree(seed):
    assert dot_product_variance(64, seed=seed) == pytest.approx(64, rel=RELATIVE_TOLERANCE)
    assert dot_product_variance(64, seed=seed, divisor=8.0) == pytest.approx(1.0, rel=RELATIVE_TOLERANCE)


def test_the_spread_grows_with_the_head_size():
    unscaled = [dot_product_variance(size) for size in (1, 4, 16, 64, 256)]
    assert unscaled == sorted(unscaled)
    assert unscaled[-1] / unscaled[0] == pytest.approx(256, rel=0.15)


def test_the_measurement_is_reproducible_from_its_seed():
    assert dot_product_variance(16, seed=5) == dot_product_variance(16, seed=5)
    assert dot_product_variance(16, seed=5) != dot_product_variance(16, seed=6)


def test_divisor_scales_the_variance_by_its_square():
    assert dot_product_variance(32, divisor=2.0) == pytest.approx(dot_product_variance(32) / 4, rel=1e-5)


@pytest.mark.parametrize(("head_size", "samples"), [(0, 100), (-3, 100), (8, 1), (8, 0)])
def test_impossible_measurements_are_refused(head_size, samples):
    with pytest.raises(ValueError, match="at least"):
        dot_product_variance(head_size, samples=samples)
