"""ResourceClaim (resource.k8s.io/v1). Its spec is fixed at creation; its status (the allocation and the
consumers it is reserved for) is written by UpdateStatus only, by the scheduler under its leadership fence
(a fence every UpdateStatus takes, fencing.py); under enforced leadership an allocation or a consumer
added without a fence is refused, as a nomination is (leadership.py). A created claim starts with no
status, as upstream's strategy resets it. Its Create may be fenced: the scheduler creates the claim for
a pod's extended resources that DeviceClasses serve under its fence."""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.kinds import RESOURCE_CLAIM
from cluster.api.validation import resource
from cluster.apiserver.registry.kind import CREATE, KindStrategy
from cluster.printers import resourceclaims

#: What a request leaves out: exactly one device of its class (resource/v1's SetDefaults_*).
DEFAULT_ALLOCATION_MODE = "ExactCount"
DEFAULT_TOLERATION_OPERATOR = "Equal"


def _default_tolerations(tolerations: Iterable[objects_pb2.DeviceToleration]) -> None:
    for toleration in tolerations:
        if not toleration.operator:
            toleration.operator = DEFAULT_TOLERATION_OPERATOR


def _default_device_kind(request: objects_pb2.ExactDeviceRequest | objects_pb2.DeviceSubRequest) -> None:
    if not request.allocation_mode:
        request.allocation_mode = DEFAULT_ALLOCATION_MODE
    if request.allocation_mode == DEFAULT_ALLOCATION_MODE and request.count == 0:
        request.count = 1
    _default_tolerations(request.tolerations)


def default_claim_spec(spec: objects_pb2.ResourceClaimSpec) -> None:
    """A claim spec's defaults (also a template's spec.spec)."""
    for request in spec.devices.requests:
        if request.HasField("exactly"):
            _default_device_kind(request.exactly)
        for subrequest in request.first_available:
            _default_device_kind(subrequest)


def _defaults(claim: objects_pb2.ResourceClaim) -> None:
    default_claim_spec(claim.spec)
    for result in claim.status.allocation.devices.results:
        _default_tolerations(result.tolerations)


def _without_status(claim: objects_pb2.ResourceClaim, now: Timestamp) -> None:
    claim.ClearField("status")


STRATEGY = KindStrategy(
    kind=RESOURCE_CLAIM,
    printer=resourceclaims.PRINTER,
    validation=resource.RESOURCE_CLAIM,
    defaults=_defaults,
    prepare_for_create=_without_status,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    # The scheduler creates the claim for a pod's extended resources under its leadership fence.
    fenced_verbs=frozenset({CREATE}),
    record_fence=None,
    check_update=None,
    nominates=True,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
