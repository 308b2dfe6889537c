"""ResourceClaimTemplate (resource.k8s.io/v1): the claim spec the resourceclaim controller makes a pod's
claims from; defaulted as a claim's, immutable once created."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import RESOURCE_CLAIM_TEMPLATE
from cluster.api.validation import resource
from cluster.apiserver.registry.kind import KindStrategy
from cluster.apiserver.registry.resourceclaims import default_claim_spec
from cluster.printers import resourceclaimtemplates


def _defaults(template: objects_pb2.ResourceClaimTemplate) -> None:
    default_claim_spec(template.spec.spec)


STRATEGY = KindStrategy(
    kind=RESOURCE_CLAIM_TEMPLATE,
    printer=resourceclaimtemplates.PRINTER,
    validation=resource.RESOURCE_CLAIM_TEMPLATE,
    defaults=_defaults,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
