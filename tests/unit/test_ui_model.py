"""The web view's model (cluster/ui/model.py): the contract's objects built from API objects, kept
current one change at a time, and the deltas a browser gets after its snapshot."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from cluster.api import objects_pb2
from cluster.client import LeaderChange
from cluster.ui.details import pod_details
from cluster.ui.model import EVENTS_KEPT, ViewModel
from scheduler.framework.explanation import EXPLANATION_ANNOTATION, Explanation, ReasonGroup
from tests import builders
from tests.builders import container, node, pod

GI = 1 << 30
MI = 1 << 20


def _model() -> ViewModel:
    return ViewModel("127.0.0.1:7443")


def _rv(obj, version: int):
    obj.metadata.resource_version = str(version)
    return obj


def _event(name: str, reason: str, *, seconds: int, version: int, kind: str = "Pod", about: str = "web-1",
           annotations: dict[str, str] | None = None, message: str = "") -> objects_pb2.Event:
    return builders.event(name, about={"kind": kind, "namespace": "default", "name": about}, reason=reason,
                          message=message or reason, count=1, component="default-scheduler",
                          last_seen=seconds, resource_version=str(version), annotations=annotations)


def test_node_sums_its_pods_requests_as_the_scheduler_counts_them():
    model = _model()
    model.on_node(_rv(node("n1", cpu="8", memory="32Gi", pods="110", allocatable={"nvidia.com/gpu": "4"},
                           ready="True"), 3))
    model.on_pod(_rv(pod("web-1", node_name="n1", cpu="500m", memory="256Mi", phase="Running"), 4))
    # A sidecar runs beside the app container; a classic init container only before it; overhead on top.
    sidecar = {**container({"cpu": "250m"}, name="proxy"), "restartPolicy": "Always"}
    init = container({"cpu": "2", "memory": "1Gi"}, name="setup")
    model.on_pod(_rv(pod("web-2", node_name="n1", spec={
        "initContainers": [init, sidecar],
        "containers": [container({"cpu": "1", "memory": "512Mi", "nvidia.com/gpu": "1"})],
        "overhead": {"cpu": "100m"},
    }), 5))
    # A finished pod holds nothing; a pending one is nowhere yet.
    model.on_pod(_rv(pod("done", node_name="n1", cpu="4", phase="Succeeded"), 6))
    model.on_pod(_rv(pod("waiting", cpu="1"), 7))

    state = model.state()
    n1 = state["nodes"]["n1"]
    assert n1["allocatable"] == {"cpu": 8000, "memory": 32 * GI, "pods": 110, "nvidia.com/gpu": 4}
    # web-2: max(init 2000m + nothing, app 1000m + sidecar 250m) + overhead 100m = 2100m.
    assert n1["requested"] == {"cpu": 500 + 2100, "memory": 256 * MI + GI, "nvidia.com/gpu": 1, "pods": 2}
    assert n1["pods"] == ["default/web-1", "default/web-2"]
    assert (n1["ready"], n1["readiness"]) == (True, "Ready")
    assert state["pods"]["default/web-2"]["requests"] == {"cpu": 2100, "memory": GI, "nvidia.com/gpu": 1}
    assert state["revision"] == 7
    assert state["summary"] == {
        "nodes": 1, "readyNodes": 1, "pods": 4, "bound": 3, "pending": 1, "preemptions": 0,
        "allocatable": n1["allocatable"], "requested": n1["requested"],
    }
    json.dumps(state)  # all of it is JSON


def test_readiness_is_what_get_nodes_says():
    model = _model()
    model.on_node(node("ready", cpu="1", ready="True"))
    model.on_node(node("not-ready", cpu="1", ready="False"))
    model.on_node(node("bare", cpu="1"))
    nodes = model.state()["nodes"]
    assert {name: (view["ready"], view["readiness"]) for name, view in nodes.items()} == {
        "ready": (True, "Ready"), "not-ready": (False, "NotReady"), "bare": (False, "Unknown"),
    }
    assert model.state()["summary"]["readyNodes"] == 1


def test_pending_pod_carries_the_unschedulable_condition():
    model = _model()
    message = "0/3 nodes are available: 3 Insufficient cpu."
    model.on_pod(pod("big", cpu="64", priority=1000, priority_class="high", labels={
        "scheduling.x-k8s.io/pod-group": "train"}, status={"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}))
    view = model.state()["pods"]["default/big"]
    assert view == {
        "key": "default/big", "namespace": "default", "name": "big", "node": "", "phase": "",
        "priority": 1000, "priorityClassName": "high", "requests": {"cpu": 64000}, "pending": True,
        "reason": "Unschedulable", "message": message, "nominatedNode": "", "podGroup": "default/train",
        "terminating": False,
    }


def test_a_pod_change_is_a_delta_of_that_pod_and_its_nodes_only():
    model = _model()
    for i in range(100):
        model.on_node(node(f"n{i}", cpu="4"))
    model.on_pod(pod("web", cpu="1"))
    assert model.take_delta() is not None  # what came before the first snapshot
    assert model.take_delta() is None  # nothing since

    model.on_pod(pod("web", cpu="1", node_name="n7"))
    delta = model.take_delta()
    assert delta is not None
    assert set(delta) == {"revision", "nodes", "pods", "summary"}
    assert list(delta["pods"]["upsert"]) == ["default/web"]
    assert delta["nodes"] == {"upsert": {"n7": model.node("n7")}, "remove": []}
    assert delta["nodes"]["upsert"]["n7"]["requested"] == {"cpu": 1000, "pods": 1}
    assert delta["summary"]["bound"] == 1 and delta["summary"]["pending"] == 0

    # Moved (deleted and re-created elsewhere): both nodes are upserted whole.
    model.on_pod(pod("web", cpu="1", node_name="n8"))
    delta = model.take_delta()
    assert delta is not None
    assert sorted(delta["nodes"]["upsert"]) == ["n7", "n8"]
    assert delta["nodes"]["upsert"]["n7"]["requested"] == {} and delta["nodes"]["upsert"]["n7"]["pods"] == []

    model.on_pod_deleted(pod("web", cpu="1", node_name="n8"))
    model.on_node_deleted(node("n9"))
    delta = model.take_delta()
    assert delta is not None
    assert delta["pods"] == {"upsert": {}, "remove": ["default/web"]}
    assert delta["nodes"]["remove"] == ["n9"] and list(delta["nodes"]["upsert"]) == ["n8"]
    assert delta["summary"]["nodes"] == 99 and delta["summary"]["pods"] == 0
    assert delta["summary"]["requested"] == {}


def test_events_keep_the_newest_and_deltas_carry_only_new_ones():
    model = _model()
    for i in range(EVENTS_KEPT + 50):
        model.on_event(_event(f"e{i}", "Scheduled", seconds=1_000 + i, version=10 + i))
    events = model.state()["events"]
    assert len(events) == EVENTS_KEPT
    assert events[0]["key"] == "default/e50" and events[-1]["key"] == f"default/e{EVENTS_KEPT + 49}"
    assert events[-1]["time"] == datetime.fromtimestamp(1_000 + EVENTS_KEPT + 49, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    model.take_delta()

    model.on_event(_event("victim", "Preempted", seconds=5_000, version=900, about="low"))
    model.on_event(_event("older", "Scheduled", seconds=4_000, version=901))
    delta = model.take_delta()
    assert delta is not None
    assert [e["key"] for e in delta["events"]] == ["default/older", "default/victim"]
    assert delta["events"][1]["object"] == "Pod default/low"
    assert delta["summary"]["preemptions"] == 1
    # A repeat counted on the same event is not a second preemption.
    repeat = _event("victim", "Preempted", seconds=5_001, version=902, about="low")
    repeat.count = 2
    model.on_event(repeat, new=False)
    delta = model.take_delta()
    assert delta is not None
    assert [(e["key"], e["count"]) for e in delta["events"]] == [("default/victim", 2)]
    assert delta["summary"]["preemptions"] == 1
    assert len(model.events()) == EVENTS_KEPT


def test_pod_groups_count_their_members_and_show_their_phase():
    model = _model()
    upstream = objects_pb2.PodGroup(
        api_version="scheduling.k8s.io/v1alpha3",
        metadata=objects_pb2.ObjectMeta(name="train", namespace="default"),
    )
    upstream.spec.scheduling_policy.gang.min_count = 3
    upstream.status.conditions.add(type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable",
                                   message="2/3 pods placeable, minCount 3")
    model.on_pod_group(upstream)
    labels = {"scheduling.x-k8s.io/pod-group": "train"}
    model.on_pod(pod("w-0", labels=labels, node_name="n1", phase="Running"))
    model.on_pod(pod("w-1", labels=labels, node_name="n1"))
    model.on_pod(pod("w-2", labels=labels))
    assert model.state()["podGroups"]["default/train"] == {
        "key": "default/train", "apiVersion": "scheduling.k8s.io/v1alpha3", "minCount": 3, "members": 3,
        "scheduled": 2, "running": 1, "phase": "Unschedulable", "message": "2/3 pods placeable, minCount 3",
        "scheduledCondition": "False",
    }
    model.take_delta()
    model.on_pod_deleted(pod("w-2", labels=labels))
    delta = model.take_delta()
    assert delta is not None and delta["podGroups"]["upsert"]["default/train"]["members"] == 2

    coscheduling = objects_pb2.PodGroup(
        api_version="scheduling.x-k8s.io/v1alpha1", metadata=objects_pb2.ObjectMeta(name="g", namespace="ml"),
    )
    coscheduling.spec.min_member = 2
    coscheduling.status.phase = "Scheduling"
    model.on_pod_group(coscheduling)
    model.on_pod_group_deleted(upstream)
    delta = model.take_delta()
    assert delta is not None
    assert delta["podGroups"]["remove"] == ["default/train"]
    assert delta["podGroups"]["upsert"]["ml/g"]["phase"] == "Scheduling"
    assert delta["podGroups"]["upsert"]["ml/g"]["minCount"] == 2
    assert delta["podGroups"]["upsert"]["ml/g"]["scheduledCondition"] == ""


def test_a_bound_groups_message_is_told_apart_from_a_failures():
    model = _model()
    group = objects_pb2.PodGroup(metadata=objects_pb2.ObjectMeta(name="train", namespace="default"))
    group.spec.scheduling_policy.gang.min_count = 3
    group.status.conditions.add(type="PodGroupInitiallyScheduled", status="True", reason="Scheduled",
                                message="bound 3 pods of the group")
    model.on_pod_group(group)
    view = model.state()["podGroups"]["default/train"]
    assert (view["scheduledCondition"], view["message"]) == ("True", "bound 3 pods of the group")


def test_pdbs_show_their_budget():
    model = _model()
    pdb = objects_pb2.PodDisruptionBudget(
        metadata=objects_pb2.ObjectMeta(name="web-pdb", namespace="default"))
    pdb.spec.min_available.number_value = 2
    pdb.status.current_healthy, pdb.status.desired_healthy = 3, 2
    pdb.status.expected_pods, pdb.status.disruptions_allowed = 3, 1
    model.on_pdb(pdb)
    assert model.state()["pdbs"] == {"default/web-pdb": {
        "key": "default/web-pdb", "minAvailable": "2", "maxUnavailable": None, "currentHealthy": 3,
        "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": 1,
    }}
    model.take_delta()
    model.on_pdb_deleted(pdb)
    delta = model.take_delta()
    assert delta is not None and delta["pdbs"] == {"upsert": {}, "remove": ["default/web-pdb"]}


def _lease(holder: str, version: int, token: int | None = None) -> objects_pb2.Lease:
    # Renewed 1.5 s before the changes of holder are seen (_change's seen_wall).
    renewed = datetime(2026, 11, 27, 5, 1, 0, 500_000, tzinfo=UTC)
    return builders.lease(holder=holder, duration=15, transitions=1, renewed=renewed, token=token,
                          resource_version=str(version))


def _change(holder: str, previous: str, token: int, leaderless: float | None) -> LeaderChange:
    return LeaderChange(holder=holder, token=token, revision=token, lease_transitions=1, seen_at=0.0,
                        seen_wall=datetime(2026, 11, 27, 5, 1, 2, tzinfo=UTC), previous=previous,
                        leaderless_s=leaderless)


def test_leadership_shows_the_holder_its_token_and_the_changes():
    model = _model()
    # LeadershipWatch reports a change of holder before the Lease that carries it.
    model.on_leader_change(_change("host_1_a", "", 40, 0.5))
    model.on_lease(_lease("host_1_a", 40))
    model.take_delta()
    model.on_leader_change(_change("host_2_b", "host_1_a", 57, 2.7))
    model.on_lease(_lease("host_2_b", 57, token=57))
    delta = model.take_delta()
    assert delta is not None
    leadership = delta["leadership"]
    assert leadership["lease"] == "kube-system/kube-scheduler"
    assert (leadership["holder"], leadership["token"]) == ("host_2_b", 57)
    assert leadership["renewTime"] == "2026-11-27T05:01:00Z"
    assert leadership["leaseDurationSeconds"] == 15
    assert leadership["timeline"][-1] == {"holder": "host_2_b", "previous": "host_1_a", "token": 57,
                                          "at": "2026-11-27T05:01:02Z", "leaderlessSeconds": 2.7,
                                          "sinceLastRenewalSeconds": 1.5}
    # The first holder seen led before the watch began: how long nobody led before it is unknown.
    assert leadership["timeline"][0]["leaderlessSeconds"] is None
    # Without LeaseCandidates the holder is the only replica known; the one before it is not.
    assert leadership["replicas"] == ["host_2_b"] and leadership["candidates"] == []
    # A renewal alone changes the leadership object (renewTime), nothing else.
    model.on_lease(_lease("host_2_b", 60, token=57))
    delta = model.take_delta()
    assert delta is not None and set(delta) == {"revision", "leadership", "summary"}
    model.on_lease(None)
    assert model.leadership()["holder"] == "" and model.leadership()["token"] == 0


def _candidate(name: str, version: int, renewed: datetime, lease_name: str = "kube-scheduler",
               namespace: str = "kube-system") -> objects_pb2.LeaseCandidate:
    return builders.lease_candidate(name, namespace, lease_name=lease_name, binary_version="0.1.0",
                                    strategy="OldestEmulationVersion", renewed=renewed,
                                    resource_version=str(version))


def test_replicas_are_the_live_candidates_and_the_holder_and_a_stale_one_is_marked_by_the_clock():
    now = [datetime(2026, 11, 27, 5, 1, 10, tzinfo=UTC)]
    model = ViewModel("127.0.0.1:7443", now=lambda: now[0])
    model.on_lease(_lease("host_1_a", 40))  # leaseDurationSeconds 15: live for 31 s after a renewal
    renewed = datetime(2026, 11, 27, 5, 1, 0, tzinfo=UTC)
    model.on_lease_candidate(_candidate("host_1_a", 41, renewed))
    model.on_lease_candidate(_candidate("host_2_b", 42, renewed))
    model.on_lease_candidate(_candidate("host_3_c", 43, datetime(2026, 11, 27, 5, 0, 29, tzinfo=UTC)))
    model.on_lease_candidate(_candidate("other", 44, renewed, lease_name="kube-controller-manager"))
    model.on_lease_candidate(_candidate("elsewhere", 45, renewed, namespace="default"))
    delta = model.take_delta()
    assert delta is not None
    leadership = delta["leadership"]
    assert leadership["candidates"] == [
        {"name": "host_1_a", "identity": "host_1_a", "renewTime": "2026-11-27T05:01:00Z", "live": True,
         "renewing": True},
        {"name": "host_2_b", "identity": "host_2_b", "renewTime": "2026-11-27T05:01:00Z", "live": True,
         "renewing": True},
        {"name": "host_3_c", "identity": "host_3_c", "renewTime": "2026-11-27T05:00:29Z", "live": False,
         "renewing": False},
    ]
    assert leadership["replicas"] == ["host_1_a", "host_2_b"]
    assert model.revision == 43  # the other leases' candidates are not this view's

    # Nothing is written while host_2_b is gone: the clock alone makes it stale, once.
    assert not model.mark_stale_candidates()
    now[0] = datetime(2026, 11, 27, 5, 1, 31, tzinfo=UTC)
    assert not model.mark_stale_candidates()
    assert model.take_delta() is None
    model.on_lease_candidate(_candidate("host_1_a", 46, datetime(2026, 11, 27, 5, 1, 30, tzinfo=UTC)))
    model.take_delta()
    now[0] = datetime(2026, 11, 27, 5, 1, 32, tzinfo=UTC)
    assert model.mark_stale_candidates()
    delta = model.take_delta()
    assert delta is not None
    assert [c["live"] for c in delta["leadership"]["candidates"]] == [True, False, False]
    assert delta["leadership"]["replicas"] == ["host_1_a"]
    assert not model.mark_stale_candidates()

    # A holder without a candidate is still a replica; a deleted candidate is gone.
    model.on_lease(_lease("host_9_z", 47))
    model.on_lease_candidate_deleted(_candidate("host_3_c", 48, renewed))
    leadership = model.leadership()
    assert [c["name"] for c in leadership["candidates"]] == ["host_1_a", "host_2_b"]
    assert leadership["replicas"] == ["host_1_a", "host_9_z"]


def test_pod_details_carry_the_explanation_describe_shows():
    model = _model()
    subject = pod("web-1", labels={"app": "web"}, spec={
        "containers": [{"name": "c", "image": "nginx", "resources": {
            "requests": {"cpu": "1"}, "limits": {"memory": "1Gi"}}}],
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "nodeSelector": {"disk": "ssd"},
    })
    model.on_pod(subject)
    explanation = Explanation(num_all_nodes=3, evaluated_nodes=3, feasible_nodes=0, filtered=[
        ReasonGroup("NodeResourcesFit", "Insufficient cpu", "Unschedulable", 3, ("n1", "n2", "n3"))])
    events = [
        _event("a", "FailedScheduling", seconds=10, version=5,
               annotations={EXPLANATION_ANNOTATION: json.dumps({"v": 0})}),
        _event("b", "FailedScheduling", seconds=11, version=6,
               annotations={EXPLANATION_ANNOTATION: explanation.to_json()}),
    ]
    group_events = [_event("g", "FailedScheduling", seconds=12, version=7, kind="PodGroup", about="train",
                           message="2/3 pods placeable", annotations={EXPLANATION_ANNOTATION: json.dumps(
                               {"pods": {"w-1": {"node": "n3"}, "w-0": {"unschedulable": "0/3 nodes"}}})})]
    view = model.pod("default/web-1")
    assert view is not None
    details = pod_details(subject, view, reversed(events), group_events)
    assert details["pod"] == view
    assert details["explanation"] == explanation.render()
    assert "Insufficient cpu" in details["explanation"]
    assert details["groupAttempt"] == [{"pod": "w-0", "placement": "0/3 nodes"},
                                       {"pod": "w-1", "placement": "could go to n3"}]
    assert details["tolerations"] == ["dedicated=gpu:NoSchedule"]
    assert details["nodeSelector"] == {"disk": "ssd"} and details["labels"] == {"app": "web"}
    assert details["containers"] == [{"name": "c", "image": "nginx", "requests": {"cpu": 1000},
                                      "limits": {"memory": GI}}]
    assert [e["key"] for e in details["events"]] == ["default/a", "default/b"]
    json.dumps(details)

    unreadable = pod_details(subject, view, events[:1])
    assert unreadable["explanation"].startswith("<unreadable:")
    assert pod_details(subject, view, [])["explanation"] == ""


def test_the_api_server_reachability_is_news_only_when_it_changes():
    model = _model()
    assert model.state()["apiServer"] == {"reachable": True, "since": None, "error": ""}
    model.take_delta()
    at = datetime(2026, 11, 27, 5, 1, 2, tzinfo=UTC)
    assert model.on_api_server(False, "connection refused", at) is True
    delta = model.take_delta()
    assert delta is not None
    assert delta["apiServer"] == {
        "reachable": False, "since": "2026-11-27T05:01:02Z", "error": "connection refused",
    }
    assert model.on_api_server(False, "connection refused", at) is False
    assert model.take_delta() is None
    assert model.on_api_server(True, "", at) is True
    assert model.take_delta()["apiServer"]["reachable"] is True


def _renewed_lease(holder: str, version: int, renewed: datetime) -> objects_pb2.Lease:
    lease = _lease(holder, version)
    lease.spec.renew_time.FromDatetime(renewed)
    return lease


def test_a_holder_that_stops_renewing_is_marked_at_once_by_its_own_cadence():
    t0 = datetime(2026, 11, 27, 5, 1, 0, tzinfo=UTC)
    now = [t0]
    model = ViewModel("127.0.0.1:7443", now=lambda: now[0])
    model.on_lease(_renewed_lease("scheduler-1_pid10_a", 40, t0))
    model.on_lease(_renewed_lease("scheduler-1_pid10_a", 41, t0 + timedelta(seconds=2)))
    model.take_delta()
    assert model.leadership()["holderRenewing"] is True
    # It renews every 2 s: 2 x 2 s + 1 s without a renewal and it is late, long before its 15 s lease
    # expires; the clock alone says so, once.
    now[0] = t0 + timedelta(seconds=6.9)
    assert not model.mark_late_renewals()
    now[0] = t0 + timedelta(seconds=7.1)
    assert model.mark_late_renewals()
    delta = model.take_delta()
    assert delta is not None and delta["leadership"]["holderRenewing"] is False
    assert delta["leadership"]["holder"] == "scheduler-1_pid10_a"
    assert not model.mark_late_renewals()
    # A renewal puts it right; a new holder's cadence is not yet known: its lease duration bounds it.
    model.on_lease(_renewed_lease("scheduler-1_pid10_a", 42, now[0]))
    assert model.leadership()["holderRenewing"] is True
    model.on_lease(_renewed_lease("scheduler-2_pid11_b", 43, now[0]))
    now[0] += timedelta(seconds=14)
    assert model.leadership()["holderRenewing"] is True
    now[0] += timedelta(seconds=2)
    assert model.leadership()["holderRenewing"] is False


def test_a_standby_that_misses_its_renewal_is_not_renewing_before_it_is_stale():
    t0 = datetime(2026, 11, 27, 5, 1, 0, tzinfo=UTC)
    now = [t0]
    model = ViewModel("127.0.0.1:7443", now=lambda: now[0])
    model.on_lease(_renewed_lease("scheduler-1_pid10_a", 40, t0))  # candidates renew every 15 s
    model.on_lease_candidate(_candidate("scheduler-2_pid11_b", 41, t0))
    model.take_delta()
    now[0] = t0 + timedelta(seconds=17)
    model.on_lease(_renewed_lease("scheduler-1_pid10_a", 42, now[0]))  # the holder renews on
    model.take_delta()
    assert not model.mark_late_renewals()
    now[0] = t0 + timedelta(seconds=18)
    assert model.mark_late_renewals()
    delta = model.take_delta()
    assert delta is not None
    (standby,) = delta["leadership"]["candidates"]
    assert (standby["live"], standby["renewing"]) == (True, False)
    model.on_lease_candidate(_candidate("scheduler-2_pid11_b", 42, now[0]))
    assert model.leadership()["candidates"][0]["renewing"] is True


def _slice(name: str, node_name: str, *devices: tuple[str, bool], version: int) -> objects_pb2.ResourceSlice:
    published = objects_pb2.ResourceSlice(
        metadata=objects_pb2.ObjectMeta(name=name, resource_version=str(version)))
    published.spec.driver, published.spec.node_name = "gpu.example.com", node_name
    published.spec.pool.name = node_name
    for device, shared in devices:
        published.spec.devices.add(name=device, allow_multiple_allocations=shared)
    return published


def _claim(name: str, *holds: tuple[str, str, str | None], pods: tuple[str, ...] = (),
           version: int) -> objects_pb2.ResourceClaim:
    """A claim allocated ``holds`` (pool, device, shareID) and reserved for ``pods``."""
    claim = objects_pb2.ResourceClaim(metadata=objects_pb2.ObjectMeta(
        name=name, namespace="default", resource_version=str(version)))
    if holds:
        results = claim.status.allocation.devices.results
        for pool, device, share in holds:
            result = results.add(request="gpu", driver="gpu.example.com", pool=pool, device=device)
            if share is not None:
                result.share_id = share
    for pod_name in pods:
        claim.status.reserved_for.add(resource="pods", name=pod_name, uid=f"uid-{pod_name}")
    return claim


def test_devices_of_a_node_show_who_holds_them_and_changes_touch_only_their_node():
    model = _model()
    for name in ("n1", "n2"):
        model.on_node(_rv(node(name, cpu="8", memory="32Gi", pods="110", ready="True"), 1))
    model.on_resource_slice(_slice("n1-gpus", "n1", ("gpu-0", False), ("gpu-1", False), version=2))
    model.on_resource_slice(_slice("n2-gpus", "n2", ("gpu-0", True), version=3))
    # A claim reserved for its pod, a shared device with two consumers, an unallocated claim.
    model.on_resource_claim(_claim("train-gpu", ("n1", "gpu-1", None), pods=("train",), version=4))
    model.on_resource_claim(_claim("infer-a", ("n2", "gpu-0", "s1"), pods=("infer-a",), version=5))
    model.on_resource_claim(_claim("infer-b", ("n2", "gpu-0", "s2"), pods=("infer-b",), version=6))
    model.on_resource_claim(_claim("waiting", version=7))
    state = model.state()
    assert state["revision"] == 7
    assert state["nodes"]["n1"]["devices"] == [
        {"driver": "gpu.example.com", "pool": "n1", "name": "gpu-0", "shared": False, "holders": []},
        {"driver": "gpu.example.com", "pool": "n1", "name": "gpu-1", "shared": False, "holders": [
            {"claim": "default/train-gpu", "request": "gpu", "shareID": None, "pods": ["default/train"]}]},
    ]
    assert state["nodes"]["n2"]["devices"][0]["holders"] == [
        {"claim": "default/infer-a", "request": "gpu", "shareID": "s1", "pods": ["default/infer-a"]},
        {"claim": "default/infer-b", "request": "gpu", "shareID": "s2", "pods": ["default/infer-b"]},
    ]
    model.take_delta()

    # A consumer gone: only its device's node is upserted.
    model.on_resource_claim_deleted(_claim("infer-a", version=8))
    delta = model.take_delta()
    assert delta is not None and list(delta["nodes"]["upsert"]) == ["n2"]
    assert [holder["claim"] for holder in delta["nodes"]["upsert"]["n2"]["devices"][0]["holders"]] == [
        "default/infer-b"]
    # A claim changing nothing the view shows (not allocated before or after) touches no node.
    model.on_resource_claim(_claim("waiting", version=9))
    assert "nodes" not in (model.take_delta() or {})
    # A slice deleted takes its devices off its node.
    model.on_resource_slice_deleted(_slice("n1-gpus", "n1", version=10))
    delta = model.take_delta()
    assert delta is not None and delta["nodes"]["upsert"]["n1"]["devices"] == []
