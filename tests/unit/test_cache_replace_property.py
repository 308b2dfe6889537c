"""The cache's one-change replacement of a pod (an assumed pod confirmed, a bound pod updated) against its
reference, the removal and re-addition of the pod: ``PodInfo.with_pod`` must derive exactly what
``PodInfo(pod)`` derives, and ``NodeInfo.replace_pod`` must leave the node exactly as ``remove_pod`` then
``add_pod`` leave it, whatever changed between the two versions of the pod."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.framework import NodeInfo, PodInfo
from tests.builders import node, pod

#: One version of the pod: (cpu, memory, labels, host port, claim, affinity by label key, start time,
#: node name, resource version).
VERSION = st.tuples(
    st.sampled_from(["", "100m", "1"]),
    st.sampled_from(["", "1Gi"]),
    st.dictionaries(st.sampled_from(["app", "tier", "scheduling.x-k8s.io/pod-group"]),
                    st.sampled_from(["a", "b"]), max_size=2),
    st.sampled_from([0, 8080]),
    st.sampled_from(["", "data"]),
    st.booleans(),
    st.sampled_from([0, 1000]),
    st.sampled_from(["n1", "n2"]),
    st.sampled_from(["1", "2"]),
)


@st.composite
def two_versions(draw: st.DrawFn) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A version and another that differs from it in a few fields (often none but the resourceVersion)."""
    before, other = draw(VERSION), draw(VERSION)
    changed = draw(st.lists(st.booleans(), min_size=len(before), max_size=len(before)))
    return before, tuple(o if c else b for b, o, c in zip(before, other, changed, strict=True))


def version(name: str, data: tuple[Any, ...]) -> objects_pb2.Pod:
    cpu, memory, labels, host_port, claim, affinity, start, node_name, rv = data
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: dict[str, Any] = {"containers": [container], "nodeName": node_name}
    if claim:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    if affinity:
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"tier": "db"}}, "topologyKey": "zone",
             "matchLabelKeys": ["app"]},
        ]}}
    status = {"startTime": "1970-01-01T00:16:40Z"} if start else None
    return pod(name, spec=spec, status=status, labels=labels, resource_version=rv)


def derived(info: PodInfo) -> dict[str, Any]:
    return {slot: getattr(info, slot) for slot in PodInfo.__slots__}


def aggregates(info: NodeInfo) -> dict[str, Any]:
    return {
        "pods": list(info.pods.items()),
        "with_affinity": list(info.pods_with_affinity.items()),
        "with_required_anti_affinity": list(info.pods_with_required_anti_affinity.items()),
        "requested": info.requested,
        "non_zero_requested": info.non_zero_requested,
        "used_ports": info.used_ports._by_port,
        "pvc_ref_counts": info.pvc_ref_counts,
    }


@settings(max_examples=300, deadline=None)
@given(two_versions())
def test_with_pod_derives_what_a_new_pod_info_derives(
    versions: tuple[tuple[Any, ...], tuple[Any, ...]]
) -> None:
    before, after = versions
    new = version("p", after)
    assert derived(PodInfo(version("p", before)).with_pod(new)) == derived(PodInfo(new))


@settings(max_examples=300, deadline=None)
@given(two_versions(), st.lists(VERSION, max_size=3), st.integers(0, 3))
def test_replace_pod_leaves_the_node_as_remove_then_add(
    versions: tuple[tuple[Any, ...], tuple[Any, ...]], others: list[tuple[Any, ...]], position: int
) -> None:
    before, after = versions
    neighbours = [PodInfo(version(f"other-{i}", data)) for i, data in enumerate(others)]
    old = PodInfo(version("p", before))
    pods = [*neighbours[:position], old, *neighbours[position:]]
    reference, replaced = NodeInfo(node("n1"), pods), NodeInfo(node("n1"), pods)
    new = old.with_pod(version("p", after))

    reference.remove_pod(new.key)
    reference.add_pod(new)
    generation = replaced.generation
    replaced.replace_pod(new)

    assert aggregates(replaced) == aggregates(reference)
    assert replaced.generation > generation
