"""Sidecar containers (init containers with restartPolicy Always) and what init containers hold: the
requests rule every reader shares (``cluster.api.containers``), the host ports NodePorts counts, the
fit filter, validation and `podsched describe`."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from cluster.api import containers, validation
from cluster.printers import pods as pod_printer
from cluster.printers.describe import DescribeText
from scheduler.framework import Code, CycleState, PodInfo, pod_non_zero_requests, pod_requests
from scheduler.framework.resource import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from scheduler.framework.types import pod_host_ports
from scheduler.plugins import nodeports
from scheduler.plugins.noderesources import fit
from tests.builders import container, node, node_info, pod
from tests.chaos.history import pod_need
from tests.unit.framework_fakes import Snapshot, fake_handle


def init(cpu: str | None = None, *, name: str, sidecar: bool = False, **extra: Any) -> dict[str, Any]:
    out = container({"cpu": cpu} if cpu else None, name=name, **extra)
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def with_inits(app_cpu: list[str], *inits: dict[str, Any], overhead: str = "") -> Any:
    spec: dict[str, Any] = {
        "containers": [container({"cpu": cpu}, name=f"app{i}") for i, cpu in enumerate(app_cpu)],
        "initContainers": list(inits),
    }
    if overhead:
        spec["overhead"] = {"cpu": overhead}
    return pod(spec=spec)


# component-helpers' resource helpers_test.go (TestPodResourceRequests, the restartable init container
# cases), in milli-CPU: app containers, init containers in order, expected pod request.
REQUEST_ROWS = [
    pytest.param(["1"], [init("1", name="r1", sidecar=True)], 2000, id="restartable-init-container"),
    pytest.param(
        ["1"], [init("1", name="r1", sidecar=True), init("2", name="r2", sidecar=True)], 4000,
        id="multiple-restartable-init-containers",
    ),
    pytest.param(
        ["1"],
        [init("5", name="i1"), init("1", name="r1", sidecar=True), init("2", name="r2", sidecar=True),
         init("5", name="i2")],
        8000, id="restartable-and-regular-init-containers",
    ),
    pytest.param(
        ["1"], [init("1", name="r1", sidecar=True), init("5", name="i1")], 6000,
        id="restartable-init-then-regular-init",
    ),
    pytest.param(["1", "1"], [init("5", name="i1")], 5000, id="regular-init-larger-than-app-containers"),
    pytest.param(["3"], [init("2", name="i1")], 3000, id="app-containers-larger-than-regular-init"),
    pytest.param(
        ["2"], [init("1", name="r1", sidecar=True), init("1", name="i1"), init("1", name="r2", sidecar=True)],
        4000, id="sidecars-add-to-the-steady-state",
    ),
]


@pytest.mark.parametrize(("app_cpu", "inits", "expected"), REQUEST_ROWS)
def test_pod_requests_follow_the_sidecar_rule(app_cpu: list[str], inits: list[Any], expected: int) -> None:
    subject = with_inits(app_cpu, *inits)
    assert pod_requests(subject).milli_cpu == expected
    # Every other reader of a pod's requests counts it the same way.
    assert containers.requests_and_limits(subject)[0]["cpu"] * 1000 == expected
    assert pod_need(subject)["cpu"] == expected
    assert pod_non_zero_requests(subject)[0] == expected


def test_overhead_comes_on_top_of_the_sidecar_rule() -> None:
    subject = with_inits(["1"], init("1", name="r1", sidecar=True), init("5", name="i1"), overhead="250m")
    assert pod_requests(subject).milli_cpu == 6250
    assert pod_need(subject)["cpu"] == 6250


def test_non_zero_requests_default_each_container_before_adding_them_up() -> None:
    # A sidecar with no requests counts as the scheduler's defaults, beside the app container's.
    subject = with_inits(["1"], init(name="r1", sidecar=True))
    assert pod_non_zero_requests(subject) == (
        1000 + DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST + DEFAULT_MEMORY_REQUEST
    )
    # For fitting, a missing request is nothing.
    assert pod_requests(subject).milli_cpu == 1000


def test_long_running_containers_are_the_sidecars_then_the_app_containers() -> None:
    subject = with_inits(["1"], init("1", name="i1"), init("1", name="r1", sidecar=True))
    assert [c.name for c in containers.long_running_containers(subject)] == ["r1", "app0"]


# ---------------------------------------------------------------------------------------- fit


@pytest.mark.parametrize(
    ("subject", "fits"),
    [
        # A classic init container of 2 CPUs has finished before the 1-CPU app runs: 2 CPUs at most.
        pytest.param(with_inits(["1"], init("2", name="i1")), True, id="classic-init-fits"),
        # The same container as a sidecar runs beside the app: 3 CPUs.
        pytest.param(with_inits(["1"], init("2", name="r1", sidecar=True)), False, id="sidecar-does-not-fit"),
    ],
)
def test_fit_counts_a_sidecar_beside_the_app_containers(subject: Any, fits: bool) -> None:
    plugin = fit.new(None, fake_handle(Snapshot([])))
    info = node_info(node(cpu="2500m", memory="1Gi", pods="10"))
    state = CycleState()
    pod_info = PodInfo(subject)
    plugin.pre_filter(state, pod_info, [info])
    status = plugin.filter(state, pod_info, info)
    if fits:
        assert status is None
    else:
        # More than the node's whole allocatable: evicting pods cannot help.
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("Insufficient cpu",)


# NodeResourcesFit's fit_test.go (TestRestartableInitContainers, sidecars enabled as they are at GA): a
# node with 2m of CPU and room for one pod; one app container "regular" and one sidecar
# "restartable-init", each with the CPU request given (or none).
def _regular_and_sidecar(app_cpu: str | None, sidecar_cpu: str | None) -> Any:
    return pod(spec={
        "containers": [container({"cpu": app_cpu} if app_cpu else None, name="regular")],
        "initContainers": [init(sidecar_cpu, name="restartable-init", sidecar=True)],
    })


@pytest.mark.parametrize(
    ("subject", "reasons"),
    [
        pytest.param(pod(spec={"containers": [container(name="regular")]}), None,
                     id="pod-without-restartable-init-containers"),
        pytest.param(_regular_and_sidecar(None, None), None, id="pod-with-restartable-init-containers"),
        pytest.param(_regular_and_sidecar("1m", "1m"), None,
                     id="total-requests-do-not-exceed-allocatable"),
        pytest.param(_regular_and_sidecar("1m", "2m"), ("Insufficient cpu",),
                     id="total-requests-exceed-allocatable"),
    ],
)
def test_fit_restartable_init_container_rows(subject: Any, reasons: tuple[str, ...] | None) -> None:
    plugin = fit.new(None, fake_handle(Snapshot([])))
    info = node_info(node(cpu="2m", pods="1"))
    state = CycleState()
    pod_info = PodInfo(subject)
    plugin.pre_filter(state, pod_info, [info])
    status = plugin.filter(state, pod_info, info)
    if reasons is None:
        assert status is None
    else:
        assert status is not None and status.reasons == reasons


# -------------------------------------------------------------------------------------- host ports


# kube-scheduler's utils_test.go (TestGetHostPorts): the host ports of app containers and of restartable
# init containers, sidecars first, in container order; a classic init container's are left out, and so is
# a container port without a host port.
def _port(host_port: int, container_port: int = 80) -> dict[str, Any]:
    return {"containerPort": container_port, "hostPort": host_port} if host_port else {
        "containerPort": container_port
    }


@pytest.mark.parametrize(
    ("inits", "apps", "expected"),
    [
        pytest.param([], [], [], id="no-containers"),
        pytest.param(
            [], [{"name": "a", "ports": [_port(8001), _port(8002)]}, {"name": "b", "ports": [_port(0)]}],
            [8001, 8002], id="app-containers-only",
        ),
        pytest.param([{"name": "i", "ports": [_port(8003)]}], [{"name": "a", "ports": [_port(8001)]}],
                     [8001], id="classic-init-container-left-out"),
        pytest.param(
            [{"name": "r", "restartPolicy": "Always", "ports": [_port(8003), _port(0, 81)]},
             {"name": "i", "ports": [_port(8004)]}],
            [{"name": "a", "ports": [_port(8001)]}],
            [8003, 8001], id="restartable-init-container-included",
        ),
    ],
)
def test_host_ports_rows(inits: list[Any], apps: list[Any], expected: list[int]) -> None:
    subject = pod(spec={"initContainers": inits, "containers": apps})
    assert [port for _, _, port in pod_host_ports(subject)] == expected
    assert [port for _, _, port in PodInfo(subject).host_ports] == expected




def ports_pod(*, on_init: bool, sidecar: bool, name: str = "pod", node_name: str = "") -> Any:
    holder = init(name="holder", sidecar=sidecar, host_ports=(8080,))
    spec: dict[str, Any] = {"containers": [container(name="app")]}
    spec["initContainers" if on_init else "containers"] = (
        [holder] if on_init else [container(name="app", host_ports=(8080,))]
    )
    return pod(spec=spec, name=name, node_name=node_name)


def _filter_ports(incoming: Any, existing: Any) -> Any:
    plugin = nodeports.new(None, fake_handle(Snapshot([])))
    state = CycleState()
    pod_info = PodInfo(incoming)
    info = node_info(node(), [existing])
    _, status = plugin.pre_filter(state, pod_info, [info])
    if status is not None and status.is_skip:
        return None
    return plugin.filter(state, pod_info, info)


TAKEN = ports_pod(on_init=False, sidecar=False, name="existing", node_name="node")


# kube-scheduler's GetHostPorts (pkg/scheduler/util/utils.go): app containers and restartable init
# containers hold host ports; a classic init container has exited before the pod runs.
@pytest.mark.parametrize(
    ("incoming", "existing", "fits"),
    [
        pytest.param(ports_pod(on_init=True, sidecar=False), TAKEN, True, id="classic-init-port-is-not-held"),
        pytest.param(ports_pod(on_init=True, sidecar=True), TAKEN, False, id="sidecar-port-conflicts"),
        pytest.param(
            ports_pod(on_init=False, sidecar=False),
            ports_pod(on_init=True, sidecar=False, name="existing", node_name="node"), True,
            id="running-pods-classic-init-port-is-free",
        ),
        pytest.param(
            ports_pod(on_init=False, sidecar=False),
            ports_pod(on_init=True, sidecar=True, name="existing", node_name="node"), False,
            id="running-pods-sidecar-port-is-taken",
        ),
    ],
)
def test_host_ports_are_those_of_long_running_containers(incoming: Any, existing: Any, fits: bool) -> None:
    status = _filter_ports(incoming, existing)
    if fits:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE


# ------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("inits", "apps", "problems"),
    [
        pytest.param([init(name="r", sidecar=True)], [container(name="a")], [], id="sidecar-valid"),
        pytest.param(
            [{**init(name="i"), "restartPolicy": "OnFailure"}], [container(name="a")],
            ['spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": '
             'supported values: "Always"'],
            id="init-on-failure",
        ),
        pytest.param(
            [{**init(name="i"), "restartPolicy": "Never"}], [container(name="a")],
            ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
            id="init-never",
        ),
        pytest.param(
            [], [{**container(name="a"), "restartPolicy": "Always"}],
            ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"],
            id="app-container",
        ),
    ],
)
def test_validation(inits: list[Any], apps: list[Any], problems: list[str]) -> None:
    subject = pod(spec={"initContainers": inits, "containers": [{**c, "image": "busybox"} for c in apps]})
    for c in subject.spec.init_containers:
        c.image = "busybox"
    assert [p for p in validation.validate_object(subject) if "restartPolicy" in p] == problems


# --------------------------------------------------------------------------------------- describe


def test_describe_lists_a_sidecar_under_init_containers_with_its_restart_policy() -> None:
    subject = with_inits(["1"], init("1", name="migrate"), init("1", name="proxy", sidecar=True))
    text = DescribeText()
    # Describing a pod's spec reads nothing from the API server.
    asyncio.run(pod_printer.PRINTER.describe(cast(Any, None), subject, text))
    rendered = text.render()

    init_block = rendered[rendered.index("Init Containers:"):rendered.index("\nContainers:")]
    assert "  migrate:" in init_block and "  proxy:" in init_block
    proxy = init_block[init_block.index("  proxy:"):]
    migrate = init_block[init_block.index("  migrate:"):init_block.index("  proxy:")]
    assert "Restart Policy:  Always" in proxy
    # A classic init container has no restart policy of its own.
    assert "Restart Policy" not in migrate


# ------------------------------------------------------------------------------------------ get pods


@pytest.mark.parametrize(
    ("subject", "ready"),
    [
        # kubectl's printPod (pkg/printers/internalversion/printers.go) counts sidecars among the
        # containers of READY; a classic init container has finished and is not counted.
        pytest.param(with_inits(["1"], init("1", name="migrate")), "1/1", id="classic-init"),
        pytest.param(with_inits(["1"], init("1", name="proxy", sidecar=True)), "2/2", id="sidecar"),
        pytest.param(
            with_inits(["1", "1"], init("1", name="migrate"), init("1", name="proxy", sidecar=True)), "3/3",
            id="both",
        ),
    ],
)
def test_get_pods_ready_counts_sidecars(subject: Any, ready: str) -> None:
    subject.status.phase = "Running"
    assert pod_printer.pod_ready(subject) == ready
    subject.status.phase = "Pending"
    assert pod_printer.pod_ready(subject) == "0/" + ready.split("/")[1]
