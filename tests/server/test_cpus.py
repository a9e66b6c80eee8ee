"""The cores this process may use (components/server/cpus.py), read from real cgroup files written in a folder
that stands for /sys/fs/cgroup, and what the heavy-work slots and the line of trainings are sized from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.server.cpus import CPUS_ENV, available_cpus, cgroup_cpus, usable_cpus
from components.server.turns import SLOTS_ENV, slots_from_environment

ROOT = Path(__file__).resolve().parents[2]
# The cores the machine running the tests lets this process use, without any cgroup quota.
MACHINE = min(os.cpu_count() or 1, len(os.sched_getaffinity(0)))


def cgroup_v2(tmp_path: Path, cpu_max: str) -> Path:
    (tmp_path / "cpu.max").write_text(cpu_max + "\n")
    return tmp_path


def cgroup_v1(tmp_path: Path, quota: str, period: str) -> Path:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(quota + "\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text(period + "\n")
    return tmp_path


@pytest.mark.parametrize(("cpu_max", "cores"), [
    ("max 100000", None),  # no limit
    ("50000 100000", 1),  # half a core: one slot, never none
    ("100000 100000", 1),
    ("250000 100000", 3),  # two and a half cores, rounded up
    ("150000 50000", 3),  # a period other than the default
])
def test_the_cgroup_v2_quota_in_cores_rounded_up(tmp_path, cpu_max, cores):
    assert cgroup_cpus(cgroup_v2(tmp_path, cpu_max)) == cores


@pytest.mark.parametrize(("quota", "period", "cores"), [("-1", "100000", None), ("50000", "100000", 1),
                                                        ("250000", "100000", 3)])
def test_the_cgroup_v1_quota_in_cores_rounded_up(tmp_path, quota, period, cores):
    assert cgroup_cpus(cgroup_v1(tmp_path, quota, period)) == cores


@pytest.mark.parametrize("cpu_max", ["garbage", "", "0 100000", "-5 100000", "100000 0", "1.5 100000", "100000"])
def test_a_cpu_max_without_numbers_is_left_out_and_said_in_the_log(tmp_path, caplog, cpu_max):
    root = cgroup_v2(tmp_path, cpu_max)
    assert cgroup_cpus(root) is None
    assert available_cpus(root) == MACHINE
    assert "cpu.max holds no CPU quota and period" in caplog.text


def test_no_cgroup_to_read_counts_the_cores_the_process_may_run_on(tmp_path):
    assert cgroup_cpus(tmp_path) is None
    assert available_cpus(tmp_path) == MACHINE
    assert available_cpus(cgroup_v2(tmp_path, "max 100000")) == MACHINE


def test_the_quota_bounds_the_cores_and_never_raises_them(tmp_path):
    assert available_cpus(cgroup_v2(tmp_path, "50000 100000")) == 1
    assert available_cpus(cgroup_v2(tmp_path, f"{1000 * 100000} 100000")) == MACHINE, "a thousand cores' quota"


def test_the_setting_wins_over_the_quota(tmp_path):
    root = cgroup_v2(tmp_path, "50000 100000")
    assert usable_cpus({CPUS_ENV: "3"}, root) == 3
    assert usable_cpus({CPUS_ENV: " "}, root) == 1


@pytest.mark.parametrize("setting", ["0", "two", "-1", "1.5", "500m"])
def test_a_bad_setting_says_what_to_write(tmp_path, setting):
    with pytest.raises(ValueError, match=f"{CPUS_ENV} must be a whole number of cores, 1 or more, such as 2; "
                                         f"got '{setting}'"):
        usable_cpus({CPUS_ENV: setting}, tmp_path)


def test_the_trainings_at_once_default_to_the_cores_of_the_quota_not_the_machine(tmp_path):
    root = cgroup_v2(tmp_path, "50000 100000")
    assert slots_from_environment({}, root) == 1
    assert slots_from_environment({CPUS_ENV: "3"}, root) == 3
    assert slots_from_environment({SLOTS_ENV: "2", CPUS_ENV: "3"}, root) == 2, "the trainings' own setting first"


def _server_slots(cpus_setting: str) -> tuple[list[int], str]:
    """HEAVY_SLOTS, PAGE_SLOTS and the line of trainings' slots of a fresh server process given the setting,
    and what it logged."""
    script = ("from components.caches import shared, work; "
              "print(work.HEAVY_SLOTS, work.PAGE_SLOTS, shared.training_turns().slots)")
    environ = {key: value for key, value in os.environ.items() if key not in (CPUS_ENV, SLOTS_ENV)}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env={**environ, CPUS_ENV: cpus_setting},
                          capture_output=True, text=True, timeout=300, check=True)
    return [int(number) for number in done.stdout.split()], done.stderr


def test_a_server_sizes_its_heavy_work_and_trainings_from_the_setting():
    slots, _ = _server_slots("1")
    assert slots == [1, 2, 1]


def test_a_server_with_a_bad_setting_says_so_and_uses_the_cores_it_may():
    slots, logged = _server_slots("lots")
    assert slots == [MACHINE, MACHINE + 1, MACHINE]
    assert f"{CPUS_ENV} must be a whole number of cores" in logged
