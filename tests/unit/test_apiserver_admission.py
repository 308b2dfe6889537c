"""Priority admission through the real service: pods get their priority from classes, classes obey
Kubernetes' reserved names, value ceiling and single globalDefault, system classes cannot go."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from tests import builders
from tests.builders import priority_class, resource_quota
from tests.unit.test_apiserver_server import Harness, api, make_pod

__all__ = ["api"]

GOLD = priority_class("gold", 1000)
NEVER = priority_class("never", 500, preemption_policy="Never")
DEFAULT = priority_class("fallback", 100, global_default=True)


def _pod(priority_class: str = "", priority: int | None = None, policy: str | None = None) -> objects_pb2.Pod:
    pod = make_pod("web", priority_class_name=priority_class)
    if priority_class.startswith("system-"):
        pod.metadata.namespace = "kube-system"  # the one namespace whose quota opens the system classes
    if priority is not None:
        pod.spec.priority = priority
    if policy is not None:
        pod.spec.preemption_policy = policy
    return pod


@pytest.mark.parametrize(
    ("classes", "pod", "priority", "class_name", "policy"),
    [
        ((), _pod(), 0, "", "PreemptLowerPriority"),
        ((GOLD,), _pod("gold"), 1000, "gold", "PreemptLowerPriority"),
        ((NEVER,), _pod("never"), 500, "never", "Never"),
        ((GOLD, DEFAULT), _pod(), 100, "fallback", "PreemptLowerPriority"),
        ((GOLD, DEFAULT), _pod("gold"), 1000, "gold", "PreemptLowerPriority"),
        ((), _pod("system-node-critical"), 2_000_001_000, "system-node-critical", "PreemptLowerPriority"),
        ((GOLD,), _pod("gold", priority=1000), 1000, "gold", "PreemptLowerPriority"),
        ((), _pod(priority=0), 0, "", "PreemptLowerPriority"),
        ((NEVER,), _pod("never", policy="Never"), 500, "never", "Never"),
    ],
    ids=[
        "no-class-no-default", "named", "class-policy", "global-default", "named-beats-default",
        "system-class",
        "matching-priority-given", "matching-zero-given", "matching-policy-given",
    ],
)
async def test_pod_priority(
    api: Harness,
    classes: tuple[objects_pb2.PriorityClass, ...],
    pod: objects_pb2.Pod,
    priority: int,
    class_name: str,
    policy: str,
) -> None:
    for pc in classes:
        await api.create(pc)
    created = await api.create(pod)
    assert created.spec.HasField("priority") and created.spec.priority == priority
    assert created.spec.priority_class_name == class_name
    assert created.spec.preemption_policy == policy


@pytest.mark.parametrize(
    ("classes", "pod", "message"),
    [
        ((), _pod("gold"), '^pods "web" is forbidden: no PriorityClass with name gold was found$'),
        (
            (GOLD,), _pod("gold", priority=7),
            r'^pods "web" is forbidden: the integer value of priority \(7\) must not be provided in pod '
            r"spec; priority admission controller computed 1000 from the given PriorityClass name$",
        ),
        (
            (), _pod(priority=5),
            r'^pods "web" is forbidden: the integer value of priority \(5\) must not be provided in pod '
            r"spec; priority admission controller computed 0 from the given PriorityClass name$",
        ),
        (
            (NEVER,), _pod("never", policy="PreemptLowerPriority"),
            r'^pods "web" is forbidden: the string value of PreemptionPolicy \(PreemptLowerPriority\) '
            r"must not be provided in pod spec; priority admission controller computed Never from the given "
            r"PriorityClass name$",
        ),
    ],
    ids=["unknown-class", "wrong-priority", "priority-without-class", "wrong-policy"],
)
async def test_pod_priority_refused(
    api: Harness, classes: tuple[objects_pb2.PriorityClass, ...], pod: objects_pb2.Pod, message: str
) -> None:
    for pc in classes:
        await api.create(pc)
    with pytest.raises(errors.Forbidden, match=message):
        await api.create(pod)
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")


async def test_generated_pod_names_are_not_in_forbidden_messages_before_they_exist(api: Harness) -> None:
    pod = _pod("gold")
    pod.metadata.name = ""
    pod.metadata.generate_name = "web-"
    message = r'^pods "web-\w{5}" is forbidden: no PriorityClass with name gold'
    with pytest.raises(errors.Forbidden, match=message):
        await api.create(pod)


async def test_updates_keep_the_admitted_priority(api: Harness) -> None:
    await api.create(GOLD)
    created = await api.create(_pod("gold"))
    change = objects_pb2.Pod()
    change.CopyFrom(created)
    change.spec.ClearField("priority")
    change.spec.ClearField("preemption_policy")
    change.metadata.labels["a"] = "b"
    updated = await api.update(change)
    assert updated.spec.priority == 1000 and updated.spec.preemption_policy == "PreemptLowerPriority"
    change.CopyFrom(updated)
    change.spec.priority = 1
    with pytest.raises(errors.Invalid, match=r'^Pod "web" is invalid: spec: Forbidden: pod updates may not'):
        await api.update(change)


@pytest.mark.parametrize(
    ("pc", "error", "message"),
    [
        (
            priority_class("huge", 1_000_000_001), errors.Invalid,
            r'^PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed value '
            r"of a user defined priority is 1000000000$",
        ),
        (
            priority_class("system-mine", 10), errors.Invalid,
            r'^PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: '
            r"priority class names with 'system-' prefix are reserved for system use only. error: "
            r"system-mine is not a known system priority class$",
        ),
        (
            priority_class("system-node-critical", 10), errors.Invalid,
            r"reserved for system use only. error: value of system-node-critical PriorityClass must be "
            r"2000001000$",
        ),
        (
            priority_class("system-cluster-critical", 2_000_000_000), errors.AlreadyExists,
            r'^priorityclasses.scheduling.k8s.io "system-cluster-critical" already exists$',
        ),
        (
            priority_class("odd", 10, preemption_policy="Sometimes"), errors.Invalid,
            r'preemptionPolicy: Unsupported value: "Sometimes"',
        ),
    ],
    ids=["above-user-ceiling", "system-prefix", "system-name-wrong-value", "system-exists", "bad-policy"],
)
async def test_priority_class_rules(
    api: Harness, pc: objects_pb2.PriorityClass, error: type[errors.ApiError], message: str
) -> None:
    with pytest.raises(error, match=message):
        await api.create(pc)


async def test_the_user_ceiling_itself_is_allowed(api: Harness) -> None:
    created = await api.create(priority_class("top", 1_000_000_000))
    assert created.value == 1_000_000_000 and created.preemption_policy == "PreemptLowerPriority"


async def test_only_one_global_default(api: Harness) -> None:
    await api.create(DEFAULT)
    message = (
        r'^priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass fallback is already marked '
        r"as default. Only one default can exist$"
    )
    with pytest.raises(errors.Forbidden, match=message):
        await api.create(priority_class("other", 5, global_default=True))
    # Marking an existing class as default is refused the same way; re-saving the default is fine.
    other = await api.create(priority_class("other", 5))
    other.global_default = True
    with pytest.raises(errors.Forbidden, match=message):
        await api.update(other)
    current = await api.get("PriorityClass", "fallback")
    current.description = "still the default"
    assert (await api.update(current)).description == "still the default"


async def test_priority_class_value_and_policy_are_immutable(api: Harness) -> None:
    gold = await api.create(GOLD)
    gold.value = 2000
    with pytest.raises(errors.Invalid, match=r"value: Forbidden: may not be changed in an update."):
        await api.update(gold)


@pytest.mark.parametrize("name", ["system-cluster-critical", "system-node-critical"])
async def test_system_classes_cannot_be_deleted(api: Harness, name: str) -> None:
    with pytest.raises(
        errors.Forbidden,
        match=rf'^priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system priority class '
        "and cannot be deleted$",
    ):
        await api.delete("PriorityClass", name)
    assert (await api.get("PriorityClass", name)).metadata.name == name


async def test_user_classes_can_be_deleted(api: Harness) -> None:
    await api.create(GOLD)
    await api.delete("PriorityClass", "gold")
    with pytest.raises(errors.NotFound):
        await api.get("PriorityClass", "gold")


# ------------------------------------------------------------------------------------------ pod groups


def _group(priority_class: str = "", priority: int | None = None,
           api_version: str = "scheduling.k8s.io/v1alpha3") -> objects_pb2.PodGroup:
    if api_version != builders.UPSTREAM:
        return builders.pod_group(api_version=api_version, min_member=2, priority=priority)
    # As a pod of a system class: only a quota opens kube-system.
    namespace = "kube-system" if priority_class.startswith("system-") else "default"
    return builders.pod_group("g", namespace, min_count=2, priority_class=priority_class, priority=priority)


# The pod table's cases, for a group (its preemption policy: test_group_priority_admission.py).
@pytest.mark.parametrize(
    ("classes", "group", "priority", "class_name"),
    [
        ((), _group(), 0, ""),
        ((GOLD,), _group("gold"), 1000, "gold"),
        ((NEVER,), _group("never"), 500, "never"),
        ((GOLD, DEFAULT), _group(), 100, "fallback"),
        ((GOLD, DEFAULT), _group("gold"), 1000, "gold"),
        ((), _group("system-node-critical"), 2_000_001_000, "system-node-critical"),
        ((GOLD,), _group("gold", priority=1000), 1000, "gold"),
        ((), _group(priority=0), 0, ""),
    ],
    ids=[
        "no-class-no-default", "named", "class-policy", "global-default", "named-beats-default",
        "system-class", "matching-priority-given", "matching-zero-given",
    ],
)
async def test_pod_group_priority(
    api: Harness, classes: tuple[objects_pb2.PriorityClass, ...], group: objects_pb2.PodGroup, priority: int,
    class_name: str,
) -> None:
    for pc in classes:
        await api.create(pc)
    created = await api.create(group)
    assert (created.spec.priority, created.spec.priority_class_name) == (priority, class_name)


@pytest.mark.parametrize(
    ("classes", "group", "message"),
    [
        ((), _group("gold"), r'^podgroups\.scheduling\.k8s\.io "g" is forbidden: no PriorityClass with name '
                             r"gold was found$"),
        (
            (GOLD,), _group("gold", priority=7),
            r'^podgroups\.scheduling\.k8s\.io "g" is forbidden: the integer value of priority \(7\) must '
            r"not be provided in podgroup spec; priority admission controller computed 1000 from the given "
            r"PriorityClass name$",
        ),
        (
            (), _group(priority=5),
            r'^podgroups\.scheduling\.k8s\.io "g" is forbidden: the integer value of priority \(5\) must '
            r"not be provided in podgroup spec; priority admission controller computed 0 from the given "
            r"PriorityClass name$",
        ),
    ],
    ids=["unknown-class", "wrong-priority", "priority-without-class"],
)
async def test_pod_group_priority_refused(
    api: Harness, classes: tuple[objects_pb2.PriorityClass, ...], group: objects_pb2.PodGroup, message: str
) -> None:
    for pc in classes:
        await api.create(pc)
    with pytest.raises(errors.Forbidden, match=message):
        await api.create(group)
    with pytest.raises(errors.NotFound):
        await api.get("PodGroup", "g", namespace=group.metadata.namespace)


NOT_OPENED = (
    r"insufficient quota to match these scopes: "
    r"\[\{PriorityClass In \[system-node-critical system-cluster-critical\]\}\]$"
)


@pytest.mark.parametrize("priority_class", ["system-node-critical", "system-cluster-critical"])
@pytest.mark.parametrize(
    ("make", "refused_as"),
    [(_pod, r'^pods "web" is forbidden: '), (_group, r'^podgroups\.scheduling\.k8s\.io "g" is forbidden: ')],
    ids=["pod", "pod-group"],
)
async def test_system_classes_only_where_a_quota_opens_them(
    api: Harness, make: Any, refused_as: str, priority_class: str
) -> None:
    """A group's priority orders the queue as a pod's does, so a system class is refused to a group
    exactly where it is refused to a pod: in a namespace without a quota that opens it."""
    obj = make(priority_class)
    assert obj.metadata.namespace == "kube-system"  # whose quota, made at start, opens both classes
    assert (await api.create(obj, dry_run=True)).spec.priority >= 2_000_000_000
    obj.metadata.namespace = "team"
    for dry_run in (True, False):
        with pytest.raises(errors.Forbidden, match=refused_as + NOT_OPENED):
            await api.create(obj, dry_run=dry_run)
    # A quota that opens the other system class does not open this one; one that opens this one does.
    other = "system-cluster-critical" if priority_class == "system-node-critical" else "system-node-critical"
    await api.create(resource_quota("critical", "team", hard={"pods": "5"}, priority_classes=[other]))
    with pytest.raises(errors.Forbidden, match=refused_as + NOT_OPENED):
        await api.create(obj)
    await api.delete("ResourceQuota", "critical", namespace="team")
    opening = resource_quota("critical", "team", hard={"pods": "5"}, priority_classes=[priority_class])
    await api.create(opening)
    assert (await api.create(obj)).spec.priority_class_name == priority_class


async def test_a_coscheduling_group_has_no_priority_even_with_a_default_class(api: Harness) -> None:
    await api.create(DEFAULT)
    created = await api.create(_group(api_version="scheduling.x-k8s.io/v1alpha1"))
    assert not created.spec.HasField("priority") and created.spec.priority_class_name == ""
    assert created.api_version == "scheduling.x-k8s.io/v1alpha1"


async def test_pod_group_updates_keep_the_admitted_priority_and_the_api_version(api: Harness) -> None:
    await api.create(GOLD)
    created = await api.create(_group("gold"))
    change = objects_pb2.PodGroup()
    change.CopyFrom(created)
    change.spec.ClearField("priority")
    change.api_version = ""
    change.metadata.labels["a"] = "b"
    updated = await api.update(change)
    assert updated.spec.priority == 1000 and updated.api_version == "scheduling.k8s.io/v1alpha3"
    change.CopyFrom(updated)
    change.api_version = "scheduling.x-k8s.io/v1alpha1"
    with pytest.raises(errors.Invalid, match=r'apiVersion: Invalid value: "scheduling\.x-k8s\.io/v1alpha1": '
                                             r"field is immutable"):
        await api.update(change)
    change.api_version = "scheduling.k8s.io/v1beta1"
    with pytest.raises(errors.Invalid, match=r'apiVersion: Unsupported value: "scheduling\.k8s\.io/v1beta1": '
                                             r'supported values: "scheduling\.k8s\.io/v1alpha3", '
                                             r'"scheduling\.x-k8s\.io/v1alpha1"'):
        await api.update(change)
