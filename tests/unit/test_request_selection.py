"""A list's or watch's selectors are query parameters: kube-apiserver answers one it cannot read, or a field
the kind does not support, with 400 BadRequest (the same INVALID_ARGUMENT to a gRPC caller)."""

from __future__ import annotations

import grpc
import pytest

from cluster.api import errors
from cluster.api.kinds import EVENT, POD
from cluster.apiserver.selection import Selection


@pytest.mark.parametrize(("kind", "labels", "fields", "message"), [
    (POD, "", "spec.bogus=x", "^field label not supported: spec.bogus$"),
    (EVENT, "", "regarding.name=x", "^field label not supported: regarding.name$"),
    (POD, "", "nonsense", r"^invalid selector: 'nonsense'; can't understand 'nonsense'$"),
    (POD, "app in web", "", r'^invalid label selector "app in web": '),
], ids=["unsupported-field", "unsupported-event-field", "field-syntax", "label-syntax"])
def test_a_selector_the_server_cannot_use_is_a_bad_request(
    kind: object, labels: str, fields: str, message: str
) -> None:
    with pytest.raises(errors.BadRequest, match=message) as raised:
        Selection.parse(kind, labels, fields)  # type: ignore[arg-type]
    assert (raised.value.http_code, raised.value.code) == (400, grpc.StatusCode.INVALID_ARGUMENT)


def test_supported_selectors_parse() -> None:
    selection = Selection.parse(POD, "app=web", "spec.nodeName=node-a,status.phase=Running")
    assert not selection.everything
