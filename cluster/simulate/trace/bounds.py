"""The largest numbers a trace may give, so that a replay can hold every one: the checks every format
shares.

- **Seconds** (arrivals, run times, deletions, openb's times) are finite, non-negative and at most
  ``MAX_SECONDS``. The replay's virtual clock starts in 2024 and the API server stamps objects with its
  instants, which a protobuf Timestamp holds only until the end of the year 9999; the latest arrival plus
  the longest run stays well inside that. Only runs that wait for one another could go further, after
  a scheduling attempt every few virtual minutes for centuries: no replay lasts that long.
- **Amounts** of what the replay counts, CPU in thousandths of a core, memory in bytes, GPUs (and a
  node's pods), are at most ``LARGEST`` per node and per pod, and the nodes' together too: the replay's
  books keep them in 64-bit integers, whose largest value the quantity parser gives any larger quantity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from google.protobuf.message import Message

from cluster.api import objects_pb2, validation
from cluster.api.quantity import int_value, milli_value
from cluster.apiserver.defaults import default_container
from cluster.simulate.trace.model import GPU_RESOURCE
from scheduler.framework.resource import CPU, MEMORY, Resource, pod_requests

MAX_SECONDS = 10**11
#: One below the largest 64-bit integer, the value the quantity parser gives every larger quantity.
LARGEST = 2**63 - 2
#: The resources the replay counts, in the order of its books' columns.
COUNTED = (CPU, MEMORY, GPU_RESOURCE)
MEBIBYTE = 2**20

NOT_SECONDS = "must be a non-negative number of seconds"
TOO_MANY_SECONDS = (f"must be at most {MAX_SECONDS} seconds (about 3,170 years: a replay's timestamps end "
                    "with the year 9999)")
_COUNTS = "a replay counts resources in 64-bit integers: CPU in thousandths of a core, memory in bytes"


def seconds(text: str) -> tuple[float | None, str | None]:
    """The number of seconds ``text`` gives, or the problem with it."""
    try:
        value = float(text)
    except ValueError:
        return None, NOT_SECONDS
    if not math.isfinite(value) or value < 0:
        return None, NOT_SECONDS
    if value > MAX_SECONDS:
        return None, TOO_MANY_SECONDS
    return value, None


def too_large(maximum: int | str) -> str:
    """A count or quantity above what the replay holds, ``maximum`` in the field's own unit."""
    return f"must be at most {maximum} ({_COUNTS})"


def counted(resource: Resource) -> tuple[int, int, int]:
    """The amounts of ``COUNTED`` in ``resource``, in the replay's units."""
    return resource.get(CPU), resource.get(MEMORY), resource.get(GPU_RESOURCE)


def pod_gpus(pod: objects_pb2.Pod) -> int:
    """The GPUs ``pod`` asks as the scheduler counts them: after the API server has defaulted each
    container's requests from its limits (YAML may give an extended resource's limit alone)."""
    defaulted = objects_pb2.PodSpec()
    defaulted.CopyFrom(pod.spec)
    for container in (*defaulted.init_containers, *defaulted.containers):
        default_container(container)
    return counted(pod_requests(objects_pb2.Pod(spec=defaulted)))[2]


def quantity_problem(resource: str, text: str) -> str | None:
    """Why the quantity ``text`` (one that parses) of ``resource`` is more than the replay holds, or None."""
    amount = milli_value(text) if resource == CPU else int_value(text)
    if amount <= LARGEST:
        return None
    return too_large(f"{LARGEST}m" if resource == CPU else LARGEST)


def object_problems(obj: Message) -> list[str]:
    """A YAML trace's Node or Pod: each quantity the replay counts, and a pod's requests together."""
    if isinstance(obj, objects_pb2.Node):
        return [*_quantities("status.capacity", obj.status.capacity),
                *_quantities("status.allocatable", obj.status.allocatable)]
    if not isinstance(obj, objects_pb2.Pod):
        return []
    spec = obj.spec
    problems = [*_quantities("spec.overhead", spec.overhead)]
    for field, containers in (("spec.initContainers", spec.init_containers),
                              ("spec.containers", spec.containers)):
        for index, container in enumerate(containers):
            problems += _quantities(f"{field}[{index}].resources.requests", container.resources.requests)
    if problems:
        return problems
    for resource, amount in zip(COUNTED, counted(pod_requests(obj)), strict=True):
        if amount > LARGEST:
            problems.append(validation.invalid(
                f"spec.containers[*].resources.requests[{resource}]", amount,
                f"the pod's requests add up to more than the replay holds ({_COUNTS})"))
    return problems


def _quantities(path: str, quantities: Mapping[str, str]) -> list[str]:
    problems = []
    for resource in COUNTED:
        text = quantities.get(resource)
        problem = None if text is None else quantity_problem(resource, text)
        if problem is not None:
            problems.append(validation.invalid(f"{path}[{resource}]", text, problem))
    return problems


class ClusterTotals:
    """The nodes' allocatable so far, summed: a node that takes a total past ``LARGEST`` is refused."""

    def __init__(self) -> None:
        self._totals = dict.fromkeys(COUNTED, 0)

    def add(self, allocatable: Mapping[str, str]) -> list[str]:
        """Add a node's allocatable; the resources whose total it takes past ``LARGEST`` (the node after
        which the total is too large, not every one after it)."""
        too_much = []
        for resource, amount in zip(COUNTED, counted(Resource.from_quantities(allocatable)), strict=True):
            before = self._totals[resource]
            self._totals[resource] += amount
            if before <= LARGEST < self._totals[resource]:
                too_much.append(resource)
        return too_much


def too_much_in_all(path: str, resource: str) -> str:
    """The problem of the node, its ``resource`` at ``path``, that takes the nodes' total too far."""
    return (f"{path}: Too many: the nodes' {resource} adds up to more than the replay holds with this node "
            f"({_COUNTS})")
