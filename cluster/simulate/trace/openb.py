"""The openb trace (Alibaba cluster-trace-gpu-v2023, "Beware of Fragmentation", ATC'23): its node list
and pod list as CSV, mapped to API objects as docs/trace-format.md says."""

from __future__ import annotations

from cluster.api import objects_pb2, validation
from cluster.simulate.scenario import DEFAULT_NAMESPACE
from cluster.simulate.trace.bounds import LARGEST, MAX_SECONDS, MEBIBYTE, TOO_MANY_SECONDS, ClusterTotals
from cluster.simulate.trace.build import new_node, new_pod, require_node_label_in
from cluster.simulate.trace.model import (
    GPU_MILLI_ANNOTATION,
    GPU_PRODUCT_LABEL,
    GPU_RESOURCE,
    QOS_LABEL,
    TRACE_PHASE_ANNOTATION,
    WHOLE_GPU_MILLI,
    TracePod,
)
from cluster.simulate.trace.table import Header, Row, check_exact_header, load_rows
from scheduler.framework.resource import CPU, MEMORY

FORMAT = "openb"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
               "creation_time", "deletion_time", "scheduled_time")
#: The most GPUs a node of the trace has, and so the most a pod can ask.
MAX_GPUS_PER_POD = 8
#: What the trace writes for a CPU node's model (pandas' missing value included).
NO_MODEL = ("", "nan")
#: The most memory_mib whose bytes the replay holds.
MAX_MEMORY_MIB = LARGEST // MEBIBYTE
_NODE_COLUMNS = {CPU: "cpu_milli", MEMORY: "memory_mib", GPU_RESOURCE: "gpu"}

_NODE_FIELDS = {"metadata.name": "sn", "metadata.labels": "model", "status.capacity[cpu]": "cpu_milli",
                "status.allocatable[cpu]": "cpu_milli", "status.capacity[memory]": "memory_mib",
                "status.allocatable[memory]": "memory_mib"}
_POD_FIELDS = {"metadata.name": "name", "metadata.labels": "qos", "metadata.annotations": "pod_phase",
               "spec.affinity": "gpu_spec", "spec.containers[0].resources.requests[cpu]": "cpu_milli",
               "spec.containers[0].resources.requests[memory]": "memory_mib"}


def is_node_header(header: list[str]) -> bool:
    return bool(header) and header[0] == "sn"


def is_pod_header(header: list[str]) -> bool:
    return "cpu_milli" in header


def load_nodes(path: str, text: str, header: Header) -> tuple[list[objects_pb2.Node], list[str]]:
    """The nodes of an openb node list, in file order, and every problem found."""
    problems = check_exact_header(path, header, NODE_COLUMNS)
    if problems:
        return [], problems
    totals = ClusterTotals()
    return load_rows(path, text, header, key_column="sn", key=lambda row: row.text("sn"),
                     build=lambda row: _node(row, totals), api_object=lambda node: node,
                     field_columns=_NODE_FIELDS)


def _node(row: Row, totals: ClusterTotals) -> objects_pb2.Node | None:
    cpu, memory = row.integer("cpu_milli", LARGEST), row.integer("memory_mib", MAX_MEMORY_MIB)
    gpus = row.integer("gpu", LARGEST)
    model = row.text("model")
    labels = {}
    if model.lower() not in NO_MODEL:
        for problem in validation.is_valid_label_value(model):
            row.invalid("model", f"{problem} (it becomes the node's label {GPU_PRODUCT_LABEL})")
        labels[GPU_PRODUCT_LABEL] = model
    if cpu is None or memory is None or gpus is None:
        return None
    node = new_node(row.text("sn"), {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}, gpus, labels)
    row.count_node(totals, node, _NODE_COLUMNS)
    return node


def load_pods(path: str, text: str, header: Header) -> tuple[list[TracePod], list[str]]:
    """The pods of an openb pod list with their arrival (creation_time, shifted so the earliest is 0)
    and run time, in file order, and every problem found."""
    problems = check_exact_header(path, header, POD_COLUMNS)
    if problems:
        return [], problems
    return load_rows(path, text, header, key_column="name", key=lambda row: row.text("name"), build=_pod,
                     api_object=lambda pod: pod.pod, field_columns=_POD_FIELDS)


def _pod(row: Row) -> TracePod | None:
    cpu, memory = row.integer("cpu_milli", LARGEST), row.integer("memory_mib", MAX_MEMORY_MIB)
    gpus, milli = row.integer("num_gpu", LARGEST), row.integer("gpu_milli", LARGEST)
    created = row.integer("creation_time", MAX_SECONDS, too_large=TOO_MANY_SECONDS)
    deleted = row.optional_integer("deletion_time", MAX_SECONDS, too_large=TOO_MANY_SECONDS)
    scheduled = row.optional_integer("scheduled_time", MAX_SECONDS, too_large=TOO_MANY_SECONDS)
    if gpus is not None and milli is not None:
        _check_gpus(row, gpus, milli)
    if created is not None:
        _check_times(row, created, deleted, scheduled)
    models = [model.strip() for model in row.text("gpu_spec").split("|") if model.strip()]
    for model in models:
        for problem in validation.is_valid_label_value(model):
            row.add("gpu_spec", validation.invalid("gpu_spec", model, problem))
    if cpu is None or memory is None or gpus is None or milli is None or created is None:
        return None
    pod = new_pod(row.text("name"), DEFAULT_NAMESPACE, {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}, gpus)
    if models:
        require_node_label_in(pod, GPU_PRODUCT_LABEL, models)
    if row.text("qos"):
        pod.metadata.labels[QOS_LABEL] = row.text("qos")
    if row.text("pod_phase"):
        pod.metadata.annotations[TRACE_PHASE_ANNOTATION] = row.text("pod_phase")
    if 0 < milli < WHOLE_GPU_MILLI:
        pod.metadata.annotations[GPU_MILLI_ANNOTATION] = str(milli)
    started = scheduled if scheduled is not None else created
    duration = None if deleted is None else float(deleted - started)
    return TracePod(pod, float(created), duration, row.where)


def _check_gpus(row: Row, gpus: int, milli: int) -> None:
    if gpus > MAX_GPUS_PER_POD:
        row.invalid("num_gpu", f"must be at most {MAX_GPUS_PER_POD} (no node of the trace has more GPUs)")
    if milli > WHOLE_GPU_MILLI:
        row.invalid("gpu_milli", f"must be between 0 and {WHOLE_GPU_MILLI} (thousandths of one GPU)")
    elif gpus == 0 and milli > 0:
        row.invalid("gpu_milli", "must be 0 when num_gpu is 0")
    elif gpus > 1 and milli != WHOLE_GPU_MILLI:
        row.invalid("gpu_milli", f"must be {WHOLE_GPU_MILLI} when num_gpu is more than 1 (only a pod of one "
                    "GPU shares it)")
    elif gpus == 1 and milli == 0:
        row.invalid("gpu_milli", f"must be between 1 and {WHOLE_GPU_MILLI} when num_gpu is 1")


def _check_times(row: Row, created: int, deleted: int | None, scheduled: int | None) -> None:
    if scheduled is not None and scheduled < created:
        row.invalid("scheduled_time", f"must not be before creation_time {created}")
    if deleted is not None and deleted < created:
        row.invalid("deletion_time", f"must not be before creation_time {created}")
    elif deleted is not None and scheduled is not None and deleted < scheduled:
        row.invalid("deletion_time", f"must not be before scheduled_time {scheduled}")
