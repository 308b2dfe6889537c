"""The chaos tests' history checker (tests/chaos/history.py) on small synthetic histories: each rule
holds on a clean history and reports the violation, naming what is wrong, on a violating one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.kinds import (
    EVENT,
    LEASE,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    POD_GROUP,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
)
from store.base import EventType
from tests import builders
from tests.chaos import history
from tests.chaos.history import Recorded

LEASE_KEY = history.SCHEDULER_LEASE_KEY


class History:
    """Builds a recorded history one write at a time: revisions count up from 2, arrival times are the
    revision in seconds (so a test can speak of "after revision N" in local time too)."""

    def __init__(self) -> None:
        self.events: list[Recorded] = []
        self.revision = 1
        self._in_transaction = False

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write inside shares one revision, as a store transaction's do."""
        self.revision += 1
        self._in_transaction = True
        try:
            yield
        finally:
            self._in_transaction = False

    def _next_revision(self) -> int:
        if not self._in_transaction:
            self.revision += 1
        return self.revision

    def put(self, key: str, obj: Message) -> int:
        revision = self._next_revision()
        obj.metadata.resource_version = str(revision)  # type: ignore[attr-defined]
        self.events.append(Recorded(revision, EventType.PUT, key, obj, float(revision)))
        return revision

    def delete(self, key: str, obj: Message) -> int:
        revision = self._next_revision()
        self.events.append(Recorded(revision, EventType.DELETE, key, obj, float(revision)))
        return revision

    def node(self, name: str, *, cpu: str = "1", memory: str = "1Gi", pods: str = "10") -> int:
        return self.put(NODE.key("", name), builders.node(name, cpu=cpu, memory=memory, pods=pods))

    def pod(self, name: str, node: str = "", *, uid: str = "", cpu: str = "100m", memory: str = "",
            phase: str = "Pending", fence: str = "") -> int:
        return self.put(POD.key("default", name), make_pod(name, node, uid=uid, cpu=cpu, memory=memory,
                                                          phase=phase, fence=fence))

    def event(self, name: str, fence: str = "", *, reason: str = "FailedScheduling",
              component: str = history.SCHEDULER_COMPONENT) -> int:
        event = objects_pb2.Event(reason=reason, reporting_component=component)
        event.metadata.name = name
        event.metadata.namespace = "default"
        if fence:
            event.metadata.annotations[history.WRITTEN_UNDER_FENCE] = fence
        return self.put(EVENT.key("default", name), event)

    def pod_group(self, name: str, min_count: int | None, *, coscheduling: bool = False) -> int:
        """A PodGroup: upstream's spelling (a gang policy with ``min_count``, a basic one for None), or with
        ``coscheduling`` scheduler-plugins' (minMember ``min_count``, 0 for None)."""
        return self.put(POD_GROUP.key("default", name), make_pod_group(name, min_count, coscheduling))

    def member(self, name: str, group: str, node: str = "", *, label: bool = False, cpu: str = "100m") -> int:
        """A pod of ``group``, naming it in spec.schedulingGroup or, with ``label``, by the label."""
        return self.put(key(name), make_member(name, group, node, label=label, cpu=cpu))

    def slice(self, pool: str, *devices: str, shared: tuple[str, ...] = ()) -> int:
        """A slice of driver "gpu" publishing ``devices`` in ``pool``; those in ``shared`` allow multiple
        allocations."""
        published = objects_pb2.ResourceSlice()
        published.metadata.name = pool
        published.spec.driver, published.spec.pool.name, published.spec.node_name = "gpu", pool, pool
        for device in devices:
            published.spec.devices.add(name=device, allow_multiple_allocations=device in shared)
        return self.put(RESOURCE_SLICE.key("", pool), published)

    def claim(self, name: str, *devices: str, share_id: str = "", admin: bool = False) -> int:
        """Claim ``name`` allocated ``devices`` ("pool/device" of driver "gpu"; none: not allocated)."""
        return self.put(claim_key(name), make_claim(name, *devices, share_id=share_id, admin=admin))

    def volume(self, name: str, claim_uid: str = "") -> int:
        """PersistentVolume ``name``, its claimRef naming the claim with ``claim_uid`` (none when empty)."""
        written = objects_pb2.PersistentVolume()
        written.metadata.name = name
        if claim_uid:
            written.spec.claim_ref.namespace, written.spec.claim_ref.uid = "default", claim_uid
        return self.put(PERSISTENT_VOLUME.key("", name), written)

    def volume_claim(self, name: str, volume: str = "", *, completed: bool = True) -> int:
        """Claim ``name`` (uid "uid-<name>") naming ``volume``, with the bind-completed annotation when
        ``completed``."""
        made = make_volume_claim(name, volume, completed)
        return self.put(PERSISTENT_VOLUME_CLAIM.key("default", name), made)

    def lease(self, holder: str, token: int | None = None) -> int:
        lease = objects_pb2.Lease()
        lease.metadata.name = "kube-scheduler"
        lease.metadata.namespace = "kube-system"
        lease.spec.holder_identity = holder
        if token is not None:
            lease.metadata.annotations[history.FENCING_TOKEN] = str(token)
        return self.put(LEASE_KEY, lease)


def make_pod(name: str, node: str = "", *, uid: str = "", cpu: str = "100m", memory: str = "",
             phase: str = "Pending", fence: str = "") -> objects_pb2.Pod:
    annotations = {history.BOUND_UNDER_FENCE: fence} if fence else {}
    return builders.pod(name, uid=uid or f"uid-{name}", annotations=annotations, node_name=node,
                        cpu=cpu, memory=memory, phase=phase)


def make_pod_group(name: str, min_count: int | None, coscheduling: bool = False) -> objects_pb2.PodGroup:
    if coscheduling:
        return builders.pod_group(name, api_version=builders.COSCHEDULING, kind="PodGroup",
                                  min_member=min_count or 0)
    return builders.pod_group(name, kind="PodGroup", min_count=min_count, basic=min_count is None)


def make_member(name: str, group: str, node: str = "", *, label: bool = False,
                cpu: str = "100m") -> objects_pb2.Pod:
    pod = make_pod(name, node, cpu=cpu)
    if label:
        pod.metadata.labels[history.POD_GROUP_LABEL] = group
    else:
        pod.spec.scheduling_group.pod_group_name = group
    return pod


def make_volume_claim(name: str, volume: str, completed: bool) -> objects_pb2.PersistentVolumeClaim:
    made = objects_pb2.PersistentVolumeClaim()
    made.metadata.name, made.metadata.namespace, made.metadata.uid = name, "default", f"uid-{name}"
    made.spec.volume_name = volume
    if completed:
        made.metadata.annotations[history.BIND_COMPLETED] = "yes"
    return made


def key(name: str) -> str:
    return POD.key("default", name)


def claim_key(name: str) -> str:
    return RESOURCE_CLAIM.key("default", name)


def make_claim(
    name: str, *devices: str, share_id: str = "", admin: bool = False
) -> objects_pb2.ResourceClaim:
    claim = objects_pb2.ResourceClaim()
    claim.metadata.name, claim.metadata.namespace = name, "default"
    if devices:
        results = claim.status.allocation.devices.results
        for device in devices:
            pool, _, name_in_pool = device.partition("/")
            result = results.add(request="req-0", driver="gpu", pool=pool, device=name_in_pool)
            if share_id:
                result.share_id = share_id
            if admin:
                result.admin_access = True
    return claim


# ------------------------------------------------------------------------------------- bound once


def test_bound_once_holds_when_every_pod_is_bound_once_and_stays() -> None:
    h = History()
    h.pod("a")
    h.pod("b")
    h.pod("a", "n1", phase="Running")
    h.pod("b", "n2", phase="Running")
    h.pod("a", "n1", phase="Running")  # a status update on the same node
    h.delete(key("b"), make_pod("b", "n2"))
    assert history.check_bound_once(h.events, submitted=[key("a"), key("b")]) == []


def test_bound_once_reports_a_pod_never_bound() -> None:
    h = History()
    h.pod("a")
    h.pod("b")
    h.pod("b", "n1")
    assert history.check_bound_once(h.events) == [
        "pod /registry/pods/default/a (uid uid-a) was never bound (at the end of the history)"
    ]


def test_bound_once_reports_a_pod_deleted_before_it_was_bound() -> None:
    h = History()
    h.pod("a")
    h.delete(key("a"), make_pod("a"))
    assert history.check_bound_once(h.events) == [
        "pod /registry/pods/default/a (uid uid-a) was never bound (deleted at revision 3)"
    ]


def test_bound_once_reports_a_pod_that_moved_to_another_node() -> None:
    h = History()
    h.pod("a")
    h.pod("a", "n1")
    h.pod("a", "n2")
    problems = history.check_bound_once(h.events)
    assert "pod /registry/pods/default/a moved from node n1 to n2 at revision 4" in problems
    assert "pod /registry/pods/default/a was bound 2 times (to n2 at revision 4)" in problems


def test_bound_once_reports_a_pod_unbound_and_bound_again() -> None:
    h = History()
    h.pod("a")
    h.pod("a", "n1")
    h.pod("a", "")
    h.pod("a", "n1")
    assert history.check_bound_once(h.events) == [
        "pod /registry/pods/default/a moved from node n1 to (none) at revision 4",
        "pod /registry/pods/default/a was bound 2 times (to n1 at revision 5)",
    ]


def test_bound_once_judges_a_recreated_pod_as_a_new_incarnation() -> None:
    h = History()
    h.pod("a", uid="first")
    h.pod("a", "n1", uid="first")
    h.delete(key("a"), make_pod("a", "n1", uid="first"))
    h.pod("a", uid="second")
    h.pod("a", "n2", uid="second")
    assert history.check_bound_once(h.events) == []


def test_bound_once_reports_a_uid_change_without_a_deletion() -> None:
    h = History()
    h.pod("a", "n1", uid="first")
    h.pod("a", "n1", uid="second")
    assert history.check_bound_once(h.events) == [
        "pod /registry/pods/default/a changed uid from first to second without a deletion (revision 3)"
    ]


def test_bound_once_reports_a_submitted_pod_missing_from_the_history() -> None:
    h = History()
    h.pod("a", "n1")
    assert history.check_bound_once(h.events, submitted=[key("a"), key("ghost")]) == [
        "pod /registry/pods/default/ghost was submitted but never appears in the store's history"
    ]


# ------------------------------------------------------------------------------- over allocatable


def test_allocatable_holds_when_pods_fit_every_node_at_every_revision() -> None:
    h = History()
    h.node("n1", cpu="1", pods="3")
    for name in ("a", "b", "c"):
        h.pod(name)
        h.pod(name, "n1", cpu="300m", memory="100Mi")
    h.pod("d")
    h.pod("a", "n1", cpu="300m", phase="Succeeded")  # finished pods hold nothing
    h.pod("d", "n1", cpu="400m")
    assert history.check_never_over_allocatable(h.events) == []


def test_allocatable_reports_a_node_over_its_cpu() -> None:
    h = History()
    h.node("n1", cpu="500m")
    h.pod("a", "n1", cpu="300m")
    h.pod("b", "n1", cpu="300m")
    assert history.check_never_over_allocatable(h.events) == [
        "revision 4: node n1 is over allocatable cpu: 600 requested > 500"
    ]


def test_allocatable_reports_a_node_over_its_memory_and_pod_count() -> None:
    h = History()
    h.node("n1", memory="1Gi", pods="1")
    h.pod("a", "n1", memory="768Mi")
    h.pod("b", "n1", memory="512Mi")
    assert history.check_never_over_allocatable(h.events) == [
        f"revision 4: node n1 is over allocatable memory: {1280 * 2**20} requested > {2**30}",
        "revision 4: node n1 is over allocatable pods: 2 requested > 1",
    ]


def test_allocatable_counts_init_containers_and_overhead() -> None:
    h = History()
    h.node("n1", cpu="1")
    pod = make_pod("a", "n1", cpu="200m")
    pod.spec.init_containers.add(name="init").resources.requests["cpu"] = "900m"  # max(200m, 900m)
    pod.spec.overhead["cpu"] = "200m"  # + 200m = 1100m
    h.put(key("a"), pod)
    assert history.check_never_over_allocatable(h.events) == [
        "revision 3: node n1 is over allocatable cpu: 1100 requested > 1000"
    ]


def test_allocatable_frees_room_when_a_pod_is_deleted_and_checks_a_shrunk_node() -> None:
    h = History()
    h.node("n1", cpu="500m")
    h.pod("a", "n1", cpu="300m")
    h.delete(key("a"), make_pod("a", "n1", cpu="300m"))
    h.pod("b", "n1", cpu="400m")
    assert history.check_never_over_allocatable(h.events) == []
    h.node("n1", cpu="300m")
    assert history.check_never_over_allocatable(h.events) == [
        "revision 6: node n1 is over allocatable cpu: 400 requested > 300"
    ]


def test_allocatable_reports_pods_bound_to_an_unknown_node() -> None:
    h = History()
    h.pod("a", "nowhere")
    assert history.check_never_over_allocatable(h.events) == [
        "revision 2: pods are bound to node nowhere, which the store does not hold"
    ]


def test_allocatable_judges_a_revision_once_all_its_writes_apply() -> None:
    """One transaction that deletes a pod and binds another in its place never overcommits the node,
    whatever order its events are listed in; the node is judged once the whole revision applies."""
    h = History()
    h.node("n1", cpu="500m")
    h.pod("a", "n1", cpu="400m")
    h.pod("b")
    with h.transaction():
        h.pod("b", "n1", cpu="400m")
        h.delete(key("a"), make_pod("a", "n1", cpu="400m"))
    assert history.check_never_over_allocatable(h.events) == []


def test_allocatable_reports_a_revision_that_overcommits_once_and_by_its_number() -> None:
    h = History()
    h.node("n1", cpu="500m")
    for name in ("a", "b", "c"):
        h.pod(name)
    with h.transaction():
        for name in ("a", "b", "c"):
            h.pod(name, "n1", cpu="200m")
    assert history.check_never_over_allocatable(h.events) == [
        "revision 6: node n1 is over allocatable cpu: 600 requested > 500"
    ]


# ------------------------------------------------------------------------------------------- gangs


def test_revisions_group_the_writes_of_one_transaction() -> None:
    h = History()
    h.pod("a")
    with h.transaction():
        h.pod("b")
        h.pod("c")
    h.pod("d")
    assert [(revision, [e.key for e in written]) for revision, written in history.revisions(h.events)] == [
        (2, [key("a")]), (3, [key("b"), key("c")]), (4, [key("d")]),
    ]


def test_gangs_hold_when_a_gang_is_bound_in_one_revision() -> None:
    h = History()
    h.node("n1", cpu="4")
    h.pod_group("train", 3)
    for name in ("w-0", "w-1", "w-2"):
        h.member(name, "train")
    with h.transaction():
        for name in ("w-0", "w-1", "w-2"):
            h.member(name, "train", "n1")
    h.member("w-1", "train", "n1")  # a status update of a bound member changes nothing
    assert history.check_gangs_never_partly_bound(h.events) == []
    assert history.check_never_over_allocatable(h.events) == []


def test_gangs_report_a_gang_partly_bound_at_one_revision() -> None:
    h = History()
    h.pod_group("train", 3)
    for name in ("w-0", "w-1", "w-2"):
        h.member(name, "train")
    with h.transaction():
        h.member("w-0", "train", "n1")
        h.member("w-1", "train", "n1")
    partly = h.revision
    h.member("w-2", "train", "n1")
    assert history.check_gangs_never_partly_bound(h.events) == [
        f"revision {partly}: gang default/train has 2 of its pods bound, fewer than its minCount 3 "
        "(bound: w-0, w-1)"
    ]


def test_gangs_report_pods_bound_one_by_one_at_each_partial_revision() -> None:
    h = History()
    h.pod_group("mpi", 3, coscheduling=True)
    for name in ("l", "w"):
        h.member(name, "mpi", label=True)
    first = h.member("l", "mpi", "n1", label=True)
    second = h.member("w", "mpi", "n2", label=True)
    assert history.check_gangs_never_partly_bound(h.events) == [
        f"revision {first}: gang default/mpi has 1 of its pods bound, fewer than its minCount 3 (bound: l)",
        f"revision {second}: gang default/mpi has 2 of its pods bound, fewer than its minCount 3 "
        "(bound: l, w)",
    ]


def test_gangs_allow_members_beyond_min_count_to_be_bound_later() -> None:
    h = History()
    h.pod_group("train", 2)
    for name in ("w-0", "w-1", "w-2"):
        h.member(name, "train")
    with h.transaction():
        h.member("w-0", "train", "n1")
        h.member("w-1", "train", "n1")
    h.member("w-2", "train", "n2")
    assert history.check_gangs_never_partly_bound(h.events) == []


def test_gangs_report_a_gang_partly_evicted() -> None:
    h = History()
    h.pod_group("train", 2)
    with h.transaction():
        h.member("w-0", "train", "n1")
        h.member("w-1", "train", "n1")
    evicted = h.delete(key("w-1"), make_member("w-1", "train", "n1"))
    h.delete(key("w-0"), make_member("w-0", "train", "n1"))  # the rest goes: none bound is whole again
    assert history.check_gangs_never_partly_bound(h.events) == [
        f"revision {evicted}: gang default/train has 1 of its pods bound, fewer than its minCount 2 "
        "(bound: w-0)"
    ]


def test_gangs_ignore_plain_pods_and_groups_that_are_no_gang() -> None:
    h = History()
    h.pod_group("basic", None)
    h.pod_group("loose", None, coscheduling=True)  # minMember 0
    h.pod("plain", "n1")
    h.member("b-0", "basic", "n1")
    h.member("l-0", "loose", "n1", label=True)
    assert history.check_gangs_never_partly_bound(h.events) == []


def test_gangs_read_the_min_count_as_the_group_stands_at_the_revision() -> None:
    h = History()
    h.pod_group("train", 1)
    h.member("w-0", "train", "n1")
    h.pod_group("train", 3)  # raised afterwards: judged when the bound count changes next
    bound = h.member("w-1", "train", "n1")
    assert history.check_gangs_never_partly_bound(h.events) == [
        f"revision {bound}: gang default/train has 2 of its pods bound, fewer than its minCount 3 "
        "(bound: w-0, w-1)"
    ]


def test_gangs_report_a_member_bound_while_its_group_does_not_exist() -> None:
    h = History()
    h.member("w-0", "ghost")
    bound = h.member("w-0", "ghost", "n1")
    assert history.check_gangs_never_partly_bound(h.events) == [
        f"revision {bound}: pods w-0 of group default/ghost were bound, but the store holds no PodGroup "
        "default/ghost"
    ]


def test_gang_bindings_list_each_groups_binds() -> None:
    h = History()
    h.pod_group("train", 2)
    h.pod("plain", "n1")
    with h.transaction():
        h.member("w-0", "train", "n1")
        h.member("w-1", "train", "n2", label=True)
    found = history.gang_bindings(h.events)
    assert {group: [(b.key, b.node, b.revision) for b in binds] for group, binds in found.items()} == {
        "default/train": [(key("w-0"), "n1", h.revision), (key("w-1"), "n2", h.revision)],
    }


# ---------------------------------------------------------------------------------------- fencing


def test_fenced_binds_hold_when_each_bind_names_the_tenure_of_its_time() -> None:
    h = History()
    first = h.lease("s1")
    h.lease("s1", token=first)  # a renewal keeps the tenure's token
    h.pod("a")
    h.pod("a", "n1", fence=f"s1@{first}")
    second = h.lease("s2")  # a new holder: a new tenure, token = its revision
    h.lease("s2", token=second)
    h.pod("b")
    h.pod("b", "n1", fence=f"s2@{second}")
    assert history.check_fenced_binds(h.events) == []


def test_fenced_binds_report_a_bind_without_the_annotation() -> None:
    h = History()
    h.lease("s1")
    h.pod("a", "n1")
    assert history.check_fenced_binds(h.events) == [
        "pod /registry/pods/default/a bound to n1 at revision 3 carries no podsched.io/bound-under-fence "
        "annotation"
    ]


def test_fenced_binds_report_a_malformed_annotation() -> None:
    h = History()
    h.lease("s1")
    h.pod("a", "n1", fence="s1-2")
    assert history.check_fenced_binds(h.events) == [
        "pod /registry/pods/default/a bound to n1 at revision 3: podsched.io/bound-under-fence is 's1-2', "
        "not <holder>@<token>"
    ]


def test_fenced_binds_report_a_write_from_a_deposed_leader() -> None:
    h = History()
    first = h.lease("s1")
    h.lease("s2")  # s1 is deposed at revision 3
    h.pod("a", "n1", fence=f"s1@{first}")
    assert history.check_fenced_binds(h.events) == [
        "pod /registry/pods/default/a bound to n1 at revision 4 under fence s1@2, but the lease was then "
        "held by s2 in the tenure of token 3 (lease revision 3)"
    ]


def test_fenced_binds_report_a_stale_token_of_the_same_holder() -> None:
    h = History()
    first = h.lease("s1")
    h.lease("")  # released
    second = h.lease("s1")  # the same identity again: a new tenure
    h.pod("a", "n1", fence=f"s1@{first}")
    assert second != first
    assert history.check_fenced_binds(h.events) == [
        "pod /registry/pods/default/a bound to n1 at revision 5 under fence s1@2, but the lease was then "
        "held by s1 in the tenure of token 4 (lease revision 4)"
    ]


def test_fenced_binds_report_a_bind_before_any_lease() -> None:
    h = History()
    h.pod("a", "n1", fence="s1@7")
    assert history.check_fenced_binds(h.events) == [
        "pod /registry/pods/default/a bound to n1 at revision 2 under fence s1@7, before the lease existed"
    ]


def test_no_writes_after_holds_when_the_deposed_holder_is_silent() -> None:
    h = History()
    first = h.lease("old")
    h.pod("a", "n1", fence=f"old@{first}")
    takeover = h.lease("new")
    h.pod("b", "n1", fence=f"new@{takeover}")
    assert history.check_no_writes_after(h.events, "old", takeover) == []


def test_no_writes_after_reports_a_bind_and_a_lease_write_of_the_deposed_holder() -> None:
    h = History()
    first = h.lease("old")
    takeover = h.lease("new")
    h.pod("a", "n1", fence=f"old@{first}")
    h.lease("old", token=first)
    assert history.check_no_writes_after(h.events, "old", takeover) == [
        "pod /registry/pods/default/a was bound to n1 under old's fence at revision 4, after revision 3",
        "the lease was written with holder old at revision 5, after revision 3",
    ]


def test_fenced_events_hold_when_each_write_names_the_tenure_of_its_time() -> None:
    h = History()
    first = h.lease("s1")
    h.event("web.1", f"s1@{first}")
    h.lease("s1", token=first)
    h.event("web.1", f"s1@{first}")  # a count update in the same tenure
    second = h.lease("s2")
    h.event("web.1", f"s2@{second}")  # the next term updates it under its own fence
    h.delete(EVENT.key("default", "web.1"), objects_pb2.Event())
    assert history.check_fenced_events(h.events) == []


def test_fenced_events_report_an_event_of_a_term_written_after_the_next_began() -> None:
    h = History()
    first = h.lease("s1")
    h.lease("s2")  # s1 is deposed at revision 3
    h.event("web.1", f"s1@{first}")
    assert history.check_fenced_events(h.events) == [
        "event /registry/events/default/web.1 (FailedScheduling) written at revision 4 under fence s1@2, but "
        "the lease was then held by s2 in the tenure of token 3 (lease revision 3)"
    ]


def test_fenced_events_report_an_unfenced_event() -> None:
    h = History()
    h.lease("s1")
    h.event("web.1", reason="Scheduled")
    assert history.check_fenced_events(h.events) == [
        "event /registry/events/default/web.1 (Scheduled) written at revision 3 carries no "
        "podsched.io/written-under-fence annotation"
    ]


def test_fenced_events_judge_the_schedulers_events_only() -> None:
    """A controller's event (a claim waiting for its first consumer) is no leader's: never fenced."""
    h = History()
    h.lease("s1")
    h.event("data.1", reason="WaitForFirstConsumer", component="persistentvolume-controller")
    assert history.check_fenced_events(h.events) == []
    assert history.event_writes(h.events) == []


def test_no_writes_after_reports_an_event_of_the_deposed_holder() -> None:
    h = History()
    first = h.lease("old")
    h.event("web.1", f"old@{first}")
    takeover = h.lease("new")
    h.event("web.2", f"old@{first}")
    assert history.check_no_writes_after(h.events, "old", takeover) == [
        "event /registry/events/default/web.2 (FailedScheduling) was written under old's fence at revision "
        "5, after revision 4",
    ]


# --------------------------------------------------------------------------------------- failover


def test_takeover_after_finds_the_first_new_holder_after_the_fault() -> None:
    h = History()
    h.lease("a")  # revision 2, arrives at 2.0
    h.lease("a", token=2)
    h.lease("")  # a release is not a takeover
    h.lease("b")  # revision 5
    h.lease("c")
    found = history.takeover_after(h.events, since=3.5, old_holder="a")
    assert found is not None and (found.holder, found.revision, found.arrived) == ("b", 5, 5.0)
    assert history.takeover_after(h.events, since=6.5, old_holder="c") is None


def test_lease_records_read_the_tenure_token_from_the_annotation_or_the_revision() -> None:
    h = History()
    h.lease("a")
    h.lease("a", token=2)
    h.delete(LEASE_KEY, objects_pb2.Lease())
    records = history.lease_records(h.events)
    assert [(r.holder, r.token, r.revision) for r in records] == [("a", 2, 2), ("a", 2, 3), ("", 4, 4)]


def test_other_keys_are_not_leases_or_pods() -> None:
    h = History()
    other = objects_pb2.Lease()
    other.spec.holder_identity = "x"
    h.put(LEASE.key("default", "other"), other)
    assert history.lease_records(h.events) == []
    assert history.bindings(h.events) == []


# ---------------------------------------------------------------------------------------- volumes


def test_volumes_hold_when_each_volume_is_bound_to_one_claim() -> None:
    h = History()
    h.volume("pv1")
    h.volume_claim("a", completed=False)
    h.volume("pv1", "uid-a")
    h.volume_claim("a", "pv1")
    h.volume("pv2", "uid-b")
    h.volume_claim("b", "pv2")
    assert history.check_volumes_bound_once(h.events) == []


def test_volumes_report_a_volume_bound_to_two_claims() -> None:
    h = History()
    h.volume("pv1", "uid-a")
    h.volume_claim("a", "pv1")
    twice = h.volume_claim("b", "pv1")
    assert history.check_volumes_bound_once(h.events) == [
        f"revision {twice}: PersistentVolume pv1 is bound to 2 claims: "
        f"{PERSISTENT_VOLUME_CLAIM.key('default', 'a')}, {PERSISTENT_VOLUME_CLAIM.key('default', 'b')}"
    ]


def test_volumes_let_a_deleted_claims_volume_go_to_another() -> None:
    h = History()
    h.volume("pv1", "uid-a")
    h.volume_claim("a", "pv1")
    h.delete(PERSISTENT_VOLUME_CLAIM.key("default", "a"), make_volume_claim("a", "pv1", True))
    h.volume("pv1", "uid-b")
    h.volume_claim("b", "pv1")
    assert history.check_volumes_bound_once(h.events) == []


def test_volumes_count_a_claim_bound_only_once_its_binding_completed() -> None:
    """A claim naming a volume without bind-completed (a user's request, Pending) binds nothing yet."""
    h = History()
    h.volume("pv1", "uid-a")
    h.volume_claim("a", "pv1")
    h.volume_claim("b", "pv1", completed=False)
    assert history.check_volumes_bound_once(h.events) == []


def test_volumes_report_a_bound_claim_whose_volume_names_another_claim() -> None:
    h = History()
    h.volume("pv1", "uid-a")
    h.volume_claim("a", "pv1")
    moved = h.volume("pv1", "uid-b")
    assert history.check_volumes_bound_once(h.events) == [
        f"revision {moved}: claim {PERSISTENT_VOLUME_CLAIM.key('default', 'a')} is bound to PersistentVolume "
        "pv1, whose claimRef names the claim with uid uid-b"
    ]


# ---------------------------------------------------------------------------------------- devices


def test_devices_hold_when_every_allocation_has_devices_of_its_own() -> None:
    h = History()
    h.slice("n1", "d0", "d1")
    h.slice("n2", "d0")
    h.claim("a")
    h.claim("a", "n1/d0")
    h.claim("b", "n1/d1")
    h.claim("c", "n2/d0")
    assert history.check_devices_allocated_once(h.events) == []


def test_devices_report_a_device_allocated_to_two_claims() -> None:
    h = History()
    h.slice("n1", "d0", "d1")
    h.claim("a", "n1/d0")
    twice = h.claim("b", "n1/d0")
    assert history.check_devices_allocated_once(h.events) == [
        f"revision {twice}: device gpu/n1/d0 is allocated 2 times: {claim_key('a')}, {claim_key('b')}"
    ]


def test_devices_report_a_device_twice_in_one_allocation() -> None:
    h = History()
    h.slice("n1", "d0")
    twice = h.claim("a", "n1/d0", "n1/d0")
    assert history.check_devices_allocated_once(h.events) == [
        f"revision {twice}: device gpu/n1/d0 is allocated 2 times: {claim_key('a')}, {claim_key('a')}"
    ]


def test_devices_are_freed_by_a_deletion_or_a_deallocation() -> None:
    h = History()
    h.slice("n1", "d0")
    h.claim("a", "n1/d0")
    h.delete(claim_key("a"), make_claim("a", "n1/d0"))
    h.claim("b", "n1/d0")
    h.claim("b")
    h.claim("c", "n1/d0")
    assert history.check_devices_allocated_once(h.events) == []


def test_devices_judge_a_revision_once_all_its_writes_apply() -> None:
    """One transaction that hands a device from one claim to another holds it once."""
    h = History()
    h.slice("n1", "d0")
    h.claim("a", "n1/d0")
    with h.transaction():
        h.claim("b", "n1/d0")
        h.claim("a")
    assert history.check_devices_allocated_once(h.events) == []


def test_devices_allowing_multiple_allocations_need_distinct_share_ids() -> None:
    h = History()
    h.slice("n1", "d0", shared=("d0",))
    h.claim("a", "n1/d0", share_id="s1")
    h.claim("b", "n1/d0", share_id="s2")
    assert history.check_devices_allocated_once(h.events) == []
    same = h.claim("c", "n1/d0", share_id="s1")
    assert history.check_devices_allocated_once(h.events) == [
        f"revision {same}: device gpu/n1/d0, which allows multiple allocations, has shareID 's1' in 2 "
        f"allocations: {claim_key('a')}, {claim_key('c')}"
    ]


def test_devices_ignore_admin_access_and_report_a_device_no_slice_publishes() -> None:
    h = History()
    h.slice("n1", "d0")
    h.claim("a", "n1/d0")
    h.claim("admin", "n1/d0", admin=True)
    assert history.check_devices_allocated_once(h.events) == []
    ghost = h.claim("b", "n9/d0")
    assert history.check_devices_allocated_once(h.events) == [
        f"revision {ghost}: device gpu/n9/d0, allocated to {claim_key('b')}, is published by no ResourceSlice"
    ]


def claiming_pod(name: str, node: str, claim: str = "") -> objects_pb2.Pod:
    """A pod whose claim "gpu" the controller made as ``claim`` ("": not made yet)."""
    pod = make_pod(name, node)
    pod.spec.resource_claims.add(name="gpu", resource_claim_template_name="one-gpu")
    if claim:
        pod.status.resource_claim_statuses.add(name="gpu", resource_claim_name=claim)
    return pod


def reserved(claim: objects_pb2.ResourceClaim, pod_name: str) -> objects_pb2.ResourceClaim:
    claim.status.reserved_for.add(resource="pods", name=pod_name, uid=f"uid-{pod_name}")
    return claim


def test_claims_hold_when_every_bound_pods_claim_is_allocated_and_reserved_on_its_node() -> None:
    h = History()
    h.slice("n1", "d0")
    h.slice("n2", "d0")
    h.put(key("p"), claiming_pod("p", "n1", "p-gpu-x"))
    h.put(claim_key("p-gpu-x"), reserved(make_claim("p-gpu-x", "n1/d0"), "p"))
    h.put(key("waiting"), claiming_pod("waiting", ""))
    assert history.check_claims_on_their_pods_nodes(h.events) == []
    assert sorted(history.claimed_pods(h.events)) == [key("p"), key("waiting")]


def test_claims_report_a_bound_pods_claim_missing_unallocated_unreserved_or_on_another_node() -> None:
    h = History()
    h.slice("n1", "d0", "d1")
    h.slice("n2", "d0")
    h.put(key("unmade"), claiming_pod("unmade", "n1"))
    h.put(key("gone"), claiming_pod("gone", "n1", "gone-gpu"))
    h.put(key("pending"), claiming_pod("pending", "n1", "pending-gpu"))
    h.put(claim_key("pending-gpu"), make_claim("pending-gpu"))
    h.put(key("stranger"), claiming_pod("stranger", "n1", "stranger-gpu"))
    h.put(claim_key("stranger-gpu"), make_claim("stranger-gpu", "n1/d1"))
    h.put(key("away"), claiming_pod("away", "n1", "away-gpu"))
    h.put(claim_key("away-gpu"), reserved(make_claim("away-gpu", "n2/d0"), "away"))
    assert history.check_claims_on_their_pods_nodes(h.events) == [
        f"pod {key('away')} on n1: claim gpu: ResourceClaim away-gpu holds device gpu/n2/d0 of node n2",
        f"pod {key('gone')} on n1: claim gpu: ResourceClaim gone-gpu does not exist",
        f"pod {key('pending')} on n1: claim gpu: ResourceClaim pending-gpu is not allocated",
        f"pod {key('stranger')} on n1: claim gpu: ResourceClaim stranger-gpu is not reserved for the pod",
        f"pod {key('unmade')} on n1: claim gpu: none made",
    ]


# ------------------------------------------------------------------------------- topology domains

RACK = "topology.kubernetes.io/rack"


def _racked(h: History, name: str, rack: str | None) -> None:
    node = builders.node(name)
    if rack is not None:
        node.metadata.labels[RACK] = rack
    h.put(NODE.key("", name), node)


def _rack_gang(h: History, name: str, min_count: int) -> None:
    group = make_pod_group(name, min_count, False)
    group.spec.scheduling_constraints.topology.add(key=RACK)
    h.put(POD_GROUP.key("default", name), group)


def _racks(h: History) -> None:
    _racked(h, "a1", "r1")
    _racked(h, "a2", "r1")
    _racked(h, "b1", "r2")
    _racked(h, "bare", None)


def test_domains_hold_when_a_rack_gang_is_bound_inside_one_rack() -> None:
    h = History()
    _racks(h)
    _rack_gang(h, "train", 2)
    with h.transaction():
        h.member("w-0", "train", "a1")
        h.member("w-1", "train", "a2")
    h.pod_group("loose", 2)  # no constraint: may span racks
    with h.transaction():
        h.member("l-0", "loose", "a1")
        h.member("l-1", "loose", "b1")
    assert history.check_gangs_in_one_domain(h.events) == []


def test_domains_report_a_rack_gang_bound_across_racks_once() -> None:
    h = History()
    _racks(h)
    _rack_gang(h, "train", 2)
    with h.transaction():
        h.member("w-0", "train", "a1")
        split = h.member("w-1", "train", "b1")
    h.member("w-1", "train", "b1")  # still split: reported once
    assert history.check_gangs_in_one_domain(h.events) == [
        f"revision {split}: group default/train is bound across domains of {RACK}: w-0 on a1 ({RACK}=r1), "
        f"w-1 on b1 ({RACK}=r2)"
    ]


def test_domains_report_a_rack_gang_on_a_node_without_the_label() -> None:
    h = History()
    _racks(h)
    _rack_gang(h, "train", 1)
    bound = h.member("w-0", "train", "bare")
    assert history.check_gangs_in_one_domain(h.events) == [
        f"revision {bound}: group default/train is bound across domains of {RACK}: w-0 on bare "
        f"({RACK}=(none))"
    ]


def test_domains_forget_pods_that_are_gone() -> None:
    h = History()
    _racks(h)
    _rack_gang(h, "train", 1)
    h.member("w-0", "train", "a1")
    h.delete(key("w-0"), make_member("w-0", "train", "a1"))
    h.member("w-1", "train", "b1")  # the group's only bound pod now: one rack
    assert history.check_gangs_in_one_domain(h.events) == []
