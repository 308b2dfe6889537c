"""Validation of coordination.k8s.io's kinds: Lease, LeaseCandidate."""

from __future__ import annotations

from typing import Any

from cluster.api import kinds, objects_pb2, semver
from cluster.api.names import is_config_map_key, is_qualified_name
from cluster.api.validation.field import IMMUTABLE, NOT_NEGATIVE, check, invalid, not_supported, required
from cluster.api.validation.rules import KindValidation


def validate_lease(lease: objects_pb2.Lease) -> list[str]:
    spec = lease.spec
    problems = []
    if spec.HasField("lease_duration_seconds") and spec.lease_duration_seconds <= 0:
        problems.append(
            invalid("spec.leaseDurationSeconds", spec.lease_duration_seconds, "must be greater than 0")
        )
    if spec.HasField("lease_transitions") and spec.lease_transitions < 0:
        problems.append(invalid("spec.leaseTransitions", spec.lease_transitions, NOT_NEGATIVE))
    return problems


#: The coordinated leader election strategy Kubernetes defines; others are qualified names ("x.io/mine").
OLDEST_EMULATION_VERSION = "OldestEmulationVersion"


_SEMVER_ERROR = "must be a valid semantic version"


def validate_lease_candidate(candidate: objects_pb2.LeaseCandidate) -> list[str]:
    """ValidateLeaseCandidateSpec: leaseName and binaryVersion required, versions semantic with the binary
    not older than the emulated one, a strategy Kubernetes defines or a qualified name (OldestEmulationVersion
    needs an emulationVersion). pingTime and renewTime are MicroTimes with nothing more to check."""
    spec = candidate.spec
    problems = []
    if not spec.lease_name:
        problems.append(required("spec.leaseName"))
    emulation = semver.parse(spec.emulation_version) if spec.emulation_version else None
    if spec.emulation_version and emulation is None:
        problems.append(invalid("spec.emulationVersion", spec.emulation_version, _SEMVER_ERROR))
    binary = semver.parse(spec.binary_version) if spec.binary_version else None
    if not spec.binary_version:
        problems.append(required("spec.binaryVersion"))
    elif binary is None:
        problems.append(invalid("spec.binaryVersion", spec.binary_version, _SEMVER_ERROR))
    if binary is not None and emulation is not None and binary < emulation:
        problems.append(invalid("spec.binaryVersion", spec.binary_version,
                                "must be greater than or equal to `emulationVersion`"))
    if not spec.strategy:
        problems.append(required("spec.strategy"))
        return problems
    if spec.strategy == OLDEST_EMULATION_VERSION and emulation is None:
        problems.append(required("spec.emulationVersion",
                                 f"must be specified when `strategy` is '{OLDEST_EMULATION_VERSION}'"))
    if "/" not in spec.strategy:
        if spec.strategy != OLDEST_EMULATION_VERSION:
            problems.append(not_supported("spec.strategy", spec.strategy, [OLDEST_EMULATION_VERSION]))
    else:
        problems += check("spec.strategy", spec.strategy, is_qualified_name)
    return problems


def _validate_lease_candidate_update(
    old: objects_pb2.LeaseCandidate, new: objects_pb2.LeaseCandidate
) -> list[str]:
    if new.spec.lease_name != old.spec.lease_name:
        return [invalid("spec.leaseName", new.spec.lease_name, IMMUTABLE)]
    return []


LEASE = KindValidation(kinds.LEASE, validate_lease)
#: A LeaseCandidate is named as a config map key (so "host_uuid" identities fit).
LEASE_CANDIDATE = KindValidation(
    kinds.LEASE_CANDIDATE, validate_lease_candidate, _validate_lease_candidate_update,
    name_check=is_config_map_key,
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (LEASE, LEASE_CANDIDATE)
