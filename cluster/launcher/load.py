"""A load generator: pods submitted at a steady rate through the API, and a running count of how many the
scheduler has bound. `podsched load` runs it from the command line; the chaos tests run it in-process.

Every pod of one run carries the label ``podsched.io/load-run=<run id>`` and is named
``load-<run id>-<n>``, so a run's pods are told apart from everything else (and from other runs) by a
label selector. With a gang fraction, some submissions are gangs instead of single pods: a PodGroup
named ``load-<run id>-gang-<k>`` whose minimum is its size, then its members, one right after the other
(as a training operator creates them), in either spelling at random: upstream's scheduling.k8s.io
PodGroup with the pods' ``spec.schedulingGroup``, or scheduler-plugins' scheduling.x-k8s.io one with
the pods' ``scheduling.x-k8s.io/pod-group`` label. Which submissions are gangs, their sizes and their
spelling are drawn from the spec's seed, so a run can be repeated. With a claim template, every single
pod (not a gang's) also claims devices: its claim ``device`` is made from that ResourceClaimTemplate.

An informer on that selector keeps the counts: a pod is *bound* once any version of it was seen with a
node, *lost* if it was deleted before that (preempted or deleted by hand while pending), and *pending*
otherwise.

Creating is not idempotent, but the names are: a create whose answer was lost (an API server killed
after writing) is sent again, and AlreadyExists then means the first one landed. A create the server
refuses for good (a bad priority class, say) ends the run with that error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

from cluster.api import errors, kinds, objects_pb2
from cluster.api.quantity import parse_quantity
from cluster.api.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from cluster.client import Client, Informer

log = logging.getLogger(__name__)

#: The label that ties a pod to the run that submitted it.
RUN_LABEL = "podsched.io/load-run"
#: scheduler-plugins' Coscheduling: its PodGroup's apiVersion, and the label its pods join a group by.
COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: The name a single pod gives the claim it makes from the claim template.
CLAIM_NAME = "device"
#: The name of a single pod's ephemeral volume (its PersistentVolumeClaim is "<pod>-data").
VOLUME_NAME = "data"
#: What each ephemeral volume asks for.
VOLUME_SIZE = "1Gi"
#: The gang sizes drawn by default, smallest and largest.
DEFAULT_GANG_SIZE = (2, 8)
#: A run that fell behind (the API server away) catches up at most this much at full speed, then
#: resumes its rate: a restarted server should not meet a burst of everything that was missed.
MAX_CATCH_UP_S = 1.0
#: The wait before sending a create again after the API server did not answer (the client has already
#: retried and failed over within its own timeout).
CREATE_RETRY_PAUSE_S = 0.5


def new_run_id() -> str:
    return uuid.uuid4().hex[:6]


def new_seed() -> int:
    return random.SystemRandom().randrange(2**31)


class LoadSpecError(ValueError):
    """A LoadSpec field the API server would refuse for every pod; ``field`` names it."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"{field_name}: {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class LoadSpec:
    """What to submit. The constructor rejects what the API server would refuse for every pod, naming
    the flag's field, so a typo fails at once rather than on the first create."""

    #: Pods per second, averaged (a positive, finite number).
    rate: float
    #: How many pods to submit; None submits until stopped.
    count: int | None = None
    namespace: str = "load"
    #: Each pod's one container requests this much cpu and memory (Kubernetes quantities).
    cpu: str = "100m"
    memory: str = "128Mi"
    #: The pods' priorityClassName ("" for the cluster's default).
    priority_class: str = ""
    #: The chance (0 to 1) that a submission is a gang rather than a single pod.
    gang_fraction: float = 0.0
    #: A gang's size (its pods, and its minimum) is drawn between these two, both included.
    gang_size: tuple[int, int] = DEFAULT_GANG_SIZE
    #: Seeds the draws: which submissions are gangs, their sizes and their spelling.
    seed: int = field(default_factory=new_seed)
    run_id: str = field(default_factory=new_run_id)
    #: A ResourceClaimTemplate of the namespace each single pod makes its claim ``device`` from ("" for
    #: none).
    claim_template: str = ""
    #: A StorageClass each single pod's ephemeral volume ``data`` is claimed from ("" for none).
    volume_class: str = ""
    #: A node label every gang must be placed inside one domain of (its PodGroup's
    #: ``schedulingConstraints.topology``; "" for none). Only scheduling.k8s.io PodGroups have the
    #: constraint, so with a key every gang is written in that spelling.
    gang_topology_key: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise LoadSpecError("rate", f"must be a positive number of pods per second, got {self.rate:g}")
        if self.count is not None and self.count < 1:
            raise LoadSpecError("count", f"must be at least 1, got {self.count}")
        for name, value in (("cpu", self.cpu), ("memory", self.memory)):
            try:
                amount = parse_quantity(value)
            except ValueError as exc:
                raise LoadSpecError(name, str(exc)) from None
            if amount <= 0:
                raise LoadSpecError(name, f'must be a positive quantity, got "{value}"')
        if problems := is_dns1123_label(self.namespace):
            raise LoadSpecError("namespace", f'"{self.namespace}" is invalid: {"; ".join(problems)}')
        if self.priority_class and (problems := is_dns1123_subdomain(self.priority_class)):
            detail = "; ".join(problems)
            raise LoadSpecError("priority_class", f'"{self.priority_class}" is invalid: {detail}')
        if self.claim_template and (problems := is_dns1123_subdomain(self.claim_template)):
            detail = "; ".join(problems)
            raise LoadSpecError("claim_template", f'"{self.claim_template}" is invalid: {detail}')
        if self.volume_class and (problems := is_dns1123_subdomain(self.volume_class)):
            raise LoadSpecError("volume_class", f'"{self.volume_class}" is invalid: {"; ".join(problems)}')
        if not 0.0 <= self.gang_fraction <= 1.0:  # NaN fails too
            raise LoadSpecError("gang_fraction", f"must be between 0 and 1, got {self.gang_fraction:g}")
        if self.gang_topology_key and (problems := is_qualified_name(self.gang_topology_key)):
            raise LoadSpecError("gang_topology_key",
                                f'"{self.gang_topology_key}" is invalid: {"; ".join(problems)}')
        smallest, largest = self.gang_size
        if not 1 <= smallest <= largest:
            raise LoadSpecError("gang_size",
                                f"must be MIN-MAX with 1 <= MIN <= MAX, got {smallest}-{largest}")

    @property
    def selector(self) -> str:
        """The label selector of this run's pods."""
        return f"{RUN_LABEL}={self.run_id}"

    def pod_name(self, index: int) -> str:
        return f"load-{self.run_id}-{index}"

    def pod(self, index: int) -> objects_pb2.Pod:
        pod = objects_pb2.Pod(api_version="v1", kind="Pod")
        pod.metadata.name = self.pod_name(index)
        pod.metadata.namespace = self.namespace
        pod.metadata.labels.update({"app": "podsched-load", RUN_LABEL: self.run_id})
        if self.priority_class:
            pod.spec.priority_class_name = self.priority_class
        container = pod.spec.containers.add(name="app", image="busybox:1.36", command=["sleep", "infinity"])
        container.resources.requests.update({"cpu": self.cpu, "memory": self.memory})
        return pod

    def single(self, index: int) -> objects_pb2.Pod:
        """Pod ``index`` submitted alone: with the claim template, it claims devices through it; with the
        volume class, it has an ephemeral volume of that class."""
        pod = self.pod(index)
        if self.claim_template:
            pod.spec.resource_claims.add(name=CLAIM_NAME, resource_claim_template_name=self.claim_template)
            pod.spec.containers[0].resources.claims.add(name=CLAIM_NAME)
        if self.volume_class:
            template = pod.spec.volumes.add(name=VOLUME_NAME).ephemeral.volume_claim_template
            template.spec.access_modes.append("ReadWriteOnce")
            template.spec.resources.requests["storage"] = VOLUME_SIZE
            template.spec.storage_class_name = self.volume_class
        return pod

    def pod_group_name(self, number: int) -> str:
        return f"load-{self.run_id}-gang-{number}"

    def pod_group(self, number: int, size: int, *, coscheduling: bool) -> objects_pb2.PodGroup:
        """Gang ``number`` of ``size`` pods, all of which must be placed together."""
        group = objects_pb2.PodGroup(kind="PodGroup")
        group.metadata.name = self.pod_group_name(number)
        group.metadata.namespace = self.namespace
        group.metadata.labels.update({"app": "podsched-load", RUN_LABEL: self.run_id})
        if coscheduling and not self.gang_topology_key:
            group.api_version = COSCHEDULING_API_VERSION
            group.spec.min_member = size
        else:
            group.api_version = kinds.POD_GROUP.api_version
            group.spec.scheduling_policy.gang.min_count = size
            if self.gang_topology_key:
                group.spec.scheduling_constraints.topology.add(key=self.gang_topology_key)
            if self.priority_class:
                group.spec.priority_class_name = self.priority_class
        return group

    def member(self, index: int, group: objects_pb2.PodGroup) -> objects_pb2.Pod:
        """Pod ``index``, joining ``group`` the way the group's spelling does."""
        pod = self.pod(index)
        if group.api_version == COSCHEDULING_API_VERSION:
            pod.metadata.labels[POD_GROUP_LABEL] = group.metadata.name
        else:
            pod.spec.scheduling_group.pod_group_name = group.metadata.name
        return pod

    def submissions(self) -> Iterator[Submission]:
        """What the run submits, in order: single pods and gangs, ``count`` pods in all (forever without
        a count). A gang drawn larger than the pods left shrinks to them, or gives way to a single pod
        when fewer than the smallest gang size are left."""
        draw = random.Random(self.seed)
        index = gangs = 0
        while self.count is None or index < self.count:
            left = self.count - index if self.count is not None else None
            size = 0
            if self.gang_fraction > 0 and draw.random() < self.gang_fraction:
                size = draw.randint(*self.gang_size)
                coscheduling = draw.random() < 0.5
                if left is not None and size > left:
                    size = left if left >= self.gang_size[0] else 0
            if size == 0:
                yield Submission(None, [self.single(index)])
                index += 1
                continue
            group = self.pod_group(gangs, size, coscheduling=coscheduling)
            yield Submission(group, [self.member(i, group) for i in range(index, index + size)])
            index += size
            gangs += 1


@dataclass(frozen=True)
class Submission:
    """One step of a run: a single pod, or a gang's PodGroup and its pods."""

    pod_group: objects_pb2.PodGroup | None
    pods: list[objects_pb2.Pod]


@dataclass(frozen=True)
class Progress:
    """One moment of a run, by its informer's account."""

    submitted: int
    bound: int
    #: Deleted before they were ever seen bound.
    lost: int
    #: Seconds since the run started submitting.
    elapsed_s: float
    #: Gangs submitted (their pods are counted in ``submitted``).
    gangs: int = 0

    @property
    def pending(self) -> int:
        return self.submitted - self.bound - self.lost

    def line(self, count: int | None) -> str:
        target = f"/{count}" if count is not None else ""
        rate = self.submitted / self.elapsed_s if self.elapsed_s > 0 else 0.0
        lost = f", lost {self.lost} (deleted before bound)" if self.lost else ""
        gangs = f" ({self.gangs} gangs)" if self.gangs else ""
        return (f"submitted {self.submitted}{target}{gangs}, bound {self.bound}, pending {self.pending}"
                f"{lost} ({rate:.1f} pods/s)")


class LoadFailed(Exception):
    """The run could not reach its goal (the message says why)."""


class LoadGenerator:
    """Submits ``spec``'s pods through ``client`` and follows them with an informer.

    ``run()`` does the whole job; ``submitted``, ``bound`` and ``lost`` may be read at any time (the
    chaos tests compare them with the store's history).
    """

    def __init__(
        self, client: Client, spec: LoadSpec, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.spec = spec
        self._clock = clock
        #: Names of the pods created, in order.
        self.submitted: list[str] = []
        #: Names of the gangs' PodGroups created, in order.
        self.pod_groups: list[str] = []
        #: Pod name -> the node it was first seen bound to.
        self.bound: dict[str, str] = {}
        #: Names of pods deleted before they were seen bound.
        self.lost: set[str] = set()
        self._started_at: float | None = None
        self._changed = asyncio.Event()
        self._stop_submitting = asyncio.Event()
        self._informer = Informer(client, kinds.POD, namespace=spec.namespace, label_selector=spec.selector)
        self._informer.add_handler(on_add=self._seen, on_update=lambda _old, new: self._seen(new),
                                   on_delete=self._deleted)

    def stop(self) -> None:
        """Submit nothing after the submission under way, a whole gang included: ``run()`` then returns
        as if the count had been reached (it still waits for the binds with ``wait``)."""
        self._stop_submitting.set()

    def progress(self) -> Progress:
        elapsed = self._clock() - self._started_at if self._started_at is not None else 0.0
        submitted = set(self.submitted)
        return Progress(
            submitted=len(submitted),
            bound=len(submitted.intersection(self.bound)),
            lost=len(submitted.intersection(self.lost)),
            elapsed_s=elapsed,
            gangs=len(self.pod_groups),
        )

    async def run(
        self,
        *,
        wait: bool = False,
        wait_timeout_s: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        progress_every_s: float = 5.0,
    ) -> Progress:
        """Submit every pod (forever when the spec has no count), then, with ``wait``, wait until each is
        bound. Calls ``on_progress`` every ``progress_every_s`` meanwhile. The final Progress; LoadFailed
        when a pod was deleted before it was bound or ``wait_timeout_s`` passed with pods pending."""
        if wait and self.spec.count is None:
            raise ValueError("waiting for every pod to be bound needs a count")
        if progress_every_s <= 0:
            raise ValueError(f"progress_every_s must be positive, got {progress_every_s:g}")
        informing = asyncio.create_task(self._informer.run(), name="load-informer")
        reporting: asyncio.Task[None] | None = None
        try:
            await _first_done(self._informer.wait_synced(), informing)
            self._started_at = self._clock()
            if on_progress is not None:
                reporting = asyncio.create_task(
                    self._report(on_progress, progress_every_s), name="load-progress"
                )
            await _first_done(self._submit(), informing)
            if wait:
                await _first_done(self._wait_bound(wait_timeout_s), informing)
        finally:
            for task in (informing, reporting):
                if task is not None:
                    task.cancel()
            await asyncio.gather(informing, *(t for t in (reporting,) if t), return_exceptions=True)
        return self.progress()

    # ------------------------------------------------------------------------------------- internals

    async def _submit(self) -> None:
        interval = 1.0 / self.spec.rate
        assert self._started_at is not None
        next_at = self._started_at
        for submission in self.spec.submissions():
            delay = next_at - self._clock()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._stop_submitting.wait()
            if self._stop_submitting.is_set():
                return
            # A gang's pods go one right after the other; the pause after them keeps the average rate.
            if submission.pod_group is not None:
                await self._create(submission.pod_group)
                self.pod_groups.append(submission.pod_group.metadata.name)
            for pod in submission.pods:
                await self._create(pod)
                self.submitted.append(pod.metadata.name)
                self._changed.set()
            next_at = max(next_at + interval * len(submission.pods), self._clock() - MAX_CATCH_UP_S)

    async def _create(self, obj: objects_pb2.Pod | objects_pb2.PodGroup) -> None:
        while True:
            try:
                await self.client.create(obj)
                return
            except errors.AlreadyExists:
                # Names are unique to this run: an earlier attempt whose answer was lost did land.
                return
            except errors.Unavailable as exc:
                log.warning("creating %s %s/%s: %s; trying again", obj.kind, self.spec.namespace,
                            obj.metadata.name, exc.message)
                await asyncio.sleep(CREATE_RETRY_PAUSE_S)

    async def _wait_bound(self, timeout_s: float | None) -> None:
        try:
            async with asyncio.timeout(timeout_s):
                while True:
                    if self.lost.intersection(self.submitted):
                        names = ", ".join(sorted(self.lost.intersection(self.submitted)))
                        raise LoadFailed(f"pods deleted before they were bound: {names}")
                    if self.progress().pending == 0:
                        return
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            pending = sorted(set(self.submitted) - set(self.bound) - self.lost)
            shown = ", ".join(pending[:10]) + (f" and {len(pending) - 10} more" if len(pending) > 10 else "")
            raise LoadFailed(
                f"{len(pending)} pods still pending after {timeout_s:g}s: {shown}"
            ) from None

    async def _report(self, on_progress: Callable[[Progress], None], every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            on_progress(self.progress())

    def _seen(self, pod: objects_pb2.Pod) -> None:
        if pod.spec.node_name and pod.metadata.name not in self.bound:
            self.bound[pod.metadata.name] = pod.spec.node_name
            self._changed.set()

    def _deleted(self, pod: objects_pb2.Pod) -> None:
        if pod.spec.node_name:
            self._seen(pod)
        elif pod.metadata.name not in self.bound:
            self.lost.add(pod.metadata.name)
            self._changed.set()


async def _first_done(work: Coroutine[Any, Any, None], informing: asyncio.Task[None]) -> None:
    """Await ``work`` (a coroutine), unless the informer ends first: it only ends on an error the server
    will never stop giving (an unknown kind, a bad selector), which is then raised."""
    task = asyncio.create_task(work)
    try:
        await asyncio.wait({task, informing}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.done() and not task.cancelled():
        task.result()
        return
    informing.result()
    raise LoadFailed("the pod informer stopped")
