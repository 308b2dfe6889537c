"""Server-enforced leadership's rules, on a fake clock: when a Lease may change holder, and which
non-admin writes need a fence."""

from __future__ import annotations

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.api.fencing import LeaseRef
from cluster.api.kinds import EVENT, POD
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.fencing import Fencing, LeaseFence
from cluster.apiserver.leadership import Leadership, LeaseClock
from cluster.apiserver.storage import Storage
from tests import builders

ADMIN = UserInfo("ada", groups=("system:masters",))
SCHEDULER = UserInfo("kube-scheduler", groups=("podsched:schedulers",))
CLIENT = UserInfo("cleo", groups=("podsched:clients",))


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lease(holder: str, revision: int, *, duration: int = 15, token: int | None = None) -> objects_pb2.Lease:
    return builders.lease(holder=holder, duration=duration, token=token, resource_version=str(revision))


def fence(holder: str, token: int) -> LeaseFence:
    return Fencing(Storage(None)).of(apiserver_pb2.Fence(  # type: ignore[arg-type]
        lease_namespace="kube-system", lease_name="kube-scheduler", holder_identity=holder, token=token))


def may_bind(user: UserInfo, request: RequestInfo) -> bool:
    return user is SCHEDULER and request.full_resource == "pods/binding"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rules(clock: FakeClock) -> Leadership:
    return Leadership(enforced=True, may=may_bind, clock=LeaseClock(clock=clock))


def test_a_held_lease_changes_holder_only_once_expired_by_the_servers_clock(
    rules: Leadership, clock: FakeClock
) -> None:
    held = lease("real", 10)
    rules.clock.observe(held)
    clock.now += 14.5
    with pytest.raises(errors.Forbidden) as refused:
        rules.check_lease_update(held, lease("attacker", 10), None)
    assert refused.value.message == (
        'lease kube-system/kube-scheduler is held by "real" and cannot be taken over by "attacker": it '
        "expires by this API server's clock only in 0.5s (15s after the server last saw it renewed); only a "
        "released or expired lease changes holder (--enforce-leader-fencing)"
    )
    clock.now += 0.5
    rules.check_lease_update(held, lease("standby", 10), None)


def test_a_renewal_restarts_the_expiry_and_a_shortened_duration_does_not_hasten_it(
    rules: Leadership, clock: FakeClock
) -> None:
    rules.clock.observe(lease("real", 10))
    clock.now += 10
    # The holder's identity may write anything but the holder: here a one-second lease.
    shortened = lease("real", 11, duration=1, token=10)
    rules.check_lease_update(lease("real", 10), shortened, None)
    rules.clock.observe(shortened)
    clock.now += 14
    with pytest.raises(errors.Forbidden, match=r"only in 1\.0s \(15s after"):
        rules.check_lease_update(shortened, lease("attacker", 11), None)
    clock.now += 1
    rules.check_lease_update(shortened, lease("attacker", 11), None)


def test_a_released_lease_is_taken_at_once_and_a_new_tenure_has_its_own_duration(
    rules: Leadership, clock: FakeClock
) -> None:
    released = lease("", 12, duration=1)
    rules.clock.observe(released)
    rules.check_lease_update(released, lease("standby", 12), None)
    taken = lease("standby", 13, duration=3)
    rules.clock.observe(taken)
    clock.now += 3
    rules.check_lease_update(taken, lease("other", 13), None)


def test_only_the_holder_releases_before_expiry_under_its_tenures_fence(rules: Leadership) -> None:
    held = lease("real", 20, token=10)
    rules.clock.observe(held)
    unfenced = r"cannot be released: .*; its holder releases it under the fence"
    with pytest.raises(errors.Forbidden, match=unfenced):
        rules.check_lease_update(held, lease("", 20, duration=1), None)
    with pytest.raises(errors.Forbidden):
        rules.check_lease_update(held, lease("", 20, duration=1), fence("someone-else", 10))
    rules.check_lease_update(held, lease("", 20, duration=1), fence("real", 10))


def test_after_a_restart_a_held_lease_expires_a_full_duration_after_the_server_first_sees_it(
    clock: FakeClock,
) -> None:
    """A new server has seen no renewal: the Lease counts from its first sight, however old it is."""
    restarted = Leadership(enforced=True, may=may_bind, clock=LeaseClock(clock=clock))
    held = lease("real", 30)
    clock.now += 1000  # the server has been up a while before it first reads this Lease
    with pytest.raises(errors.Forbidden, match=r"only in 15\.0s"):
        restarted.check_lease_update(held, lease("attacker", 30), None)
    clock.now += 15
    restarted.check_lease_update(held, lease("attacker", 30), None)


def test_a_deleted_lease_is_forgotten(rules: Leadership, clock: FakeClock) -> None:
    rules.clock.observe(lease("real", 10))
    rules.clock.forget("/registry/leases/kube-system/kube-scheduler", 11)
    clock.now += 5
    # Created again later: counted from when it is seen again.
    assert rules.clock.remaining(lease("real", 12)) == (15.0, 15)


def test_without_enforcement_any_write_goes(clock: FakeClock) -> None:
    off = Leadership(enforced=False, may=may_bind, clock=LeaseClock(clock=clock))
    off.check_lease_update(lease("real", 10), lease("attacker", 10), None)
    off.check_bind(SCHEDULER, "default", "web", None)
    off.check_delete(SCHEDULER, POD, "default", "web", None)
    assert off.nomination_check(SCHEDULER, None) is None


def test_a_non_admin_binds_only_under_a_fence(rules: Leadership) -> None:
    with pytest.raises(errors.PermissionDenied) as refused:
        rules.check_bind(SCHEDULER, "default", "web", None)
    assert refused.value.message == (
        'user "kube-scheduler" cannot bind pod default/web without a fence: this API server enforces leader '
        "fencing (--enforce-leader-fencing): only the holder of the scheduler lease writes this, under the "
        "fence of its tenure"
    )
    rules.check_bind(SCHEDULER, "default", "web", fence("real", 10))
    rules.check_bind(ADMIN, "default", "web", None)


def test_a_pod_delete_needs_a_fence_only_from_a_caller_that_may_bind(rules: Leadership) -> None:
    with pytest.raises(errors.PermissionDenied, match=r"cannot delete pod default/victim \(a caller that"):
        rules.check_delete(SCHEDULER, POD, "default", "victim", None)
    rules.check_delete(SCHEDULER, POD, "default", "victim", fence("real", 10))
    rules.check_delete(CLIENT, POD, "default", "mine", None)
    rules.check_delete(ADMIN, POD, "default", "any", None)
    rules.check_delete(SCHEDULER, EVENT, "default", "web.1", None)


def test_a_nomination_change_needs_a_fence(rules: Leadership) -> None:
    stored = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name="web", namespace="default"))
    nominated = objects_pb2.Pod()
    nominated.CopyFrom(stored)
    nominated.status.nominated_node_name = "node-1"
    check = rules.nomination_check(SCHEDULER, None)
    assert check is not None
    with pytest.raises(errors.PermissionDenied, match=r"cannot change status.nominatedNodeName of pod"):
        check(stored, nominated)
    with pytest.raises(errors.PermissionDenied):
        check(nominated, stored)  # clearing it is a change too
    conditions = objects_pb2.Pod()
    conditions.CopyFrom(stored)
    conditions.status.message = "unschedulable"
    check(stored, conditions)
    assert rules.nomination_check(SCHEDULER, fence("real", 10)) is None
    assert rules.nomination_check(ADMIN, None) is None


def test_allocating_or_reserving_a_claim_needs_a_fence(rules: Leadership) -> None:
    """A claim's allocation and its consumers are the scheduler's decisions, as a nomination; taking
    consumers off or clearing the allocation (the resourceclaim controller's part) is not."""
    stored = objects_pb2.ResourceClaim(metadata=objects_pb2.ObjectMeta(name="gpu", namespace="default"))
    allocated = objects_pb2.ResourceClaim()
    allocated.CopyFrom(stored)
    allocated.status.allocation.devices.results.add(request="r", driver="d.example.com", pool="p", device="x")
    reserved = objects_pb2.ResourceClaim()
    reserved.CopyFrom(allocated)
    reserved.status.reserved_for.add(resource="pods", name="web", uid="u1")
    check = rules.nomination_check(SCHEDULER, None)
    assert check is not None
    with pytest.raises(errors.PermissionDenied, match=r"cannot set status.allocation of resourceclaim "
                                                      r"default/gpu without a fence"):
        check(stored, allocated)
    with pytest.raises(errors.PermissionDenied, match=r"cannot add to status.reservedFor of resourceclaim"):
        check(allocated, reserved)
    check(reserved, allocated)
    check(allocated, stored)
    assert rules.nomination_check(SCHEDULER, fence("real", 10)) is None


def fence_of(namespace: str, name: str) -> LeaseFence:
    return Fencing(Storage(None)).of(apiserver_pb2.Fence(  # type: ignore[arg-type]
        lease_namespace=namespace, lease_name=name, holder_identity="attacker", token=10))


@pytest.mark.parametrize(
    ("fenced", "lease", "refusal"),
    [
        (None, ("kube-system", "kube-scheduler"), None),
        (None, ("kube-system", "rogue"), "takes fences only of the lease kube-system/kube-scheduler"),
        (None, ("default", "kube-scheduler"), "takes fences only of the lease kube-system/kube-scheduler"),
        ((LeaseRef("sched", "a"), LeaseRef("sched", "b")), ("sched", "b"), None),
        ((LeaseRef("sched", "a"), LeaseRef("sched", "b")), ("kube-system", "kube-scheduler"),
         "takes fences only of the leases sched/a, sched/b"),
    ],
    ids=["the-schedulers", "rogue", "another-namespace", "configured", "not-configured"],
)
def test_a_fence_names_a_lease_the_server_takes_fences_of(
    rules: Leadership, fenced: tuple[LeaseRef, ...] | None, lease: tuple[str, str], refusal: str | None
) -> None:
    """``fenced`` None: the server's default, the scheduler's lease."""
    if fenced is not None:
        rules = Leadership(enforced=True, may=may_bind, fenced_leases=fenced)
    for user in (SCHEDULER, ADMIN):
        if refusal is None:
            rules.check_fence(user, fence_of(*lease))
            continue
        with pytest.raises(errors.PermissionDenied) as refused:
            rules.check_fence(user, fence_of(*lease))
        assert refused.value.message == (
            f'user "{user.name}" cannot write under a fence of lease {lease[0]}/{lease[1]}: this API server '
            f"enforces leader fencing (--enforce-leader-fencing) and {refusal} (--fenced-lease)"
        )
    # Without enforcement a fence may name any Lease, as before.
    Leadership(enforced=False, may=may_bind).check_fence(SCHEDULER, fence_of(*lease))


def test_enforcement_needs_a_lease_to_take_fences_of() -> None:
    with pytest.raises(ValueError, match=r"--enforce-leader-fencing needs at least one lease .*\(--fenced-"):
        Leadership(enforced=True, may=may_bind, fenced_leases=())
