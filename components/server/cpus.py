"""How many cores this process may use: what the heavy-work slots and the line of trainings are sized from.

os.cpu_count() is the machine's count. In a container it is the node's, however little of it the container may
use: a pod on a 32-core node with half a core would run 32 heavy computations at once, each at a sixty-fourth of a
core, each holding its tensors. ATTENTION_ANATOMY_CPUS sets the number; else it is the fewest of the machine's
cores, the cores this process may run on (its affinity: taskset, a cpuset) and the container's CPU quota (its
cgroup's cpu.max, or cgroup v1's cfs quota and period), rounded up. A container with a request and no limit (a
Kubernetes pod with only `requests.cpu`) has no quota: the setting is then the only way to say its share.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

log = logging.getLogger(__name__)

CPUS_ENV = "ATTENTION_ANATOMY_CPUS"
CGROUP_ROOT = Path("/sys/fs/cgroup")  # where a container sees its own cgroup
CGROUP_V2_QUOTA = "cpu.max"  # "QUOTA PERIOD" in µs, or "max PERIOD" for no quota
# cgroup v1 keeps the two numbers apart, in the cpu controller's folder; a quota of -1 is none.
CGROUP_V1_QUOTA, CGROUP_V1_PERIOD = "cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us"


def usable_cpus(environ=os.environ, cgroup_root: Path = CGROUP_ROOT) -> int:
    """The setting, else the cores this process may use (available_cpus); ValueError naming the setting for
    anything but a whole number ≥ 1."""
    setting = environ.get(CPUS_ENV, "").strip()
    if not setting:
        return available_cpus(cgroup_root)
    if not setting.isdigit() or int(setting) < 1:
        raise ValueError(f"{CPUS_ENV} must be a whole number of cores, 1 or more, such as 2; got {setting!r}")
    return int(setting)


def process_cpus() -> int:
    """usable_cpus of this process, read as the heavy-work slots and the line of trainings are made: a bad setting
    is said in the log and the cores available are used, so that a deployer's typo does not take the page down."""
    try:
        cpus = usable_cpus()
    except ValueError as error:
        cpus = available_cpus()
        log.error("%s; using the %d this process may use", error, cpus)
    return cpus


def available_cpus(cgroup_root: Path = CGROUP_ROOT) -> int:
    """The fewest of the machine's cores, those this process may run on and its cgroup's quota; at least 1."""
    counts = [os.cpu_count() or 1]
    if hasattr(os, "sched_getaffinity"):  # Linux; macOS and Windows have no affinity to read here
        counts.append(len(os.sched_getaffinity(0)))
    quota = cgroup_cpus(cgroup_root)
    if quota is not None:
        counts.append(quota)
    return max(1, min(counts))


def cgroup_cpus(cgroup_root: Path = CGROUP_ROOT) -> int | None:
    """The cgroup's CPU quota in cores, rounded up (half a core is 1, 2.5 are 3), or None when there is none, no
    cgroup to read, or a file that holds no such numbers (said in the log)."""
    v2 = _read(cgroup_root / CGROUP_V2_QUOTA)
    if v2 is not None:
        quota, _, period = v2.partition(" ")
        return _cores(quota, period, no_quota="max", file=cgroup_root / CGROUP_V2_QUOTA)
    quota, period = _read(cgroup_root / CGROUP_V1_QUOTA), _read(cgroup_root / CGROUP_V1_PERIOD)
    if quota is None or period is None:
        return None
    return _cores(quota, period, no_quota="-1", file=cgroup_root / CGROUP_V1_QUOTA)


def _read(file: Path) -> str | None:
    try:
        return file.read_text().strip()
    except OSError:
        return None


def _cores(quota: str, period: str, no_quota: str, file: Path) -> int | None:
    """quota and period in µs as cores, rounded up; None for no quota or numbers that are none."""
    if quota == no_quota:
        return None
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:
        quota_us = period_us = 0
    if quota_us <= 0 or period_us <= 0:
        log.warning("%s holds no CPU quota and period in µs (%r, %r): the cores are counted without it",
                    file, quota, period)
        return None
    return max(1, math.ceil(quota_us / period_us))
