"""What the HTTP API serves, resource by resource, as discovery and OpenAPI describe it: every kind of
``cluster.api.kinds`` in each of its apiVersions (its own, and those served by converting to and from the
stored one: cluster.api.conversion), with the subresources podsched implements, grouped by API group and
version in Kubernetes' order of preference."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from cluster.api import conversion
from cluster.api.conversion import Conversion
from cluster.api.kinds import EVENT, KINDS, POD, Kind

#: The verbs podsched serves for every resource.
RESOURCE_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
#: The verbs of a status subresource.
STATUS_VERBS = ("get", "patch", "update")

#: Upstream's ``all`` category holds the workloads kubectl prints for `kubectl get all`.
_ALL_CATEGORY = frozenset({"pods", "services", "replicasets", "statefulsets", "replicationcontrollers"})


@dataclass(frozen=True, slots=True)
class Subresource:
    name: str
    #: The kind the subresource takes and returns (a Binding, an Eviction, the parent kind for status).
    group: str
    version: str
    kind: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource in one group-version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    subresources: tuple[Subresource, ...]
    #: The kind of cluster.api.kinds this resource's objects are stored as.
    stored_as: Kind
    #: Whether the objects travel in the stored kind's own message (else converted on the wire).
    native: bool = True
    #: The conversion of a version served by converting (its message describes the served shape).
    conversion: Conversion | None = None

    @property
    def singular(self) -> str:
        return self.kind.lower()


@dataclass(frozen=True, slots=True)
class GroupVersion:
    group: str
    version: str
    resources: tuple[Resource, ...]

    @property
    def name(self) -> str:
        """"v1", "apps/v1"."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        """The URL path of the group-version, without the leading slash: "api/v1", "apis/apps/v1"."""
        return f"apis/{self.group}/{self.version}" if self.group else f"api/{self.version}"


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    #: The preferred version first.
    versions: tuple[GroupVersion, ...]


#: events.k8s.io/v1 Events are core Events converted on the wire; the store keeps the core kind.
EVENTS_V1 = "events.k8s.io/v1"


def _subresources(kind: Kind) -> tuple[Subresource, ...]:
    subresources = []
    if kind is POD:
        subresources.append(Subresource("binding", "", "", "Binding", ("create",)))
        subresources.append(Subresource("eviction", "policy", "v1", "Eviction", ("create",)))
    if "status" in kind.message.DESCRIPTOR.fields_by_name:
        subresources.append(Subresource("status", "", "", kind.name, STATUS_VERBS))
    return tuple(sorted(subresources, key=lambda s: s.name))


def _resources() -> Iterable[Resource]:
    for kind in KINDS:
        categories = ("all",) if kind.plural in _ALL_CATEGORY else ()
        for api_version in conversion.served_versions(kind):
            group, _, version = api_version.rpartition("/")
            converted = conversion.conversion_of(api_version, kind.name)
            yield Resource(
                group, version, kind.plural, kind.name, kind.namespaced, kind.short_names, categories,
                _subresources(kind), kind, native=converted is None, conversion=converted,
            )
            if kind is EVENT and api_version == EVENT.api_version:
                group, _, version = EVENTS_V1.rpartition("/")
                yield Resource(
                    group, version, "events", "Event", True, kind.short_names, (), (), kind, native=False
                )


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 2, "beta": 1, "alpha": 0}


def version_priority(version: str) -> tuple[int, int, int, int, str]:
    """A sort key in Kubernetes' order of versions, the most preferred first: GA before beta before alpha,
    then the higher major, then the higher minor; other names after all of them, alphabetically."""
    match = _VERSION.match(version)
    if match is None:
        return (1, 0, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, -_STABILITY[stability], -int(major), -int(minor or 0), "")


@cache
def served_groups() -> tuple[Group, ...]:
    """Every API group podsched serves, the core group ("") first, then in the order of the kinds table;
    each group's versions preferred first, each version's resources by name."""
    by_group: dict[str, dict[str, list[Resource]]] = {}
    for resource in _resources():
        by_group.setdefault(resource.group, {}).setdefault(resource.version, []).append(resource)
    groups = []
    for group_name, versions in by_group.items():
        ordered = sorted(versions, key=version_priority)
        groups.append(Group(group_name, tuple(
            GroupVersion(group_name, version, tuple(sorted(versions[version], key=lambda r: r.plural)))
            for version in ordered
        )))
    return tuple(groups)


def group_versions() -> tuple[GroupVersion, ...]:
    return tuple(version for group in served_groups() for version in group.versions)
