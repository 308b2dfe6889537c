"""Request bodies into objects as kube-apiserver decodes them (type meta, fieldValidation Strict, Warn and
Ignore), objects out as its JSON carries them, and errors as its metav1.Status."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.version import kubernetes_version_info
from cluster.apiserver.http import codec
from cluster.apiserver.http.paths import parse
from cluster.apiserver.http.status import retry_after, status_of

PODS = parse("/api/v1/namespaces/default/pods").resource
NODES = parse("/api/v1/nodes").resource


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_a_body_without_type_meta_takes_the_urls() -> None:
    obj, warnings = codec.decode({"metadata": {"name": "n1"}}, NODES, "Strict")
    assert (obj.api_version, obj.kind, obj.metadata.name) == ("v1", "Node", "n1")
    assert warnings == []


@pytest.mark.parametrize(("body", "message"), [
    ({"apiVersion": "apps/v1", "kind": "Pod"},
     "the API version in the data (apps/v1) does not match the expected API version (v1)"),
    ({"apiVersion": "v1", "kind": "Node"},
     "the kind in the data (Node) does not match the expected kind (Pod)"),
    ([1, 2], 'Pod in version "v1" cannot be handled as a Pod: the body is not a JSON object'),
    (_pod(priority="high"), 'Pod in version "v1" cannot be handled as a Pod: spec.priority: Invalid value: '
                            '"high": expected an integer, got string'),
])
def test_a_body_that_is_not_the_kind_is_a_bad_request(body: Any, message: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        codec.decode(body, PODS, "Warn")
    assert str(raised.value).startswith(message)
    assert raised.value.http_code == 400


def test_strict_refuses_an_unknown_field_and_names_every_one() -> None:
    with pytest.raises(errors.BadRequest) as raised:
        codec.decode(_pod(nodeSelecter={"a": "b"}, bogus=1), PODS, "Strict")
    assert str(raised.value) == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                 'unknown field "spec.nodeSelecter", unknown field "spec.bogus"')


def test_strict_refuses_a_field_given_twice() -> None:
    body = codec.read_body(b'{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","name":"b"}}')
    with pytest.raises(errors.BadRequest, match=r'duplicate field "metadata\.name"'):
        codec.decode(body, NODES, "Strict")


def test_warn_sends_each_dropped_field_as_a_warning() -> None:
    obj, warnings = codec.decode(_pod(nodeSelecter={"a": "b"}, ephemeralContainers=[]), PODS, "Warn")
    assert obj.metadata.name == "web"
    assert warnings == ['unknown field "spec.nodeSelecter"',
                        "spec.ephemeralContainers: a Kubernetes field podsched does not model (ignored)"]


def test_a_real_field_podsched_does_not_model_is_never_refused() -> None:
    _, warnings = codec.decode(_pod(ephemeralContainers=[]), PODS, "Strict")
    assert warnings == ["spec.ephemeralContainers: a Kubernetes field podsched does not model (ignored)"]


def test_ignore_drops_silently() -> None:
    _, warnings = codec.decode(_pod(nodeSelecter={"a": "b"}, ephemeralContainers=[]), PODS, "Ignore")
    assert warnings == []


@pytest.mark.parametrize(("value", "expected"), [(None, "Warn"), ("", "Warn"), ("Strict", "Strict"),
                                                 ("Ignore", "Ignore")])
def test_field_validation_defaults_to_warn(value: str | None, expected: str) -> None:
    assert codec.field_validation_of(value) == expected


def test_an_unknown_field_validation_is_a_bad_request() -> None:
    with pytest.raises(errors.BadRequest, match='fieldValidation must be one of'):
        codec.field_validation_of("strict")


@pytest.mark.parametrize("body", [b"{not json", b"a: [", b"---\na: 1\n---\nb: 2\n", b"\xff\xfe"])
def test_an_unreadable_body_is_a_bad_request(body: bytes) -> None:
    with pytest.raises(errors.BadRequest):
        codec.read_body(body)


def test_objects_go_out_in_the_urls_group_version_with_kubernetes_times() -> None:
    lease = objects_pb2.Lease(api_version="coordination.k8s.io/v1", kind="Lease")
    lease.metadata.creation_timestamp.FromJsonString("2026-01-02T03:04:05.678Z")
    lease.spec.renew_time.FromJsonString("2026-01-02T03:04:05.678Z")
    data = codec.encode(lease, parse("/apis/coordination.k8s.io/v1/leases").resource)
    assert data["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"  # metav1.Time: seconds
    assert data["spec"]["renewTime"] == "2026-01-02T03:04:05.678000Z"  # MicroTime: six digits
    group = objects_pb2.PodGroup(api_version="scheduling.k8s.io/v1alpha3", kind="PodGroup")
    shown = codec.encode(group, parse("/apis/scheduling.x-k8s.io/v1alpha1/podgroups").resource)
    assert shown["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"


def test_fields_kubernetes_never_omits_are_present_when_zero() -> None:
    pdb = objects_pb2.PodDisruptionBudget(api_version="policy/v1", kind="PodDisruptionBudget")
    pdb.status.observed_generation = 1
    data = codec.encode(pdb, parse("/apis/policy/v1/poddisruptionbudgets").resource)
    assert data["status"] == {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0,
                              "desiredHealthy": 0, "expectedPods": 0}


def test_an_invalid_object_is_a_status_with_a_cause_per_field() -> None:
    error = errors.Invalid('Pod "web" is invalid: spec.containers: Required value', errors.StatusDetails(
        name="web", kind="Pod", causes=(errors.StatusCause("FieldValueRequired", "Required value",
                                                           "spec.containers"),)))
    assert status_of(error) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Pod "web" is invalid: spec.containers: Required value', "reason": "Invalid", "code": 422,
        "details": {"name": "web", "kind": "Pod", "causes": [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}]},
    }


def test_a_not_found_names_the_resource_and_object() -> None:
    status = status_of(errors.NotFound('pods "web" not found'), name="web", kind="pods")
    assert (status["code"], status["reason"], status["details"]) == (404, "NotFound",
                                                                    {"name": "web", "kind": "pods"})


def test_too_many_requests_says_when_to_retry() -> None:
    assert retry_after(errors.TooManyRequests("too many requests")) == 1
    assert retry_after(errors.TooManyRequests(
        "x", errors.StatusDetails(retry_after_seconds=7))) == 7
    assert retry_after(errors.Conflict("x")) is None


def test_an_eviction_refused_by_its_budget_says_no_retry_after() -> None:
    # kube-apiserver sends no Retry-After here: client-go would otherwise retry the eviction itself, ten
    # times, before kubectl drain heard of the refusal and printed it.
    cause = errors.StatusCause("DisruptionBudget", "The disruption budget web needs 1 healthy pods")
    budget = errors.TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
                                    errors.StatusDetails(causes=(cause,)))
    assert retry_after(budget) is None


def test_version_is_kubernetes_with_podsched_as_build_metadata() -> None:
    info = kubernetes_version_info("0.1.0")
    assert info["gitVersion"] == "v1.37.0+podsched.0.1.0"
    assert (info["major"], info["minor"]) == ("1", "37")
