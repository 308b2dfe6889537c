"""The OpenAPI documents kube-apiserver serves, for podsched's resources: ``/openapi/v2`` (Swagger 2.0, every
path and definition), ``/openapi/v3`` (the index of group-versions, each URL carrying its document's hash)
and ``/openapi/v3/api/v1``, ``/openapi/v3/apis/GROUP/VERSION`` (OpenAPI 3.0, one group-version's paths and
the schemas they need). Each resource's operations carry upstream's operationIds, actions, GVKs and query
parameters — kubectl reads the PATCH operations' ``fieldValidation`` to learn that the server validates
fields itself, and ``kubectl explain`` finds a kind's schema by its ``x-kubernetes-group-version-kind``.
Built once at server start; ``OpenAPI.document`` hands out the encoded documents."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cluster.api.version import PODSCHED_VERSION
from cluster.apiserver.http.documents import JSON, Document, encode
from cluster.apiserver.http.schemas import (
    DELETE_OPTIONS,
    PATCH,
    STATUS,
    WATCH_EVENT,
    Schema,
    SchemaBuilder,
    add_events_v1,
    closure,
    gvk,
    ref,
    refs_of,
    retarget,
    v3_schemas,
)
from cluster.apiserver.http.served import GroupVersion, Resource, Subresource, group_versions

WATCH_STREAM = "application/json;stream=watch"
#: The patch types the PATCH operations take, as upstream lists them.
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
_INFO = {"title": "Kubernetes", "version": PODSCHED_VERSION}
_BEARER = {
    "BearerToken": {
        "type": "apiKey",
        "description": "Bearer Token authentication",
        "name": "authorization",
        "in": "header",
    }
}

#: Every query parameter an operation takes: its JSON schema type and what it does.
QUERY_PARAMETERS: dict[str, tuple[str, str]] = {
    "allowWatchBookmarks": ("boolean", "Requests watch events of type BOOKMARK."),
    "continue": ("string", "The continue token of the previous page of a paged list."),
    "dryRun": ("string", "All: run every stage of the request but do not persist it."),
    "fieldManager": ("string", "The name of the actor making the change, for field management."),
    "fieldSelector": ("string", "Restricts the returned objects by their fields."),
    "fieldValidation": (
        "string",
        "What the server does with unknown or duplicate fields in the body: Ignore, Warn or Strict.",
    ),
    "force": ("boolean", "Apply: take over the fields other managers own; only for apply patches."),
    "gracePeriodSeconds": ("integer", "The seconds before the object is deleted; 0 deletes at once."),
    "ignoreStoreReadErrorWithClusterBreakingPotential": (
        "boolean", "Deletes a corrupt object that cannot be read from the store.",
    ),
    "labelSelector": ("string", "Restricts the returned objects by their labels."),
    "limit": ("integer", "The most objects one page of a list returns."),
    "orphanDependents": ("boolean", "Deprecated: use propagationPolicy."),
    "pretty": ("string", "If 'true', the output is pretty printed."),
    "propagationPolicy": ("string", "Whether and how garbage collection deletes dependents."),
    "resourceVersion": ("string", "Which resource version a list or watch starts from."),
    "resourceVersionMatch": ("string", "How resourceVersion applies to a list: Exact or NotOlderThan."),
    "sendInitialEvents": ("boolean", "A watch starts with the current objects as ADDED events."),
    "timeoutSeconds": ("integer", "The time limit of a list or watch call."),
    "watch": ("boolean", "Watch for changes to the described resources."),
}
_LIST = (
    "allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
    "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch",
)
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = (
    "dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents",
    "propagationPolicy",
)
_DELETE_COLLECTION = tuple(sorted({*_DELETE, *_LIST} - {"allowWatchBookmarks", "watch"}))


@dataclass(frozen=True, slots=True)
class _Operation:
    """One operation, before it is written as Swagger 2.0 or OpenAPI 3."""

    method: str
    operation_id: str
    action: str
    gvk: dict[str, str]
    parameters: tuple[str, ...]
    responses: dict[str, str]
    body: str | None = None
    body_types: tuple[str, ...] = (JSON,)
    body_required: bool = True
    produces: tuple[str, ...] = (JSON,)


@dataclass(frozen=True, slots=True)
class _Path:
    path: str
    #: The path's own parameters, besides pretty: "namespace", "name".
    in_path: tuple[str, ...]
    operations: tuple[_Operation, ...]
    #: The list query parameters of the deprecated /watch/ paths, which upstream declares per path.
    watch: bool = False


def _group_ident(group: str) -> str:
    """The group as operationIds spell it: "Core", "Apps", "Scheduling", "SchedulingXK8sIo"."""
    if not group:
        return "Core"
    if group.endswith(".k8s.io"):
        group = group.split(".")[0]
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[.-]", group))


def _tag(gv: GroupVersion) -> str:
    ident = _group_ident(gv.group)
    return f"{ident[:1].lower()}{ident[1:]}_{gv.version}"


def _resource_paths(
    gv: GroupVersion, resource: Resource, kind: str, kind_list: str, bodies: dict[str, str]
) -> list[_Path]:
    """The paths of one resource and its subresources; ``bodies`` names each non-status subresource's
    request kind's definition."""
    ident = f"{_group_ident(gv.group)}{gv.version[:1].upper()}{gv.version[1:]}"
    scoped = ("Namespaced" if resource.namespaced else "") + resource.kind
    own = gvk(gv.name, resource.kind)
    base = f"/{gv.path}"
    scope = "/namespaces/{namespace}" if resource.namespaced else ""
    scope_params = ("namespace",) if resource.namespaced else ()
    collection = f"{base}{scope}/{resource.plural}"
    item = f"{collection}/{{name}}"
    written = {"200": kind, "201": kind}
    # The events.k8s.io view has no message of its own for a strategic merge patch to read.
    described = resource.native or resource.conversion is not None
    patch_types = PATCH_TYPES if described else PATCH_TYPES[:2] + PATCH_TYPES[3:]
    paths = [
        _Path(collection, scope_params, (
            _Operation("get", f"list{ident}{scoped}", "list", own, _LIST, {"200": kind_list},
                       produces=(JSON, WATCH_STREAM)),
            _Operation("post", f"create{ident}{scoped}", "post", own, _WRITE, {**written, "202": kind},
                       body=kind),
            _Operation("delete", f"delete{ident}Collection{scoped}", "deletecollection", own,
                       _DELETE_COLLECTION, {"200": STATUS}, body=DELETE_OPTIONS, body_required=False),
        )),
        _Path(item, ("name", *scope_params), (
            _Operation("get", f"read{ident}{scoped}", "get", own, (), {"200": kind}),
            _Operation("put", f"replace{ident}{scoped}", "put", own, _WRITE, written, body=kind),
            _Operation("patch", f"patch{ident}{scoped}", "patch", own, (*_WRITE, "force"), written,
                       body=PATCH, body_types=patch_types),
            _Operation("delete", f"delete{ident}{scoped}", "delete", own, _DELETE,
                       {"200": kind, "202": kind}, body=DELETE_OPTIONS, body_required=False),
        )),
        _Path(f"{base}/watch{scope}/{resource.plural}", scope_params, (
            _Operation("get", f"watch{ident}{scoped}List", "watchlist", own, (), {"200": WATCH_EVENT},
                       produces=(JSON, WATCH_STREAM)),
        ), watch=True),
        _Path(f"{base}/watch{scope}/{resource.plural}/{{name}}", ("name", *scope_params), (
            _Operation("get", f"watch{ident}{scoped}", "watch", own, (), {"200": WATCH_EVENT},
                       produces=(JSON, WATCH_STREAM)),
        ), watch=True),
    ]
    if resource.namespaced:
        paths.append(_Path(f"{base}/{resource.plural}", (), (
            _Operation("get", f"list{ident}{resource.kind}ForAllNamespaces", "list", own, _LIST,
                       {"200": kind_list}, produces=(JSON, WATCH_STREAM)),
        )))
        paths.append(_Path(f"{base}/watch/{resource.plural}", (), (
            _Operation("get", f"watch{ident}{resource.kind}ListForAllNamespaces", "watchlist", own, (),
                       {"200": WATCH_EVENT}, produces=(JSON, WATCH_STREAM)),
        ), watch=True))
    for sub in resource.subresources:
        body = bodies.get(sub.name, kind)
        paths.append(_subresource_path(item, ident, scoped, own, body, sub, scope_params, patch_types))
    return paths


def _subresource_path(
    item: str, ident: str, scoped: str, own: dict[str, str], kind: str, sub: Subresource,
    scope_params: tuple[str, ...], patch_types: tuple[str, ...],
) -> _Path:
    path = f"{item}/{sub.name}"
    suffix = f"{scoped}{sub.name[:1].upper()}{sub.name[1:]}"
    in_path = ("name", *scope_params)
    if sub.name == "status":
        written = {"200": kind, "201": kind}
        return _Path(path, in_path, (
            _Operation("get", f"read{ident}{suffix}", "get", own, (), {"200": kind}),
            _Operation("put", f"replace{ident}{suffix}", "put", own, _WRITE, written, body=kind),
            _Operation("patch", f"patch{ident}{suffix}", "patch", own, (*_WRITE, "force"), written,
                       body=PATCH, body_types=patch_types),
        ))
    sub_gvk = {"group": sub.group, "kind": sub.kind, "version": sub.version or "v1"}
    return _Path(path, in_path, (
        _Operation("post", f"create{ident}{suffix}", "post", sub_gvk, _WRITE,
                   {"200": kind, "201": kind, "202": kind}, body=kind),
    ))


def _query(name: str, v3: bool) -> Schema:
    kind, description = QUERY_PARAMETERS[name]
    parameter: Schema = {"name": name, "in": "query", "description": description}
    if v3:
        parameter["schema"] = {"type": kind, "uniqueItems": True}
    else:
        parameter.update(type=kind, uniqueItems=True)
    return parameter


def _in_path(name: str, v3: bool) -> Schema:
    descriptions = {"name": "The object's name.", "namespace": "The namespace of the objects."}
    parameter: Schema = {"name": name, "in": "path", "required": True, "description": descriptions[name]}
    if v3:
        parameter["schema"] = {"type": "string", "uniqueItems": True}
    else:
        parameter.update(type="string", uniqueItems=True)
    return parameter


def _render_operation(operation: _Operation, tag: str, v3: bool) -> Schema:
    out: Schema = {"tags": [tag], "operationId": operation.operation_id}
    parameters = [_query(name, v3) for name in operation.parameters]
    if not v3:
        out["consumes"] = list(operation.body_types) if operation.body else ["*/*"]
        out["produces"] = list(operation.produces)
        out["schemes"] = ["https"]
        if operation.body:
            body = {"name": "body", "in": "body", "required": operation.body_required}
            parameters.insert(0, {**body, "schema": ref(operation.body)})
    elif operation.body:
        out["requestBody"] = {
            "content": {media: {"schema": ref(operation.body)} for media in operation.body_types},
            "required": operation.body_required,
        }
    if parameters:
        out["parameters"] = parameters
    responses: Schema = {}
    for code, definition in operation.responses.items():
        description = {"200": "OK", "201": "Created", "202": "Accepted"}[code]
        if v3:
            content = {media: {"schema": ref(definition)} for media in operation.produces}
            responses[code] = {"description": description, "content": content}
        else:
            responses[code] = {"description": description, "schema": ref(definition)}
    responses["401"] = {"description": "Unauthorized"}
    out["responses"] = responses
    out["x-kubernetes-action"] = operation.action
    out["x-kubernetes-group-version-kind"] = operation.gvk
    return out


def _render_path(path: _Path, tag: str, v3: bool) -> Schema:
    item: Schema = {operation.method: _render_operation(operation, tag, v3) for operation in path.operations}
    shared = [_in_path(name, v3) for name in path.in_path]
    shared.append(_query("pretty", v3))
    if path.watch:
        shared.extend(_query(name, v3) for name in _LIST)
    item["parameters"] = shared
    return item


class OpenAPI:
    """Every OpenAPI document, encoded once. ``document`` answers a GET of an OpenAPI path."""

    def __init__(self) -> None:
        builder = SchemaBuilder()
        paths_by_gv: dict[str, list[_Path]] = {}
        for gv in group_versions():
            paths = paths_by_gv.setdefault(gv.path, [])
            for resource in gv.resources:
                if resource.native:
                    kind = builder.kind(resource.stored_as, gv.name)
                elif resource.conversion is not None:
                    kind = builder.kind(resource.stored_as, gv.name, resource.conversion.message)
                else:
                    kind = add_events_v1(builder)
                bodies = {
                    sub.name: builder.subresource_body(sub.kind)
                    for sub in resource.subresources if sub.name != "status"
                }
                paths.extend(_resource_paths(gv, resource, kind, f"{kind}List", bodies))
        self.definitions = dict(sorted(builder.definitions.items()))
        tags = {gv.path: _tag(gv) for gv in group_versions()}
        self.v2: dict[str, Any] = {
            "swagger": "2.0",
            "info": _INFO,
            "paths": {
                path.path: _render_path(path, tags[gv_path], v3=False)
                for gv_path, paths in paths_by_gv.items() for path in paths
            },
            "definitions": self.definitions,
            "securityDefinitions": _BEARER,
            "security": [{"BearerToken": []}],
        }
        self.v3: dict[str, dict[str, Any]] = {}
        for gv_path, paths in paths_by_gv.items():
            rendered = {path.path: _render_path(path, tags[gv_path], v3=True) for path in paths}
            schemas = closure(self.definitions, refs_of(rendered))
            self.v3[gv_path] = {
                "openapi": "3.0.0",
                "info": _INFO,
                "paths": retarget(rendered),
                "components": {"schemas": v3_schemas(schemas), "securitySchemes": _BEARER},
                "security": [{"BearerToken": []}],
            }
        self._documents: dict[str, Document] = {"/openapi/v2": encode(self.v2)}
        index: dict[str, Any] = {"paths": {}}
        for gv_path, document in self.v3.items():
            encoded = encode(document)
            self._documents[f"/openapi/v3/{gv_path}"] = encoded
            index["paths"][gv_path] = {"serverRelativeURL": f"/openapi/v3/{gv_path}?hash={encoded.digest}"}
        self._documents["/openapi/v3"] = encode(index)

    def paths(self) -> tuple[str, ...]:
        """Every OpenAPI path served."""
        return tuple(self._documents)

    def document(self, path: str) -> Document | None:
        """The document at ``path`` (without the query: a v3 URL's ``hash`` only busts caches), or None.
        ``/openapi/v2`` is JSON only: a client asking for the protobuf encoding alone gets 406."""
        return self._documents.get(path)
