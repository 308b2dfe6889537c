"""The faults the chaos test injects, each one a function that injects it, waits for the control plane to
recover, and returns what it measured.

The leader is whoever the store's lease names (as the recorder saw it), matched with a replica by the
identity in its startup line. A failover is timed from the local monotonic time just before the signal
to the arrival, at the recorder, of the first lease write naming another holder: the moment a new leader
exists in the store, which is what the failover bounds are about.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from tests.chaos.history import LeaseRecord, Recorded, bindings, lease_records, takeover_after
from tests.chaos.replicas import Life
from tests.chaos.topology import Topology

#: Slack over each fault's own bound when waiting for recovery: the wait fails slowly, the assertion
#: on the measured time (in the test) is what judges the bound.
RECOVERY_SLACK_S = 20.0
#: How long a restarted replica may take to print its startup line (a Python process on a busy box).
REPLACE_TIMEOUT_S = 30.0
#: How long the SIGSTOPped leader stays stopped beyond its lease.
STOP_PAST_LEASE_S = 2.0
#: How long an API server or an etcd member stays down.
OUTAGE_S = 3.0
#: How long the control plane may take to bind a pod once a fault is over (a new leader relists first).
BIND_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Failover:
    """One leader fault and the takeover that followed it."""

    kind: str
    #: The deposed leader's life.
    old: Life
    #: Local monotonic time just before the signal.
    fault_at: float
    takeover: LeaseRecord

    @property
    def seconds(self) -> float:
        return self.takeover.arrived - self.fault_at


@dataclass(frozen=True)
class Outage:
    """An API server's or an etcd member's kill and restart, and how the leader fared meanwhile."""

    kind: str
    #: Lease holders (non-empty) written from the kill to the restart, in order, the one before included.
    holders: list[str]
    #: Pods bound from the kill to the restart.
    binds: int


def current_leader(topology: Topology, timeout_s: float = RECOVERY_SLACK_S) -> Life:
    """The running replica the lease names now (waiting for one, e.g. right after start)."""

    def leader(events: list[Recorded]) -> Life | None:
        records = lease_records(events)
        if not records or not records[-1].holder:
            return None
        life = topology.replicas.by_identity(records[-1].holder)
        return life if life is not None and life.exit_code is None else None

    found = topology.recorder.wait_for(leader, "a running replica holding the lease", timeout_s)
    assert isinstance(found, Life)
    return found


def wait_bind_after(topology: Topology, revision: int, timeout_s: float = BIND_TIMEOUT_S) -> None:
    """Wait until a pod is bound after store revision ``revision``: the control plane schedules again."""
    topology.recorder.wait_for(
        lambda events: any(b.revision > revision for b in bindings(events)),
        f"a pod bound after revision {revision}", timeout_s,
    )


def last_revision(topology: Topology) -> int:
    events = topology.recorder.events()
    return events[-1].revision if events else 0


def leader_fault(topology: Topology, signum: signal.Signals, bound_s: float) -> Failover:
    """Send ``signum`` to the leader and wait for another replica to take the lease. SIGKILL and
    SIGTERM end the process; the killed replica's slot is restarted before this returns. For SIGSTOP
    the caller resumes the process (see ``pause_leader``)."""
    old = current_leader(topology)
    fault_at = topology.replicas.signal(old, signum)
    found = topology.recorder.wait_for(
        lambda events: takeover_after(events, fault_at, old.identity),
        f"a new leader after {signum.name} of {old.identity}", bound_s + RECOVERY_SLACK_S,
    )
    assert isinstance(found, LeaseRecord)
    failover = Failover(signum.name, old, fault_at, found)
    if signum is not signal.SIGSTOP:
        topology.replicas.wait_replaced(old, REPLACE_TIMEOUT_S)
        wait_bind_after(topology, found.revision)
    return failover


def pause_leader(topology: Topology, bound_s: float) -> Failover:
    """SIGSTOP the leader until it is past its lease and another replica has taken over, then SIGCONT
    it; return once it has exited (it must notice it lost the lease) and its slot was restarted."""
    failover = leader_fault(topology, signal.SIGSTOP, bound_s)
    resume_at = failover.fault_at + topology.spec.lease_duration_s + STOP_PAST_LEASE_S
    time.sleep(max(0.0, resume_at - time.monotonic()))
    topology.replicas.signal(failover.old, signal.SIGCONT)
    topology.replicas.wait_replaced(failover.old, REPLACE_TIMEOUT_S)
    wait_bind_after(topology, failover.takeover.revision)
    return failover


def _outage(topology: Topology, kind: str, kill: Callable[[], None], restart: Callable[[], None]) -> Outage:
    """Run ``kill``, keep the component down for OUTAGE_S, run ``restart``, and wait for a bind after
    the restart; what the lease and the binds did from the kill to the restart."""
    before = topology.recorder.events()
    kill()
    time.sleep(OUTAGE_S)
    restart()
    after = topology.recorder.events()[len(before):]
    wait_bind_after(topology, last_revision(topology))
    holders: list[str] = []
    for record in lease_records(before)[-1:] + lease_records(after):
        if record.holder and (not holders or holders[-1] != record.holder):
            holders.append(record.holder)
    return Outage(kind, holders, len(bindings(before + after)) - len(bindings(before)))


def apiserver_outage(topology: Topology, index: int = 0) -> Outage:
    """SIGKILL API server ``index`` and restart it on its port."""
    server = topology.apiservers[index]
    return _outage(topology, f"apiserver {server.address}", server.kill, server.start)


def etcd_outage(topology: Topology) -> Outage:
    """SIGKILL the etcd leader (the member whose loss hurts: an election follows) and restart it."""
    member = asyncio.run(topology.etcd.leader())
    assert member is not None, "the etcd cluster has no leader before the fault"
    return _outage(
        topology, f"etcd member {topology.etcd.members[member].name} (the etcd leader)",
        lambda: asyncio.run(topology.etcd.kill_member(member)),
        lambda: asyncio.run(topology.etcd.restart_member(member)),
    )
