"""Why a pending pod may wait for nobody: `podsched describe pod` reads the scheduler's Lease and, when no
scheduler holds it, says so under the pod's events.

The describing client has only its own clock to judge a holder by, and the Lease's renewTime was written
with the holder's clock, so an old renewal is reported as what it is ("not renewed for 42s ... its duration
is 15s"), never as proof that the holder is gone. The lease named is `podsched scheduler`'s default; a
scheduler run with --leader-elect=false, or on another lease, holds none of it, hence a question rather
than a verdict.
"""

from __future__ import annotations

from cluster.api import errors, kinds, objects_pb2, timeutil
from cluster.api.fencing import SCHEDULER_LEASE
from cluster.client import Client

QUESTION = 'is "podsched scheduler" running?'


async def read_scheduler_lease(client: Client) -> objects_pb2.Lease | None:
    """The default scheduler Lease, or None when there is none; a caller who may not read leases gets
    PermissionDenied."""
    try:
        lease = await client.get(kinds.LEASE, SCHEDULER_LEASE.name, SCHEDULER_LEASE.namespace)
    except errors.NotFound:
        return None
    assert isinstance(lease, objects_pb2.Lease)
    return lease


def no_scheduler_hint(lease: objects_pb2.Lease | None, now_s: float) -> str | None:
    """What to say about the scheduler Lease ``lease`` (None: it does not exist) at ``now_s`` (the local
    Unix time), or None when a holder renewed it within its duration, or when that cannot be judged."""
    ref = str(SCHEDULER_LEASE)
    if lease is None:
        return f"no scheduler holds the lease {ref} (there is no such lease): {QUESTION}"
    spec = lease.spec
    if not spec.holder_identity:
        return f"no scheduler holds the lease {ref} (released): {QUESTION}"
    if not timeutil.is_set(spec.renew_time) or not spec.HasField("lease_duration_seconds"):
        return None
    since_renewal = now_s - (spec.renew_time.seconds + spec.renew_time.nanos / 1e9)
    if since_renewal <= spec.lease_duration_seconds:
        return None
    return (f"the lease {ref}, held by {spec.holder_identity}, was not renewed for {int(since_renewal)}s by "
            f"this machine's clock (its duration is {spec.lease_duration_seconds}s): {QUESTION}")
