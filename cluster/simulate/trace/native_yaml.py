"""Native YAML traces: Kubernetes manifests read as ``podsched simulate`` reads a scenario, the pods timed
by their ``replay.podsched.io/`` annotations."""

from __future__ import annotations

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, validation
from cluster.api.manifest import Manifest, ManifestError, load_paths
from cluster.simulate.scenario import Entry, ScenarioError, build_scenario
from cluster.simulate.trace import bounds
from cluster.simulate.trace.groups import topology_problems
from cluster.simulate.trace.model import (
    ARRIVAL_ANNOTATION,
    DELETION_ANNOTATION,
    DURATION_ANNOTATION,
    GPU_MILLI_ANNOTATION,
    Trace,
    TracePod,
    gpu_share_problem,
    shifted_to_zero,
)

FORMAT = "native-yaml"
#: What the pods file may hold; the nodes file holds every other kind a scenario may.
POD_FILE_KINDS = (kinds.POD, kinds.POD_GROUP)


def load(nodes_path: str, pods_path: str) -> tuple[Trace | None, list[str], list[str]]:
    """The trace, or the problems of the nodes file and of the pods file."""
    node_manifests, node_problems = _manifests(nodes_path)
    pod_manifests, pod_problems = _manifests(pods_path)
    for manifest in node_manifests:
        if manifest.kind == kinds.POD:
            node_problems.append(f"{_where(manifest)}: kind: Forbidden: pods belong in the pods file "
                                 f"{pods_path}")
    for manifest in pod_manifests:
        if manifest.kind not in POD_FILE_KINDS:
            pod_problems.append(f"{_where(manifest)}: kind: Forbidden: a {manifest.kind.name} belongs in the "
                                f"nodes file {nodes_path}; the pods file holds Pods and PodGroups")
    timing = {id(manifest.obj): _timing(manifest, pod_problems) for manifest in pod_manifests
              if manifest.kind == kinds.POD}
    if not any(manifest.kind == kinds.NODE for manifest in node_manifests) and not node_problems:
        node_problems.append(f"{nodes_path}: no Node in the file")
    if not timing and not pod_problems:
        pod_problems.append(f"{pods_path}: no Pod in the file")
    if node_problems or pod_problems:
        return None, node_problems, pod_problems
    try:
        scenario = build_scenario([*node_manifests, *pod_manifests])
    except ScenarioError as exc:
        return None, [p for p in exc.problems if not p.startswith(f"{pods_path}:")], [
            p for p in exc.problems if p.startswith(f"{pods_path}:")]
    refused = [f"{entry.where}: spec.nodeName: Forbidden: a trace pod arrives pending; the replay's "
               "scheduler binds it" for entry in scenario.running_pods]
    node_problems, pod_problems = _too_large(scenario.nodes), _too_large(scenario.pods)
    shares = [problem for entry in scenario.pending_pods for problem in _gpu_share_problems(entry)]
    nodes = [entry.obj for entry in scenario.nodes if isinstance(entry.obj, objects_pb2.Node)]
    groups = [(entry.where, entry.obj) for entry in scenario.pod_groups
              if isinstance(entry.obj, objects_pb2.PodGroup)]
    unplaceable = topology_problems(groups, nodes, nodes_path)
    if refused or node_problems or pod_problems or shares or unplaceable:
        return None, node_problems, [*refused, *pod_problems, *shares, *unplaceable]
    pods = [_trace_pod(entry, *timing[id(entry.obj)]) for entry in scenario.pending_pods]
    objects: list[Message] = [entry.obj for entry in (
        *scenario.namespaces, *scenario.runtime_classes, *scenario.priority_classes, *scenario.pdbs,
        *scenario.pod_groups, *scenario.workloads)]
    return Trace(nodes, shifted_to_zero(pods), objects, FORMAT), [], []


def _too_large(entries: list[Entry]) -> list[str]:
    """The amounts of nodes or pods the replay cannot hold, the nodes' totals included."""
    problems, totals = [], bounds.ClusterTotals()
    for entry in entries:
        own = bounds.object_problems(entry.obj)
        problems += [f"{entry.where}: {problem}" for problem in own]
        if isinstance(entry.obj, objects_pb2.Node) and not own:
            problems += [
                f"{entry.where}: " + bounds.too_much_in_all(f"status.allocatable[{resource}]", resource)
                for resource in totals.add(entry.obj.status.allocatable)]
    return problems


def _manifests(path: str) -> tuple[list[Manifest], list[str]]:
    try:
        return load_paths([path]), []
    except ManifestError as exc:
        return [], list(exc.problems)


def _where(manifest: Manifest) -> str:
    return Entry(manifest.source, manifest.index, manifest.obj).where


def _timing(manifest: Manifest, problems: list[str]) -> tuple[float, float | None]:
    """A pod's arrival and run time from its annotations; bad values are added to ``problems``."""
    annotations = kinds.metadata_of(manifest.obj).annotations
    arrival = _seconds(manifest, ARRIVAL_ANNOTATION, problems)
    duration = _seconds(manifest, DURATION_ANNOTATION, problems)
    deletion = _seconds(manifest, DELETION_ANNOTATION, problems)
    if DURATION_ANNOTATION in annotations and DELETION_ANNOTATION in annotations:
        problems.append(f"{_where(manifest)}: {_path(DELETION_ANNOTATION)}: Forbidden: give "
                        f"{DURATION_ANNOTATION} or {DELETION_ANNOTATION}, not both")
    elif deletion is not None:
        if deletion < (arrival or 0.0):
            problems.append(f"{_where(manifest)}: " + validation.invalid(
                _path(DELETION_ANNOTATION), annotations[DELETION_ANNOTATION],
                f"must not be before {ARRIVAL_ANNOTATION} {annotations.get(ARRIVAL_ANNOTATION, '0')}"))
        duration = deletion - (arrival or 0.0)
    return arrival or 0.0, duration


def _gpu_share_problems(entry: Entry) -> list[str]:
    """Why the pod's share of one GPU (its annotation, if it gives one) cannot be."""
    pod = entry.obj
    assert isinstance(pod, objects_pb2.Pod)
    text = pod.metadata.annotations.get(GPU_MILLI_ANNOTATION)
    if text is None:
        return []
    problem = gpu_share_problem(text, bounds.pod_gpus(pod))
    if problem is None:
        return []
    return [f"{entry.where}: " + validation.invalid(_path(GPU_MILLI_ANNOTATION), text, problem)]


def _seconds(manifest: Manifest, annotation: str, problems: list[str]) -> float | None:
    text = kinds.metadata_of(manifest.obj).annotations.get(annotation)
    if text is None:
        return None
    value, problem = bounds.seconds(text)
    if problem is not None:
        problems.append(f"{_where(manifest)}: " + validation.invalid(_path(annotation), text, problem))
    return value


def _path(annotation: str) -> str:
    return f"metadata.annotations[{annotation}]"


def _trace_pod(entry: Entry, arrival: float, duration: float | None) -> TracePod:
    assert isinstance(entry.obj, objects_pb2.Pod)
    return TracePod(entry.obj, arrival, duration, f"{entry.source}: document {entry.index}")
