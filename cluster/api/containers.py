"""What a pod's containers add up to: the one rule, Kubernetes' (component-helpers' resource.PodRequests
and PodLimits), that every reader of a pod's requests or limits uses — the scheduler's resource
accounting and scores, and `podsched describe`.

A pod runs its init containers one at a time, in order, then its app containers together. A sidecar is
an init container with ``restartPolicy: Always``: it starts in the init sequence and keeps running
beside everything after it. So while init container *i* runs, the pod holds *i*'s own amount plus every
sidecar started before it (a sidecar itself: all sidecars so far, itself included), and once the app
containers run it holds their sum plus every sidecar. The pod's amount is the larger of the two phases'
peaks; overhead, where a caller counts it, comes on top.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import TypeVar

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity

#: The only restartPolicy an init container may have: it makes the container a sidecar.
SIDECAR_RESTART_POLICY = "Always"

#: An amount of resources in whatever form its caller keeps it.
A = TypeVar("A")


def is_sidecar(container: objects_pb2.Container) -> bool:
    """Whether an init container is a sidecar (restartable: it runs for the pod's whole life)."""
    return container.HasField("restart_policy") and container.restart_policy == SIDECAR_RESTART_POLICY


def long_running_containers(pod: objects_pb2.Pod) -> Iterator[objects_pb2.Container]:
    """The containers that run for as long as the pod does: its sidecars, then its app containers. A
    classic init container has finished before them, so what it holds (a host port) is free again."""
    yield from (container for container in pod.spec.init_containers if is_sidecar(container))
    yield from pod.spec.containers


def pod_total(
    pod: objects_pb2.Pod,
    amount: Callable[[objects_pb2.Container], A],
    plus: Callable[[A, A], A],
    larger: Callable[[A, A], A],
    zero: A,
) -> A:
    """The most the pod's containers hold at any one time, overhead not included: ``amount`` is one
    container's, ``plus`` the sum of two amounts and ``larger`` their per-resource maximum (both new
    values: neither argument is changed), ``zero`` nothing at all."""
    steady = zero
    for container in pod.spec.containers:
        steady = plus(steady, amount(container))
    sidecars = zero
    init_peak = zero
    for container in pod.spec.init_containers:
        own = amount(container)
        if is_sidecar(container):
            steady = plus(steady, own)
            sidecars = plus(sidecars, own)
            running = sidecars
        else:
            running = plus(own, sidecars)
        init_peak = larger(init_peak, running)
    return larger(steady, init_peak)


def pair_total(
    pod: objects_pb2.Pod, amount: Callable[[objects_pb2.Container], tuple[int, int]]
) -> tuple[int, int]:
    """``pod_total`` of two amounts kept side by side (milli-CPU and memory, say)."""
    return pod_total(
        pod, amount,
        lambda a, b: (a[0] + b[0], a[1] + b[1]),
        lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
        (0, 0),
    )


def requests_and_limits(pod: objects_pb2.Pod) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """The pod's effective requests and limits, as exact quantities: ``pod_total`` of its containers',
    plus the overhead (on every request, and on the limits it names)."""
    none: dict[str, Fraction] = {}
    requests = pod_total(pod, lambda c: _exact(c.resources.requests), _sum, _max, none)
    limits = pod_total(pod, lambda c: _exact(c.resources.limits), _sum, _max, none)
    overhead = _exact(pod.spec.overhead)
    requests = _sum(requests, overhead)
    limits = _sum(limits, {name: value for name, value in overhead.items() if name in limits})
    return requests, limits


def _exact(quantities: Mapping[str, str]) -> dict[str, Fraction]:
    return {name: parse_quantity(text) for name, text in quantities.items()}


def _sum(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
    return {name: a.get(name, Fraction(0)) + b.get(name, Fraction(0)) for name in a.keys() | b.keys()}


def _max(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
    return {name: max(a.get(name, Fraction(0)), b.get(name, Fraction(0))) for name in a.keys() | b.keys()}
