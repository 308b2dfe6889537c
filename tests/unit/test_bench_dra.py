"""The bench's DRA workloads build scheduler_perf's DRA objects, and the checks find every claim that holds
a device another claim holds, or that is not allocated, reserved and placed on its pod's node."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from cluster.bench import workloads as w
from cluster.bench.checks import Placements, check
from cluster.bench.topology import bring_up

DRA = ("SchedulingWithResourceClaimTemplate", "SchedulingWithMultipleResourceClaims")


def test_the_dra_workloads_have_scheduler_perfs_sizes_and_threshold() -> None:
    template = w.WORKLOADS["SchedulingWithResourceClaimTemplate"]
    multiple = w.WORKLOADS["SchedulingWithMultipleResourceClaims"]

    assert (template.full, template.small, template.threshold) == (
        w.Scale(500, 2500, 2500), w.Scale(500, 2500, 2500), 56)
    assert [(d.name, d.devices_per_node) for d in template.drivers] == [(w.TEST_DRIVER, 10)]
    assert (multiple.full, multiple.threshold) == (w.Scale(500, 2500, 2500), None)
    assert [(d.name, d.devices_per_node) for d in multiple.drivers] == [
        (w.TEST_DRIVER, 20), (w.ANOTHER_TEST_DRIVER, 20)]


@pytest.mark.parametrize("name", DRA)
@pytest.mark.parametrize("scale", w.SCALES)
def test_the_pods_use_up_every_device_of_every_driver(name: str, scale: str) -> None:
    workload = w.WORKLOADS[name]
    size = workload.scale(scale)
    pod = workload.measured_template("p", "ns")
    templates = {t("ns").metadata.name: t("ns") for t in workload.claim_templates}
    drivers = {c.metadata.name: c.spec.selectors[0].cel.expression.split('"')[1]
               for c in workload.device_classes}
    # Each of a pod's claims asks for one device of its template's class, whose selector names a driver.
    claims_per_driver = {driver.name: 0 for driver in workload.drivers}
    for pod_claim in pod.spec.resource_claims:
        request = templates[pod_claim.resource_claim_template_name].spec.spec.devices.requests[0]
        assert request.exactly.device_class_name in drivers
        claims_per_driver[drivers[request.exactly.device_class_name]] += 1

    for driver in workload.drivers:
        assert driver.devices_per_node * size.nodes == claims_per_driver[driver.name] * (
            size.init_pods + size.measured_pods), (name, scale, driver.name)


@pytest.mark.parametrize("name", DRA)
def test_a_dra_pod_uses_every_claim_it_declares_from_the_workloads_templates(name: str) -> None:
    workload = w.WORKLOADS[name]
    pod = workload.measured_template("m0", "sched-1")
    declared = [c.name for c in pod.spec.resource_claims]

    assert [c.name for c in pod.spec.containers[0].resources.claims] == declared
    assert {c.resource_claim_template_name for c in pod.spec.resource_claims} == {
        t("sched-1").metadata.name for t in workload.claim_templates}
    assert not pod.spec.containers[0].resources.requests
    assert workload.controllers == (w.RESOURCE_CLAIM_CONTROLLER,)
    assert w.WORKLOADS["SchedulingBasic"].controllers == ()


@pytest.mark.parametrize("scale", w.SCALES)
def test_pods_share_claims_five_to_one_and_the_claims_fill_every_device(scale: str) -> None:
    workload = w.WORKLOADS["SchedulingWithResourceClaim"]
    size = workload.scale(scale)
    init_claims = workload.shared_claims(w.INIT_NAMESPACE, size.init_pods)
    measured_claims = workload.shared_claims(w.MEASURED_NAMESPACE, size.measured_pods)
    pods = workload.pods(workload.measured_template, w.MEASURED, w.MEASURED_NAMESPACE, size.measured_pods)

    assert (len(init_claims), len(measured_claims)) == (size.init_pods // 5, size.measured_pods // 5)
    assert [d.devices_per_node for d in workload.drivers] == [2]
    assert 2 * size.nodes == len(init_claims) + len(measured_claims)
    # Pod i uses claim i // 5 of its namespace: each claim is used by five pods, and by nothing else.
    assert [p.spec.resource_claims[0].resource_claim_name for p in pods[:7]] == [
        "test-claim-0"] * 5 + ["test-claim-1"] * 2
    used = {p.spec.resource_claims[0].resource_claim_name for p in pods}
    assert used == {c.metadata.name for c in measured_claims}
    assert not any(c.HasField("resource_claim_template_name") for p in pods for c in p.spec.resource_claims)
    claim = measured_claims[0]
    assert claim.metadata.namespace == w.MEASURED_NAMESPACE
    assert [(r.name, r.exactly.device_class_name) for r in claim.spec.devices.requests] == [
        ("req-0", w.TEST_CLASS)]
    # The claims exist before the pods: no claim is made from a template, so no controller runs.
    assert workload.controllers == () and not workload.claim_templates and workload.uses_claims


STEADY = [f"SteadyStateClusterResourceClaimTemplate/{fill}" for fill in w.FILLS]


@pytest.mark.parametrize(("scale", "allocated"), [("full", (0, 2500, 4990)), ("small", (0, 2500, 4990)),
                                                  ("tiny", (0, 625, 1240))])
def test_the_steady_workloads_hold_upstreams_share_of_the_devices_at_every_scale(
    scale: str, allocated: tuple[int, int, int]
) -> None:
    for name, claims in zip(STEADY, allocated, strict=True):
        workload = w.WORKLOADS[name]
        size = workload.scale(scale)
        assert workload.steady_state is not None
        assert (workload.steady_state.batch, workload.steady_state.duration_s) == (10, 10.0)
        assert workload.allocated_claims(size) == claims, name
        assert (size.init_pods, size.measured_pods) == (0, 0)
    # full: exactly one batch of devices left for the pods.
    full = w.WORKLOADS[STEADY[-1]]
    size = full.scale(scale)
    assert size.nodes * full.drivers[0].devices_per_node - full.allocated_claims(size) == 10


def test_the_steady_workloads_pods_take_their_claims_from_the_template() -> None:
    workload = w.WORKLOADS["SteadyStateClusterResourceClaimTemplate/half"]
    pods = workload.pods(workload.measured_template, w.MEASURED, w.MEASURED_NAMESPACE, 3, start=20)

    assert [p.metadata.name for p in pods] == ["measured-00020", "measured-00021", "measured-00022"]
    assert {c.resource_claim_template_name for p in pods for c in p.spec.resource_claims} == {
        w.TEST_CLAIM_TEMPLATE}
    assert all(p.metadata.labels[w.ROLE_LABEL] == w.MEASURED for p in pods)
    assert workload.controllers == (w.RESOURCE_CLAIM_CONTROLLER,)
    assert workload.plan(workload.scale("tiny")) == (
        "125 nodes, 625 claims allocated without pods, pods in batches of 10 for 10s")
    assert w.WORKLOADS["SchedulingBasic"].plan(w.Scale(5, 1, 2)) == "5 nodes, 1 initial pods, 2 measured"


def test_an_unknown_fill_is_refused_naming_the_fills() -> None:
    with pytest.raises(ValueError, match="unknown fill 'most': use one of empty, half, full"):
        w.SteadyState("most")


def test_the_test_drivers_slice_publishes_its_devices_for_one_node() -> None:
    driver = w.WORKLOADS["SchedulingWithResourceClaimTemplate"].drivers[0]
    node = w.WORKLOADS["SchedulingWithResourceClaimTemplate"].node(3)
    slice_ = driver.slice(node.metadata.name)

    assert slice_.metadata.name == f"{node.metadata.name}-{w.TEST_DRIVER}"
    assert (slice_.spec.driver, slice_.spec.node_name, slice_.spec.pool.name) == (
        w.TEST_DRIVER, node.metadata.name, node.metadata.name)
    assert slice_.spec.pool.resource_slice_count == 1
    assert [d.name for d in slice_.spec.devices] == [f"instance-{i}" for i in range(10)]
    device = slice_.spec.devices[7]
    assert device.attributes["model"].string_value == "A100"
    assert device.attributes["driverVersion"].version_value == "1.2.3"
    assert device.attributes["dra.example.com/numa"].int_value == 7
    assert device.capacity["memory"].value == "1Gi"


def test_the_test_class_selects_the_test_drivers_devices() -> None:
    [test_class] = w.WORKLOADS["SchedulingWithResourceClaimTemplate"].device_classes

    assert test_class.metadata.name == w.TEST_CLASS
    assert [s.cel.expression for s in test_class.spec.selectors] == [f'device.driver == "{w.TEST_DRIVER}"']


def test_an_unknown_controller_is_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="unknown controller 'nosuch'"):
        bring_up("inproc", "sqlite", controllers=("nosuch",))


# -- the checks --------------------------------------------------------------------------------------

WORKLOAD = w.WORKLOADS["SchedulingWithResourceClaimTemplate"]


def _nodes(count: int = 2) -> list[objects_pb2.Node]:
    return [WORKLOAD.node(i) for i in range(count)]


def _slices(nodes: list[objects_pb2.Node]) -> list[objects_pb2.ResourceSlice]:
    return [WORKLOAD.drivers[0].slice(node.metadata.name) for node in nodes]


def placed_pod(name: str, node: objects_pb2.Node) -> objects_pb2.Pod:
    """A DRA pod bound to ``node`` whose claim the controller made as ``<name>-resource``."""
    pod = w.pod_with_claim_template(name, w.MEASURED_NAMESPACE)
    pod.metadata.uid = f"uid-{name}"
    pod.metadata.labels[w.ROLE_LABEL] = w.MEASURED
    pod.spec.node_name = node.metadata.name
    pod.status.resource_claim_statuses.add(name="resource", resource_claim_name=f"{name}-resource")
    return pod


def _claim(pod: objects_pb2.Pod, node: str, *devices: str, share_id: str = "") -> objects_pb2.ResourceClaim:
    """The pod's claim, allocated ``devices`` of ``node``'s pool and reserved for the pod."""
    claim = objects_pb2.ResourceClaim()
    claim.metadata.name = f"{pod.metadata.name}-resource"
    claim.metadata.namespace = pod.metadata.namespace
    allocation = claim.status.allocation
    for device in devices:
        result = allocation.devices.results.add(
            request="req-0", driver=w.TEST_DRIVER, pool=node, device=device)
        if share_id:
            result.share_id = share_id
    term = allocation.node_selector.node_selector_terms.add()
    term.match_fields.add(key="metadata.name", operator="In", values=[node])
    claim.status.reserved_for.add(resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)
    return claim


def _check(nodes: list[objects_pb2.Node], pods: list[objects_pb2.Pod],
           claims: list[objects_pb2.ResourceClaim],
           slices: list[objects_pb2.ResourceSlice] | None = None) -> list[str]:
    names = {pod.metadata.name for pod in pods}
    return check(Placements(nodes, pods, {w.MEASURED: names}, names, resource_claims=claims,
                            resource_slices=_slices(nodes) if slices is None else slices))


def test_claims_on_distinct_devices_of_their_pods_nodes_pass() -> None:
    nodes = _nodes()
    pods = [placed_pod("m0", nodes[0]), placed_pod("m1", nodes[0]), placed_pod("m2", nodes[1])]
    pool0, pool1 = nodes[0].metadata.name, nodes[1].metadata.name
    claims = [_claim(pods[0], pool0, "instance-0"), _claim(pods[1], pool0, "instance-1"),
              _claim(pods[2], pool1, "instance-0")]

    assert _check(nodes, pods, claims) == []


def test_a_device_in_two_allocations_is_reported() -> None:
    nodes = _nodes(1)
    pods = [placed_pod("m0", nodes[0]), placed_pod("m1", nodes[0])]
    pool = nodes[0].metadata.name
    claims = [_claim(pods[0], pool, "instance-3"), _claim(pods[1], pool, "instance-3")]

    assert _check(nodes, pods, claims) == [
        f"devices allocated once: device {w.TEST_DRIVER}/{pool}/instance-3 allocated 2 times: "
        "sched-1/m0-resource, sched-1/m1-resource"]


def test_a_device_twice_in_one_allocation_is_reported() -> None:
    nodes = _nodes(1)
    pod = placed_pod("m0", nodes[0])
    pool = nodes[0].metadata.name

    assert _check(nodes, [pod], [_claim(pod, pool, "instance-1", "instance-1")]) == [
        f"devices allocated once: device {w.TEST_DRIVER}/{pool}/instance-1 allocated 2 times: "
        "sched-1/m0-resource, sched-1/m0-resource"]


def test_a_device_allowing_multiple_allocations_is_shared_under_distinct_share_ids() -> None:
    nodes = _nodes(1)
    pods = [placed_pod("m0", nodes[0]), placed_pod("m1", nodes[0])]
    pool = nodes[0].metadata.name
    slices = _slices(nodes)
    slices[0].spec.devices[0].allow_multiple_allocations = True

    distinct = [_claim(pod, pool, "instance-0", share_id=share)
                for pod, share in zip(pods, "ab", strict=True)]
    same = [_claim(pod, pool, "instance-0", share_id="a") for pod in pods]

    assert _check(nodes, pods, distinct, slices) == []
    assert _check(nodes, pods, same, slices) == [
        f"devices allocated once: device {w.TEST_DRIVER}/{pool}/instance-0, which allows multiple "
        "allocations, has shareID 'a' 2 times: sched-1/m0-resource, sched-1/m1-resource"]


def test_an_admin_access_allocation_takes_no_device() -> None:
    nodes = _nodes(1)
    pods = [placed_pod("m0", nodes[0]), placed_pod("m1", nodes[0])]
    pool = nodes[0].metadata.name
    claims = [_claim(pods[0], pool, "instance-0"), _claim(pods[1], pool, "instance-0")]
    claims[1].status.allocation.devices.results[0].admin_access = True

    assert _check(nodes, pods, claims) == []


def test_a_device_no_slice_publishes_is_reported() -> None:
    nodes = _nodes(1)
    pod = placed_pod("m0", nodes[0])

    problems = _check(nodes, [pod], [_claim(pod, nodes[0].metadata.name, "instance-99")])

    assert problems == [f"devices allocated once: claim sched-1/m0-resource: device {w.TEST_DRIVER}/"
                        f"{nodes[0].metadata.name}/instance-99 is published by no ResourceSlice"]


def test_a_claim_allocated_on_another_node_is_reported() -> None:
    nodes = _nodes()
    pod = placed_pod("m0", nodes[0])
    where = f"pod sched-1/m0 on {nodes[0].metadata.name}"

    problems = _check(nodes, [pod], [_claim(pod, nodes[1].metadata.name, "instance-0")])

    assert problems == [
        f"claims on the pods node: {where}: claim m0-resource is allocated for other nodes",
        f"claims on the pods node: {where}: claim m0-resource holds device "
        f"{w.TEST_DRIVER}/{nodes[1].metadata.name}/instance-0, not published for its node",
    ]


def test_a_placed_pods_claim_not_made_not_allocated_or_not_reserved_is_reported() -> None:
    nodes = _nodes(1)
    pool = nodes[0].metadata.name
    unmade, missing, unallocated, unreserved = (placed_pod(f"m{i}", nodes[0]) for i in range(4))
    del unmade.status.resource_claim_statuses[:]
    pending = _claim(unallocated, pool, "instance-0")
    pending.status.ClearField("allocation")
    stranger = _claim(unreserved, pool, "instance-1")
    stranger.status.reserved_for[0].uid = "someone-else"

    problems = _check(nodes, [unmade, missing, unallocated, unreserved], [pending, stranger])

    where = f"on {pool}"
    assert problems == [
        f"claims on the pods node: pod sched-1/m0 {where}: claim resource: no ResourceClaim made",
        f"claims on the pods node: pod sched-1/m1 {where}: claim resource: ResourceClaim m1-resource does "
        "not exist",
        f"claims on the pods node: pod sched-1/m2 {where}: claim m2-resource is not allocated",
        f"claims on the pods node: pod sched-1/m3 {where}: claim m3-resource is not reserved for it",
    ]


def test_a_claim_named_by_the_pod_is_checked_too() -> None:
    nodes = _nodes()
    pod = placed_pod("m0", nodes[0])
    del pod.status.resource_claim_statuses[:]
    pod.spec.resource_claims[0].ClearField("resource_claim_template_name")
    pod.spec.resource_claims[0].resource_claim_name = "m0-resource"

    assert _check(nodes, [pod], [_claim(pod, nodes[0].metadata.name, "instance-0")]) == []
    assert _check(nodes, [pod], [_claim(pod, nodes[1].metadata.name, "instance-0")])
