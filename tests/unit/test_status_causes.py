"""A validation error carries what kube-apiserver's Status details carry: kind, name and a cause per
field error, so an HTTP client (kubectl) prints ``The Pod "web" is invalid:`` and each ``field: message``."""

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.validation import cause_of, ensure_valid


@pytest.mark.parametrize(("problem", "cause"), [
    ("spec.containers[0].image: Required value",
     errors.StatusCause("FieldValueRequired", "Required value", "spec.containers[0].image")),
    ('metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain',
     errors.StatusCause("FieldValueInvalid", 'Invalid value: "Web": a lowercase RFC 1123 subdomain',
                        "metadata.name")),
    ('spec.restartPolicy: Unsupported value: "x": supported values: "Always"',
     errors.StatusCause("FieldValueNotSupported", 'Unsupported value: "x": supported values: "Always"',
                        "spec.restartPolicy")),
    ("spec.schedulingGates[1].name: Forbidden: only deletion is allowed",
     errors.StatusCause("FieldValueForbidden", "Forbidden: only deletion is allowed",
                        "spec.schedulingGates[1].name")),
    ("a problem without a field", errors.StatusCause("FieldValueInvalid", "a problem without a field")),
])
def test_cause_of_a_field_error(problem: str, cause: errors.StatusCause) -> None:
    assert cause_of(problem) == cause


def test_invalid_names_the_object_and_every_cause() -> None:
    pc = objects_pb2.PriorityClass(api_version="scheduling.k8s.io/v1", kind="PriorityClass")
    pc.metadata.name = "high"
    with pytest.raises(errors.Invalid) as raised:
        ensure_valid(pc, ["value: Required value", "value: Required value", "description: Too long: x"])
    details = raised.value.details
    assert details is not None
    assert (details.kind, details.group, details.name) == ("PriorityClass", "scheduling.k8s.io", "high")
    assert [c.field for c in details.causes] == ["value", "description"]
    assert raised.value.http_code == 422
