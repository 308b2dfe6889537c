"""The collection verbs of the HTTP API: list (with kube's paging, selectors and resourceVersion
semantics) and deletecollection."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from cluster.api import errors, kinds
from cluster.apiserver.http import codec
from cluster.apiserver.http.call import MAX_PAGE_SIZE, Call
from cluster.apiserver.http.eventsv1 import core_field_selector
from cluster.apiserver.http.table import table_of_list
from cluster.apiserver.listing import ObjectPage
from cluster.apiserver.selection import Selection
from cluster.apiserver.verbs import check_path_name

RESOURCE_VERSION_MATCHES = ("", "NotOlderThan", "Exact")


def selection_of(call: Call) -> Selection:
    resource = call.target.resource
    fields = call.query.get("fieldSelector", "")
    if resource.is_events_v1 and fields:
        fields = core_field_selector(fields)
    return Selection.parse(resource.kind, call.query.get("labelSelector", ""), fields)


def collection_namespace(call: Call) -> str:
    namespace = call.target.namespace
    if namespace:
        check_path_name("namespace", namespace)
    return namespace


async def read_page(call: Call) -> ObjectPage:
    """The page a list asks for. Every read is of the latest state (a consistent read, which satisfies
    ``resourceVersion=0`` and any NotOlderThan the server has reached); an Exact read of an older
    revision is refused as kube-apiserver refuses one it cannot serve."""
    query = call.query
    match = query.get("resourceVersionMatch", "")
    if match not in RESOURCE_VERSION_MATCHES:
        raise errors.BadRequest(
            f'resourceVersionMatch: Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"')
    resource_version = query.get("resourceVersion", "")
    continue_token = query.get("continue", "")
    if match and not resource_version:
        raise errors.Invalid("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if continue_token and match:
        raise errors.Invalid("resourceVersionMatch is forbidden when continue is provided")
    limit = call.integer("limit") or 0
    page = await call.verbs.cache.list(
        selection_of(call), collection_namespace(call), limit=limit, continue_token=continue_token,
        max_page_size=call.request.app[MAX_PAGE_SIZE],
    )
    if resource_version and resource_version != "0":
        try:
            wanted = int(resource_version)
        except ValueError:
            raise errors.BadRequest(
                f'resourceVersion: Invalid value: "{resource_version}": must be an integer') from None
        if match == "Exact" and wanted != page.revision:
            raise errors.Expired(
                f"too old resource version: {wanted} ({page.revision}): an Exact list is served only at "
                "the current resourceVersion")
        if wanted > page.revision:
            raise errors.Timeout(f"Too large resource version: {wanted}, current: {page.revision}")
    return page


def list_body(call: Call, page: ObjectPage, items: list[dict[str, Any]]) -> dict[str, Any]:
    resource = call.target.resource
    metadata: dict[str, Any] = {"resourceVersion": str(page.revision)}
    if page.continue_token:
        metadata["continue"] = page.continue_token
    return {"kind": f"{resource.kind.name}List", "apiVersion": resource.group_version, "metadata": metadata,
            "items": items}


async def list_(call: Call) -> web.Response:
    resource = call.target.resource
    if call.table:
        include = call.include_object
        page = await read_page(call)
        return call.respond(table_of_list(
            resource.kind, page.items, include_object=include, resource_version=str(page.revision),
            continue_token=page.continue_token, remaining=None, now=time.time(),
            to_dict=lambda obj: codec.encode(obj, resource)))
    page = await read_page(call)
    return call.respond(list_body(call, page, [codec.encode(obj, resource) for obj in page.items]))


async def delete_collection(call: Call) -> web.Response:
    """Delete every selected object (each a delete of its own, as kube-apiserver's DeleteCollection);
    the answer lists them as deleted or as marked for a graceful deletion."""
    resource = call.target.resource
    kind = resource.kind
    page = await call.verbs.cache.list(selection_of(call), collection_namespace(call))
    grace = call.integer("gracePeriodSeconds")
    deleted = []
    for obj in page.items:
        meta = kinds.metadata_of(obj)
        call.verbs.leadership.check_delete(call.user, kind, meta.namespace, meta.name, None)
        try:
            deleted.append(await call.verbs.delete(
                kind, meta.namespace, meta.name, grace_period_seconds=grace, dry_run=call.dry_run))
        except errors.NotFound:
            continue  # gone meanwhile: what was asked
    return call.respond(list_body(call, page, [codec.encode(obj, resource) for obj in deleted]))
