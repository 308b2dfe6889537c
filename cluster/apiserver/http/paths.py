"""Kubernetes' resource URLs, read as kube-apiserver's RequestInfoFactory reads them:
``/api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]]`` for the core group and
``/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]]`` for the others, with the old
``/watch/`` prefix after the version. ``/api/v1/namespaces/NS`` is the namespace itself (and
``.../NS/status`` its status); anything longer after ``namespaces/NS`` addresses a namespaced resource.

What is served at which group/version, with which subresources, is served.py's table, the one
discovery and OpenAPI describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from google.protobuf.message import Message

from cluster.api import errors
from cluster.api.conversion import Conversion
from cluster.api.kinds import Kind
from cluster.apiserver.http import served
from cluster.apiserver.http.served import EVENTS_V1


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource as one group/version serves it."""

    kind: Kind[Any]
    #: The group/version of the URL ("v1", "apps/v1"): the apiVersion objects are shown in.
    group_version: str
    subresources: frozenset[str] = frozenset()
    #: How objects are converted from and to the stored version, when the group/version is not theirs.
    conversion: Conversion | None = None

    @property
    def message(self) -> type[Message]:
        """The message of the shape objects are read and written in at this group/version."""
        return self.kind.message if self.conversion is None else self.conversion.message

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.group_version.rpartition("/")[2]

    @property
    def is_events_v1(self) -> bool:
        return self.group_version == EVENTS_V1


def _served() -> dict[tuple[str, str], Resource]:
    return {
        (version.name, resource.plural): Resource(
            resource.stored_as, version.name, frozenset(sub.name for sub in resource.subresources),
            resource.conversion)
        for version in served.group_versions()
        for resource in version.resources
    }


#: Every resource served, by (group/version, plural): discovery's table (served.py).
SERVED: dict[tuple[str, str], Resource] = _served()


@dataclass(frozen=True, slots=True)
class Target:
    """What one resource URL addresses."""

    resource: Resource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    #: Addressed with the old ``/watch/`` prefix.
    watch_prefix: bool = False
    #: The core group's ``bindings`` collection (POST a Binding naming its pod): pods/binding by another
    #: path, which the official clients' ``create_namespaced_binding`` takes.
    bindings: bool = False


def page_not_found() -> errors.NotFound:
    return errors.NotFound("the server could not find the requested resource")


def parse(path: str) -> Target:
    """The target of a resource URL; NotFound (kube's 404 "the server could not find the requested
    resource") for a path that addresses nothing served."""
    parts = [unquote(part) for part in path.strip("/").split("/")]
    if parts[:2] == ["api", "v1"]:
        group_version, rest = "v1", parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
    else:
        raise page_not_found()
    watch_prefix = bool(rest) and rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
    namespace = ""
    # namespaces/NS and namespaces/NS/status are the namespace itself; anything else after
    # namespaces/NS is a resource in that namespace.
    if len(rest) > 2 and rest[0] == "namespaces" and rest[2] != "status":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3 or any(not part for part in rest):
        raise page_not_found()
    if group_version == "v1" and rest == ["bindings"] and namespace:
        return Target(SERVED[("v1", "pods")], namespace, "", "binding", bindings=True)
    resource = SERVED.get((group_version, rest[0]))
    if resource is None or (namespace and not resource.kind.namespaced):
        raise page_not_found()
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and subresource not in resource.subresources:
        raise page_not_found()
    return Target(resource, namespace, name, subresource, watch_prefix)
