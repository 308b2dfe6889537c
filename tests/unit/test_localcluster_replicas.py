"""`podsched up` names the lease's holder by its replica, even before it has read the replica's startup
line: a replica's identity starts with its name and pid."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from cluster.launcher.localcluster import LocalCluster, UpConfig
from cluster.launcher.process import SchedulerProcess


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    up = LocalCluster(UpConfig(), report=lambda line: None)
    replica = SchedulerProcess([])
    # A running process stands in for the scheduler: what counts is its pid, and that its startup line
    # (its identity) has not been read yet.
    replica.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], text=True)
    up.replicas["scheduler-1"] = replica
    try:
        yield up
    finally:
        replica.process.kill()
        replica.process.wait()


def test_a_holder_is_its_running_replica_before_the_startup_line_is_read(cluster: LocalCluster) -> None:
    pid = cluster.replicas["scheduler-1"].pid
    assert cluster.replica_of(f"scheduler-1_pid{pid}_0123abcd") == "scheduler-1"


@pytest.mark.parametrize("identity", ["scheduler-1_pid1_0123abcd", "scheduler-2_pid{pid}_0123abcd",
                                      "host_0123abcd-uuid", ""])
def test_another_process_is_not_taken_for_it(cluster: LocalCluster, identity: str) -> None:
    assert cluster.replica_of(identity.format(pid=cluster.replicas["scheduler-1"].pid)) is None
