"""API discovery as kube-apiserver serves it: ``/api`` (APIVersions), ``/apis`` (APIGroupList),
``/apis/GROUP`` (APIGroup), ``/api/v1`` and ``/apis/GROUP/VERSION`` (APIResourceList), and the
aggregated documents (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) that kubectl asks ``/api`` and
``/apis`` for first, all from the table of served resources. Built once at server start;
``Discovery.document`` picks the encoded document for a path and an Accept header."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cluster.apiserver.http.documents import Document, encode
from cluster.apiserver.http.served import RESOURCE_VERBS, Group, GroupVersion, Resource, served_groups

AGGREGATED_GROUP = "apidiscovery.k8s.io"
AGGREGATED_VERSION = "v2"
AGGREGATED_KIND = "APIGroupDiscoveryList"
#: The Content-Type of an aggregated discovery response; client-go reads the document as aggregated only
#: when the response says so.
AGGREGATED_CONTENT_TYPE = (
    f"application/json;g={AGGREGATED_GROUP};v={AGGREGATED_VERSION};as={AGGREGATED_KIND}"
)


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream's storageVersionHash: the first 8 bytes of SHA-256 over "group/version/kind", base64."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


# ------------------------------------------------------------------------------- unaggregated


def api_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the core group's versions and the address clients of every network reach it at."""
    return {
        "kind": "APIVersions",
        "versions": [version.version for version in _core().versions],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _version_for_discovery(version: GroupVersion) -> dict[str, str]:
    return {"groupVersion": version.name, "version": version.version}


def _api_group(group: Group) -> dict[str, Any]:
    return {
        "name": group.name,
        "versions": [_version_for_discovery(version) for version in group.versions],
        "preferredVersion": _version_for_discovery(group.versions[0]),
    }


def api_group(group: Group) -> dict[str, Any]:
    """``/apis/GROUP``."""
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(group)}


def api_group_list() -> dict[str, Any]:
    """``/apis``: every named group (the core group is ``/api``'s)."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_api_group(g) for g in _named_groups()]}


def _names(resource: Resource) -> dict[str, list[str]]:
    """The short names and categories of a resource's discovery entry, each only when it has some."""
    names: dict[str, list[str]] = {}
    if resource.short_names:
        names["shortNames"] = list(resource.short_names)
    if resource.categories:
        names["categories"] = list(resource.categories)
    return names


def _api_resource(resource: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(RESOURCE_VERBS),
        **_names(resource),
    }
    # The hash names the version objects are stored in: every version of a kind shares it.
    stored = resource.stored_as
    stored_version = stored.api_version.rpartition("/")[2]
    entry["storageVersionHash"] = storage_version_hash(stored.group, stored_version, stored.name)
    return entry


def api_resource_list(version: GroupVersion) -> dict[str, Any]:
    """``/api/v1``, ``/apis/GROUP/VERSION``: each resource, then each of its subresources as an entry of
    its own ("pods/status"), as kube-apiserver lists them."""
    resources: list[dict[str, Any]] = []
    for resource in version.resources:
        resources.append(_api_resource(resource))
        for sub in resource.subresources:
            entry: dict[str, Any] = {
                "name": f"{resource.plural}/{sub.name}",
                "singularName": "",
                "namespaced": resource.namespaced,
            }
            if sub.group:
                entry["group"] = sub.group
                entry["version"] = sub.version
            entry["kind"] = sub.kind
            entry["verbs"] = list(sub.verbs)
            resources.append(entry)
    return {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": version.name, "resources": resources,
    }


# --------------------------------------------------------------------------------- aggregated


def _aggregated_resource(resource: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": resource.plural,
        "responseKind": {"group": "", "version": "", "kind": resource.kind},
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular,
        "verbs": list(RESOURCE_VERBS),
        **_names(resource),
    }
    if resource.subresources:
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": {"group": sub.group, "version": sub.version, "kind": sub.kind},
                "verbs": list(sub.verbs),
            }
            for sub in resource.subresources
        ]
    return entry


def _aggregated_group(group: Group) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": group.name} if group.name else {}
    metadata["creationTimestamp"] = None
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": version.version,
                "resources": [_aggregated_resource(resource) for resource in version.resources],
                "freshness": "Current",
            }
            for version in group.versions
        ],
    }


def aggregated_discovery(groups: tuple[Group, ...]) -> dict[str, Any]:
    """An APIGroupDiscoveryList of ``groups``: ``/api``'s holds the core group, ``/apis``'s the others."""
    return {
        "kind": AGGREGATED_KIND,
        "apiVersion": f"{AGGREGATED_GROUP}/{AGGREGATED_VERSION}",
        "metadata": {},
        "items": [_aggregated_group(group) for group in groups],
    }


# ---------------------------------------------------------------------------------- Accept


def _media_ranges(accept: str) -> list[tuple[float, str, dict[str, str]]]:
    """The Accept header's media ranges as (q, type, parameters), in the header's order."""
    ranges = []
    for clause in accept.split(","):
        media_type, *raw_params = (part.strip() for part in clause.split(";"))
        if not media_type:
            continue
        params: dict[str, str] = {}
        for raw in raw_params:
            key, _, value = raw.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0
        ranges.append((q, media_type.lower(), params))
    return ranges


def _is_aggregated(params: dict[str, str]) -> bool:
    # profile=nopeer asks for this server's own resources without its peers'; podsched has no peer
    # servers, so both profiles are the same document.
    return (
        params.get("g") == AGGREGATED_GROUP
        and params.get("v") == AGGREGATED_VERSION
        and params.get("as") == AGGREGATED_KIND
        and params.get("profile", "nopeer") == "nopeer"
        and set(params) <= {"g", "v", "as", "profile"}
    )


def aggregated_requested(accept: str) -> bool:
    """Whether a request to ``/api`` or ``/apis`` with this Accept header gets the aggregated document:
    the most preferred media range the server can serve decides (higher q first, then header order), as
    kube-apiserver negotiates it. A JSON range without parameters (or ``*/*``) asks for the unaggregated
    document; ranges of other types or other ``as=`` kinds are passed over."""
    ranges = sorted(_media_ranges(accept), key=lambda item: -item[0])
    for q, media_type, params in ranges:
        if q <= 0 or media_type not in ("application/json", "application/*", "*/*"):
            continue
        if not params:
            return False
        if media_type == "application/json" and _is_aggregated(params):
            return True
    return False


# ------------------------------------------------------------------------------- documents


def _core() -> Group:
    return next(group for group in served_groups() if not group.name)


def _named_groups() -> tuple[Group, ...]:
    return tuple(group for group in served_groups() if group.name)


class Discovery:
    """Every discovery document, encoded once. ``document`` answers a GET of a discovery path."""

    def __init__(self, server_address: str) -> None:
        self._plain: dict[str, Document] = {
            "/api": encode(api_versions(server_address)),
            "/apis": encode(api_group_list()),
        }
        for group in _named_groups():
            self._plain[f"/apis/{group.name}"] = encode(api_group(group))
        for group in served_groups():
            for version in group.versions:
                self._plain[f"/{version.path}"] = encode(api_resource_list(version))
        self._aggregated = {
            "/api": encode(aggregated_discovery((_core(),)), AGGREGATED_CONTENT_TYPE),
            "/apis": encode(aggregated_discovery(_named_groups()), AGGREGATED_CONTENT_TYPE),
        }

    def paths(self) -> tuple[str, ...]:
        """Every discovery path served."""
        return tuple(self._plain)

    def document(self, path: str, accept: str) -> Document | None:
        """The document for a GET of ``path`` (no trailing slash) with this Accept header; None when
        ``path`` is no discovery path. The response varies by Accept on ``/api`` and ``/apis``."""
        if path in self._aggregated and aggregated_requested(accept):
            return self._aggregated[path]
        return self._plain.get(path)
