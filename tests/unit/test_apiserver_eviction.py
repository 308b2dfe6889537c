"""The pods/eviction subresource (cluster.apiserver.eviction) over real Verbs on an in-memory store:
kube-apiserver's eviction_test.go tables (TestEviction, TestEvictionIgnorePDB with both unhealthy pod
eviction policies, TestEvictionDryRun) translated, and the budget's status after an eviction, its
compare-and-swap and the deleteOptions the eviction carries.

One difference in the inputs: podsched has no kubelet, so a bound Running pod with no Ready condition is
Ready (cluster.api.readiness), where upstream's test pods without one are not; the tables say "ready" or
"unready" of each pod instead."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2, timeutil
from cluster.api.kinds import POD, POD_DISRUPTION_BUDGET
from cluster.apiserver import binding, eviction
from cluster.apiserver.eviction import Retry, evict
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.memory import MemoryStore
from tests import builders

NOW = 1_700_000_000.0
NS = "default"
LABELS = {"a": "true"}
MATCHING = {"matchLabels": LABELS}
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
ALL_POLICIES = ("", "IfHealthyBudget", "AlwaysAllow")


class Interloper(Verbs):
    """Verbs whose next pod deletes or budget status writes first run ``before_delete`` /
    ``before_status`` (each once): another writer getting there between the eviction's read and its
    write."""

    before_delete: list[Callable[[], Awaitable[object]]]
    before_status: list[Callable[[], Awaitable[object]]]

    async def delete(self, *args: Any, **kwargs: Any) -> Message:
        if self.before_delete:
            await self.before_delete.pop(0)()
        return await super().delete(*args, **kwargs)

    async def update_status(self, obj: Message, **kwargs: Any) -> Message:
        if isinstance(obj, objects_pb2.PodDisruptionBudget) and self.before_status:
            await self.before_status.pop(0)()
        return await super().update_status(obj, **kwargs)


@pytest.fixture
def verbs(monkeypatch: pytest.MonkeyPatch) -> Interloper:
    monkeypatch.setattr(eviction, "EVICTIONS_RETRY", Retry(interval_s=0.0))
    verbs = Interloper(Storage(MemoryStore()), clock=lambda: NOW)
    verbs.before_delete, verbs.before_status = [], []
    return verbs


async def make_pod(
    verbs: Verbs, name: str, phase: str = "Running", *, ready: bool = True, terminating: bool = False,
    labels: dict[str, str] | None = None,
) -> objects_pb2.Pod:
    """A pod labelled ``LABELS``: bound (so Running) unless ``phase`` is Pending; ``ready`` False writes a
    Ready=False condition; ``terminating`` marks it for a graceful deletion."""
    pod = builders.pod(name, NS, labels=LABELS if labels is None else labels, image=builders.IMAGE,
                       node_name="" if phase == "Pending" else "n1")
    created: Any = await verbs.create(pod)
    if phase not in ("Pending", "Running") or not ready:
        if phase not in ("Pending", "Running"):
            created.status.phase = phase
        if not ready:
            created.status.conditions.add(type="Ready", status="False")
        created = await verbs.update_status(created)
    if terminating:
        created = await verbs.delete(POD, NS, name, grace_period_seconds=30)
    assert isinstance(created, objects_pb2.Pod)
    return created


@dataclass(frozen=True)
class Status:
    allowed: int = 0
    current: int = 0
    desired: int = 0
    expected: int = 0
    #: observedGeneration behind generation by this much.
    lag: int = 0


async def make_pdb(
    verbs: Verbs, name: str = "foo", status: Status = Status(), *, policy: str = "",
    selector: dict[str, Any] | None = MATCHING, namespace: str = NS,
) -> objects_pb2.PodDisruptionBudget:
    """A budget whose status says ``status``; ``selector`` None: it has none."""
    spec = {"unhealthyPodEvictionPolicy": policy} if policy else {}
    pdb = builders.pdb(name, namespace, spec=spec, selector=selector)
    created: Any = await verbs.create(pdb)
    created.status.CopyFrom(objects_pb2.PodDisruptionBudgetStatus(
        observed_generation=created.metadata.generation - status.lag, disruptions_allowed=status.allowed,
        current_healthy=status.current, desired_healthy=status.desired, expected_pods=status.expected,
    ))
    written = await verbs.update_status(created)
    assert isinstance(written, objects_pb2.PodDisruptionBudget)
    return written


def an_eviction(name: str, namespace: str = NS, **options: Any) -> objects_pb2.Eviction:
    """An Eviction of pod ``name``; ``options`` are deleteOptions' fields in their JSON spelling."""
    result = objects_pb2.Eviction(metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace))
    delete_options = result.delete_options
    if "gracePeriodSeconds" in options:
        delete_options.grace_period_seconds = options["gracePeriodSeconds"]
    delete_options.dry_run.extend(options.get("dryRun", ()))
    delete_options.preconditions.uid = options.get("uid", "")
    delete_options.preconditions.resource_version = options.get("resourceVersion", "")
    return result


async def stored_pod(verbs: Verbs, name: str) -> objects_pb2.Pod | None:
    pod = await verbs.registry.get(POD, NS, name)
    assert pod is None or isinstance(pod, objects_pb2.Pod)
    return pod


async def stored_pdb(verbs: Verbs, name: str = "foo") -> objects_pb2.PodDisruptionBudget:
    pdb = await verbs.registry.require(POD_DISRUPTION_BUDGET, NS, name)
    assert isinstance(pdb, objects_pb2.PodDisruptionBudget)
    return pdb


def cause_of(exc: errors.ApiError) -> str:
    assert exc.details is not None
    [cause] = exc.details.causes
    assert cause.type == "DisruptionBudget"
    return cause.message


# ------------------------------------------------------------------------------------ TestEviction


@dataclass(frozen=True)
class Case:
    name: str
    pod: str
    phase: str = "Running"
    ready: bool = True
    terminating: bool = False
    pdb: Status | None = None
    selector: dict[str, Any] | None = field(default_factory=lambda: MATCHING)
    policies: tuple[str, ...] = ALL_POLICIES
    #: The refusal's cause (a 429's DisruptionBudget cause); "" when the pod is evicted.
    refused: str = ""
    #: The budget spends one disruption on the pod.
    spends: bool = False


EVICTION_CASES = [
    Case("matching pdbs with no disruptions allowed, pod running", "t1", pdb=Status(),
         refused="The disruption budget foo needs 0 healthy pods and has 0 currently"),
    Case("matching pdbs with no disruptions allowed, pod pending", "t2", phase="Pending", pdb=Status()),
    Case("matching pdbs with no disruptions allowed, pod succeeded", "t3", phase="Succeeded", pdb=Status()),
    Case("matching pdbs with no disruptions allowed, pod failed", "t4", phase="Failed", pdb=Status()),
    Case("matching pdbs with disruptions allowed", "t5", pdb=Status(allowed=1), spends=True),
    Case("non-matching pdbs", "t6", pdb=Status(), selector={"matchLabels": {"b": "true"}}),
    Case("matching pdbs with no disruptions allowed, pod running, empty selector", "t7", pdb=Status(),
         selector={}),
    Case("matching pdbs with no disruptions allowed, pod running, no selector", "t8", pdb=Status(),
         selector=None),
    Case("no pdbs, pod running", "t9"),
    Case("matching pdbs with disruptions allowed, pod terminating", "t10", terminating=True,
         pdb=Status(allowed=1)),
    Case("matching pdbs with no disruptions allowed, pod terminating", "t11", terminating=True,
         pdb=Status()),
    # TestEvictionIgnorePDB
    Case("pdbs no disruptions allowed, pod running, pod healthy, unhealthy pod not ours", "t12",
         pdb=Status(current=1, desired=1, expected=1),
         refused="The disruption budget foo needs 1 healthy pods and has 1 currently"),
    Case("pdbs no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours", "t13", ready=False,
         pdb=Status(current=2, desired=2, expected=3)),
    Case("pdbs disruptions allowed, pod running, pod unhealthy, unhealthy pod ours", "t14", ready=False,
         pdb=Status(allowed=1, current=3, desired=2, expected=3)),
    Case("pdbs no disruptions allowed, pod unhealthy, budget not met, IfHealthyBudget", "t15", ready=False,
         pdb=Status(current=1, desired=2, expected=3), policies=("", "IfHealthyBudget"),
         refused="The disruption budget foo needs 2 healthy pods and has 1 currently"),
    Case("pdbs no disruptions allowed, pod unhealthy, budget not met, AlwaysAllow", "t16", ready=False,
         pdb=Status(current=1, desired=2, expected=3), policies=("AlwaysAllow",)),
    Case("pdbs disruptions allowed, pod unhealthy, budget not met, IfHealthyBudget", "t17", ready=False,
         pdb=Status(allowed=1, current=1, desired=2, expected=3), policies=("", "IfHealthyBudget"),
         spends=True),
    Case("pdbs no disruptions allowed, pod unhealthy, nothing desired", "t18", ready=False,
         pdb=Status(), policies=("", "IfHealthyBudget"),
         refused="The disruption budget foo needs 0 healthy pods and has 0 currently"),
    Case("pdbs no disruptions allowed, pod unhealthy, nothing desired, AlwaysAllow", "t19", ready=False,
         pdb=Status(), policies=("AlwaysAllow",)),
]


@pytest.mark.parametrize(
    ("case", "policy"),
    [(case, policy) for case in EVICTION_CASES for policy in case.policies],
    ids=[f"{case.name} [{policy or 'unset'}]" for case in EVICTION_CASES for policy in case.policies],
)
async def test_eviction(verbs: Interloper, case: Case, policy: str) -> None:
    pod = await make_pod(verbs, case.pod, case.phase, ready=case.ready, terminating=case.terminating)
    if case.pdb is not None:
        await make_pdb(verbs, status=case.pdb, policy=policy, selector=case.selector)
    before = None if case.pdb is None else await stored_pdb(verbs)

    if case.refused:
        with pytest.raises(errors.TooManyRequests) as refusal:
            await evict(verbs, NS, case.pod, an_eviction(case.pod, gracePeriodSeconds=0), dry_run=False)
        assert refusal.value.message == VIOLATION
        assert refusal.value.http_code == 429
        assert cause_of(refusal.value) == case.refused
        # No Retry-After: kube-apiserver sends none for a budget that allows no disruption.
        assert refusal.value.details is not None and refusal.value.details.retry_after_seconds == 0
        assert await stored_pod(verbs, case.pod) == pod
        assert await stored_pdb(verbs) == before
        return

    await evict(verbs, NS, case.pod, an_eviction(case.pod, gracePeriodSeconds=0), dry_run=False)
    assert await stored_pod(verbs, case.pod) is None
    if before is not None:
        after = await stored_pdb(verbs)
        if case.spends:
            assert after.status.disruptions_allowed == before.status.disruptions_allowed - 1
            assert dict(after.status.disrupted_pods) == {case.pod: timeutil.from_seconds(NOW)}
        else:
            assert after == before


async def test_a_terminating_pod_evicted_without_a_grace_period_stays_as_it_is(verbs: Interloper) -> None:
    pod = await make_pod(verbs, "web", terminating=True)
    before = await make_pdb(verbs, status=Status())
    await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert await stored_pod(verbs, "web") == pod
    assert await stored_pdb(verbs) == before


async def test_a_missing_pod_is_not_found(verbs: Interloper) -> None:
    with pytest.raises(errors.NotFound, match=r'^pods "ghost" not found$'):
        await evict(verbs, NS, "ghost", an_eviction("ghost"), dry_run=False)


async def test_a_bad_name_in_the_url_is_a_bad_request(verbs: Interloper) -> None:
    await make_pod(verbs, "t7")
    await make_pdb(verbs, status=Status(allowed=1))
    with pytest.raises(errors.BadRequest, match=r"^name in URL does not match name in Eviction object$"):
        await evict(verbs, NS, "t7", an_eviction("t8"), dry_run=False)
    with pytest.raises(errors.BadRequest, match=r"^the namespace of the provided object does not match"):
        await evict(verbs, NS, "t7", an_eviction("t7", namespace="other"), dry_run=False)
    assert await stored_pod(verbs, "t7") is not None
    # A body without a namespace takes the request's.
    await evict(verbs, NS, "t7", an_eviction("t7", namespace=""), dry_run=False)
    assert (await stored_pod(verbs, "t7")) is not None  # marked for its grace period
    assert (await stored_pdb(verbs)).status.disruptions_allowed == 0


async def test_more_than_one_budget_is_refused(verbs: Interloper) -> None:
    pod = await make_pod(verbs, "web")
    await make_pdb(verbs, "one", Status(allowed=1))
    await make_pdb(verbs, "two", Status(allowed=1), selector={"matchExpressions": [
        {"key": "a", "operator": "Exists"}]})
    # A budget of another namespace does not count.
    await make_pdb(verbs, "elsewhere", Status(allowed=1), namespace="other")
    with pytest.raises(errors.ApiError) as refusal:
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert type(refusal.value) is errors.ApiError
    assert refusal.value.http_code == 500
    assert refusal.value.message == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
    assert await stored_pod(verbs, "web") == pod


async def test_a_budget_whose_status_lags_its_spec_asks_to_retry_later(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(allowed=3, lag=1))
    with pytest.raises(errors.TooManyRequests) as refusal:
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert refusal.value.message == VIOLATION
    assert cause_of(refusal.value) == "The disruption budget foo is still being processed by the server."
    assert refusal.value.details is not None and refusal.value.details.retry_after_seconds == 10


async def test_a_negative_budget_forbids(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(allowed=-1))
    with pytest.raises(errors.Forbidden, match=(
            r'^poddisruptionbudget.policy "foo" is forbidden: pdb disruptions allowed is negative$')):
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)


async def test_too_many_unconfirmed_evictions_forbid(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    pdb: Any = await make_pdb(verbs, status=Status(allowed=5))
    for i in range(eviction.MAX_DISRUPTED_POD_SIZE + 1):
        pdb.status.disrupted_pods[f"gone-{i}"].CopyFrom(timeutil.from_seconds(NOW))
    await verbs.update_status(pdb)
    with pytest.raises(errors.Forbidden, match=(
            r'^poddisruptionbudget.policy "foo" is forbidden: DisruptedPods map too big - too many '
            r"evictions not confirmed by PDB controller$")):
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)


# --------------------------------------------------------------------------------- deleteOptions


async def test_the_eviction_deletes_gracefully_with_its_grace_period(verbs: Interloper) -> None:
    await make_pod(verbs, "default-grace")
    await make_pod(verbs, "short-grace")
    await evict(verbs, NS, "default-grace", an_eviction("default-grace"), dry_run=False)
    await evict(verbs, NS, "short-grace", an_eviction("short-grace", gracePeriodSeconds=5), dry_run=False)
    default_grace = await stored_pod(verbs, "default-grace")
    short_grace = await stored_pod(verbs, "short-grace")
    assert default_grace is not None and short_grace is not None
    assert default_grace.metadata.deletion_grace_period_seconds == 30
    assert default_grace.metadata.deletion_timestamp.seconds == NOW + 30
    assert short_grace.metadata.deletion_grace_period_seconds == 5


async def test_preconditions_on_uid_and_resource_version(verbs: Interloper) -> None:
    pod = await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(allowed=3))
    with pytest.raises(errors.Conflict, match=(
            r'^Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: '
            rf"other-uid, UID in object meta: {pod.metadata.uid}$")):
        await evict(verbs, NS, "web", an_eviction("web", uid="other-uid", gracePeriodSeconds=0),
                    dry_run=False)
    stale = str(int(pod.metadata.resource_version) - 1)
    with pytest.raises(errors.Conflict, match=(
            r"Precondition failed: ResourceVersion in precondition: "
            rf"{stale}, ResourceVersion in object meta: {pod.metadata.resource_version}$")):
        await evict(verbs, NS, "web", an_eviction("web", resourceVersion=stale, gracePeriodSeconds=0),
                    dry_run=False)
    assert await stored_pod(verbs, "web") is not None
    # As kube-apiserver: the budget is spent before the deletion is tried (the disruption controller
    # gives it back when the pod's disruptedPods entry runs out).
    assert (await stored_pdb(verbs)).status.disruptions_allowed == 1
    await evict(verbs, NS, "web", an_eviction(
        "web", uid=pod.metadata.uid, resourceVersion=pod.metadata.resource_version, gracePeriodSeconds=0),
        dry_run=False)
    assert await stored_pod(verbs, "web") is None


# ---------------------------------------------------------------------------- TestEvictionDryRun


@pytest.mark.parametrize(
    ("requested", "in_body", "with_pdb"),
    [(True, [], False), (False, ["All"], False), (True, ["All"], False), (True, ["All"], True)],
    ids=["just request-options", "just eviction-options", "both options", "with pdbs"],
)
async def test_eviction_dry_run(
    verbs: Interloper, requested: bool, in_body: list[str], with_pdb: bool
) -> None:
    pod = await make_pod(verbs, "web")
    before = await make_pdb(verbs, status=Status(allowed=1)) if with_pdb else None
    await evict(verbs, NS, "web", an_eviction("web", dryRun=in_body, gracePeriodSeconds=0), dry_run=requested)
    assert await stored_pod(verbs, "web") == pod
    if before is not None:
        assert await stored_pdb(verbs) == before


async def test_a_dry_run_still_refuses_what_the_budget_refuses(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(current=1, desired=1))
    with pytest.raises(errors.TooManyRequests):
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=True)


async def test_non_matching_dry_run_options_are_refused(verbs: Interloper) -> None:
    pod = await make_pod(verbs, "web")
    with pytest.raises(errors.ApiError) as refusal:
        await evict(verbs, NS, "web", an_eviction("web", dryRun=["Some"]), dry_run=True)
    assert refusal.value.http_code == 500
    assert refusal.value.message == "Non-matching dry-run options in request and content: [All] and [Some]"
    assert await stored_pod(verbs, "web") == pod


# ---------------------------------------------------------------------------------------- races


async def _relabel(verbs: Verbs, name: str) -> None:
    """Another writer changes the pod (a new resourceVersion, nothing else that matters)."""
    pod: Any = await verbs.get(POD, NS, name)
    pod.metadata.annotations["touched"] = "yes"
    await verbs.update(pod)


async def _bind(verbs: Verbs, name: str) -> None:
    """The scheduler binds the pod meanwhile (and the API server reports it Running)."""
    await verbs.create(builders.node("n1"))
    await binding.bind(verbs.registry, objects_pb2.Binding(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=NS),
        target=objects_pb2.ObjectReference(kind="Node", name="n1")), verbs.now())


async def test_a_pending_pod_changed_meanwhile_is_read_again_and_deleted(verbs: Interloper) -> None:
    await make_pod(verbs, "web", "Pending")
    await make_pdb(verbs, status=Status())
    verbs.before_delete.append(lambda: _relabel(verbs, "web"))
    await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert await stored_pod(verbs, "web") is None


async def test_a_pending_pod_that_starts_running_meanwhile_is_guarded_by_its_budget(
    verbs: Interloper,
) -> None:
    await make_pod(verbs, "web", "Pending")
    await make_pdb(verbs, status=Status(current=1, desired=1))
    verbs.before_delete.append(lambda: _bind(verbs, "web"))
    with pytest.raises(errors.TooManyRequests) as refusal:
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert cause_of(refusal.value) == "The disruption budget foo needs 1 healthy pods and has 1 currently"
    stored = await stored_pod(verbs, "web")
    assert stored is not None and stored.spec.node_name == "n1"


async def test_an_unhealthy_pod_changed_meanwhile_asks_to_retry(verbs: Interloper) -> None:
    await make_pod(verbs, "web", ready=False)
    await make_pdb(verbs, status=Status(current=2, desired=2))
    verbs.before_delete.append(lambda: _relabel(verbs, "web"))
    with pytest.raises(errors.TooManyRequests) as refusal:
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert cause_of(refusal.value) == "The disruption budget foo is still being processed by the server."
    assert refusal.value.details is not None and refusal.value.details.retry_after_seconds == 10
    assert await stored_pod(verbs, "web") is not None


async def test_an_unhealthy_pod_with_a_stale_resource_version_precondition_conflicts(
    verbs: Interloper,
) -> None:
    pod = await make_pod(verbs, "web", ready=False)
    await make_pdb(verbs, status=Status(current=2, desired=2))
    verbs.before_delete.append(lambda: _relabel(verbs, "web"))
    with pytest.raises(errors.Conflict, match="Precondition failed: ResourceVersion in precondition"):
        await evict(verbs, NS, "web", an_eviction("web", resourceVersion=pod.metadata.resource_version),
                    dry_run=False)


async def _set_allowed(verbs: Verbs, allowed: int, healthy: int | None = None) -> None:
    """The disruption controller writes a new status meanwhile."""
    pdb: Any = await stored_pdb(verbs)
    pdb.status.disruptions_allowed = allowed
    if healthy is not None:
        pdb.status.current_healthy = healthy
    await Verbs.update_status(verbs, pdb)  # not through the Interloper: it interrupts only the eviction


async def test_a_budget_changed_meanwhile_is_decided_again_from_its_new_status(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(allowed=1, current=2, desired=1))
    verbs.before_status.append(lambda: _set_allowed(verbs, 0))
    with pytest.raises(errors.TooManyRequests) as refusal:
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert cause_of(refusal.value) == "The disruption budget foo needs 1 healthy pods and has 2 currently"
    assert (await stored_pdb(verbs)).status.disrupted_pods == {}

    await _set_allowed(verbs, 1)
    verbs.before_status.append(lambda: _set_allowed(verbs, 2))
    await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    after = await stored_pdb(verbs)
    assert after.status.disruptions_allowed == 1
    assert list(after.status.disrupted_pods) == ["web"]


async def test_a_budget_that_keeps_changing_ends_in_a_conflict(verbs: Interloper) -> None:
    await make_pod(verbs, "web")
    await make_pdb(verbs, status=Status(allowed=5, current=6, desired=1))
    attempts = eviction.EVICTIONS_RETRY.attempts
    verbs.before_status.extend(
        lambda healthy=healthy: _set_allowed(verbs, 5, healthy)
        for healthy in range(10, 10 + attempts))
    with pytest.raises(errors.Conflict):
        await evict(verbs, NS, "web", an_eviction("web"), dry_run=False)
    assert verbs.before_status == []
    assert await stored_pod(verbs, "web") is not None
