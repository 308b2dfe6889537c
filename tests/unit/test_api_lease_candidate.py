"""LeaseCandidate (coordination.k8s.io/v1beta1) validation as upstream's ValidateLeaseCandidate and
ValidateLeaseCandidateUpdate decide it, and the semantic versions it compares."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, semver
from cluster.api.validation import validate_object, validate_update
from tests import builders
from tests.builders import typed


def candidate(name: str = "vm_0c1d", **spec: str) -> objects_pb2.LeaseCandidate:
    fields = {"binary_version": "1.33.0", "emulation_version": "1.33.0", "strategy": "OldestEmulationVersion",
              **spec}
    return typed(builders.lease_candidate(name, renewed=Timestamp(seconds=1_700_000_000), **fields))


@pytest.mark.parametrize("obj", [
    candidate(),
    candidate("my-host.example_5c0e0b1a-6a0e-4d2f-9a3e-2f0c5d1e7b4a"),
    candidate("Upper_Case.and-dots"),
    candidate(binary_version="1.34.0-alpha.1+abc", emulation_version="1.33.2"),
    candidate(emulation_version="", strategy="example.com/my-strategy"),
    candidate(binary_version="1.33.0", emulation_version="1.33.0-rc.1"),
])
def test_valid_candidates(obj: objects_pb2.LeaseCandidate) -> None:
    assert validate_object(obj) == []


NEEDS_EMULATION = (
    "spec.emulationVersion: Required value: must be specified when `strategy` is 'OldestEmulationVersion'"
)


@pytest.mark.parametrize(("obj", "expected"), [
    (candidate(lease_name=""), ["spec.leaseName: Required value"]),
    (candidate(binary_version="", emulation_version=""),
     ["spec.binaryVersion: Required value",
      NEEDS_EMULATION]),
    (candidate(binary_version="v1.33.0"),
     ['spec.binaryVersion: Invalid value: "v1.33.0": must be a valid semantic version']),
    (candidate(binary_version="1.33"),
     ['spec.binaryVersion: Invalid value: "1.33": must be a valid semantic version']),
    (candidate(emulation_version="1.033.0"),
     ['spec.emulationVersion: Invalid value: "1.033.0": must be a valid semantic version',
      NEEDS_EMULATION]),
    (candidate(binary_version="1.32.9", emulation_version="1.33.0"),
     ['spec.binaryVersion: Invalid value: "1.32.9": must be greater than or equal to `emulationVersion`']),
    (candidate(binary_version="1.33.0-rc.1", emulation_version="1.33.0"),
     ['spec.binaryVersion: Invalid value: "1.33.0-rc.1": must be greater than or equal to '
      "`emulationVersion`"]),
    (candidate(strategy=""), ["spec.strategy: Required value"]),
    (candidate(strategy="NewestBinaryVersion"),
     ['spec.strategy: Unsupported value: "NewestBinaryVersion": supported values: "OldestEmulationVersion"']),
    (candidate(strategy="example.com/bad name"),
     ["spec.strategy: Invalid value: \"example.com/bad name\": name part must consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
      "or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    (candidate(".."), ['metadata.name: Invalid value: "..": must not be \'..\'']),
    (candidate("a b"),
     ["metadata.name: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, "
      "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
      "'[-._a-zA-Z0-9]+')"]),
])
def test_invalid_candidates(obj: objects_pb2.LeaseCandidate, expected: list[str]) -> None:
    assert validate_object(obj) == expected


def _rename_lease(obj: objects_pb2.LeaseCandidate) -> None:
    obj.spec.lease_name = "other"


def _renew(obj: objects_pb2.LeaseCandidate) -> None:
    obj.spec.renew_time.FromSeconds(1_700_000_060)
    obj.spec.binary_version = "1.33.1"


@pytest.mark.parametrize(("change", "expected"), [
    (_rename_lease, ['spec.leaseName: Invalid value: "other": field is immutable']),
    (_renew, []),
])
def test_lease_name_is_immutable(change: Callable[[objects_pb2.LeaseCandidate], None],
                                 expected: list[str]) -> None:
    old = candidate()
    new = objects_pb2.LeaseCandidate()
    new.CopyFrom(old)
    change(new)
    assert validate_update(old, new) == expected


@pytest.mark.parametrize(("low", "high"), [
    ("1.0.0", "2.0.0"), ("2.0.0", "2.1.0"), ("2.1.0", "2.1.1"), ("1.0.0-alpha", "1.0.0"),
    ("1.0.0-alpha", "1.0.0-alpha.1"), ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
    ("1.0.0-beta.2", "1.0.0-beta.11"),
    ("1.0.0-rc.1", "1.0.0"), ("1.9.0", "1.10.0"),
])
def test_semver_precedence(low: str, high: str) -> None:
    assert semver.parse(low) < semver.parse(high)  # type: ignore[operator]


def test_semver_ignores_build_metadata() -> None:
    assert semver.parse("1.0.0+a") == semver.parse("1.0.0+b")


@pytest.mark.parametrize("text", ["v1.0.0", "1.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", " 1.0.0"])
def test_not_semver(text: str) -> None:
    assert semver.parse(text) is None
