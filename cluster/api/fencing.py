"""The fencing vocabulary that the API server, the scheduler and the tools read alike: the scheduler's
Lease, the annotations the API server writes, and the rule that gives a Lease's fencing token.

A Lease's tenure is one holder's unbroken hold of it; its token is the store revision of the write that
began it. The API server records the token in FENCING_TOKEN_ANNOTATION once the tenure has outlived that
write (a renewal by the same holder), so for any stored Lease the token is that annotation when present,
else the Lease's own resourceVersion.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.api import objects_pb2, validation


@dataclass(frozen=True, slots=True, order=True)
class LeaseRef:
    """A Lease by namespace and name, written ``NAMESPACE/NAME``."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> LeaseRef:
        """``NAMESPACE/NAME``; ValueError naming what is wrong."""
        namespace, sep, name = text.partition("/")
        if not sep or not namespace or not name or "/" in name:
            raise ValueError(f"invalid lease {text!r}: expected NAMESPACE/NAME, like {SCHEDULER_LEASE}")
        problems = [f"namespace {problem}" for problem in validation.is_dns1123_label(namespace)]
        problems += [f"name {problem}" for problem in validation.is_dns1123_subdomain(name)]
        if problems:
            raise ValueError(f"invalid lease {text!r}: {'; '.join(problems)}")
        return cls(namespace, name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


#: kube-scheduler's Lease (its --leader-elect-resource-namespace and --leader-elect-resource-name
#: defaults): where the scheduler replicas elect their leader unless told otherwise, and the Lease whose
#: fences an API server that enforces leader fencing takes unless told otherwise.
SCHEDULER_LEASE = LeaseRef("kube-system", "kube-scheduler")

#: On a Lease: the token of the current tenure, when the tenure has outlived the write that began it.
FENCING_TOKEN_ANNOTATION = "podsched.io/fencing-token"
#: On a Pod bound by a fenced Bind: "<holder>@<token>", so that history can be audited.
BOUND_UNDER_FENCE_ANNOTATION = "podsched.io/bound-under-fence"
#: On an Event as a fenced Create or Update wrote it: "<holder>@<token>" (an unfenced write drops it), so
#: that history shows which term wrote each version of an event.
WRITTEN_UNDER_FENCE_ANNOTATION = "podsched.io/written-under-fence"


def fence_stamp(holder_identity: str, token: int) -> str:
    """The value of BOUND_UNDER_FENCE_ANNOTATION (and WRITTEN_UNDER_FENCE_ANNOTATION) for a write under
    the fence of ``holder_identity``'s tenure ``token``."""
    return f"{holder_identity}@{token}"


def tenure_token(lease: objects_pb2.Lease) -> int:
    """The store revision at which the Lease's current tenure began; ValueError when the annotation holds
    something other than a revision (only the API server writes it, so it was written behind its back)."""
    recorded = lease.metadata.annotations.get(FENCING_TOKEN_ANNOTATION)
    if recorded is None:
        return int(lease.metadata.resource_version)
    if not recorded.isdigit():
        raise ValueError(
            f"lease {lease.metadata.namespace}/{lease.metadata.name} has a malformed "
            f"{FENCING_TOKEN_ANNOTATION} annotation: {recorded!r}"
        )
    return int(recorded)


def observed_tenure_token(lease: objects_pb2.Lease) -> int:
    """``tenure_token`` for an observer that must go on watching whatever it reads: a malformed
    annotation counts as absent (the API server refuses every fenced write under such a lease anyway)."""
    try:
        return tenure_token(lease)
    except ValueError:
        return int(lease.metadata.resource_version)
