"""PATCH, as kube-apiserver's patcher: read the live object, apply the patch to its JSON (JSON patch,
merge patch, strategic merge patch: patch/patcher.py), decode the result with the request's field
validation, and write it as an update (of the status subresource, when addressed) at the live object's
resourceVersion. A write that loses that compare-and-swap to a concurrent one reads again and re-applies
the patch, as upstream does, unless the patch itself names the resourceVersion it expects (then the
conflict is the caller's to see). Server-side apply, the fourth patch type, is at the end."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cluster.api import errors, kinds
from cluster.apiserver.http import codec
from cluster.apiserver.http.apply.apply import server_side_apply
from cluster.apiserver.http.call import Call
from cluster.apiserver.http.objects import cleaned, descriptor_of, rfc3339_now, with_managed_fields, write
from cluster.apiserver.http.patch.patcher import (
    APPLY_PATCH,
    PATCH_TYPES,
    apply_patch,
    patch_type,
    unsupported_patch_type,
)

#: Attempts of a patch whose write keeps losing to concurrent writes (kube-apiserver's patcher retries
#: its GuaranteedUpdate likewise until the request's deadline).
MAX_ATTEMPTS = 8


async def patch(call: Call) -> web.Response:
    content_type = patch_type(call.request.headers.get("Content-Type", ""))
    if content_type != APPLY_PATCH and content_type not in PATCH_TYPES:
        raise unsupported_patch_type()
    body = await call.raw_body()
    if content_type == APPLY_PATCH:
        return await server_side_apply_patch(call, codec.read_body(body))
    resource = call.target.resource
    descriptor = descriptor_of(call)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        live = await call.verbs.get(resource.kind, call.info.namespace, call.target.name)
        original = codec.encode(live, resource)
        # Warnings repeated by a retry are sent once (add_warnings).
        obj = with_managed_fields(call, original, cleaned(call, apply_patch(content_type, original, body,
                                                                           descriptor)))
        live_version = kinds.metadata_of(live).resource_version
        meta = kinds.metadata_of(obj)
        asked_version = meta.resource_version != live_version and bool(meta.resource_version)
        if not meta.resource_version:
            meta.resource_version = live_version
        try:
            return await write(call, obj)
        except errors.Conflict:
            if asked_version or attempt == MAX_ATTEMPTS:
                raise
    raise AssertionError("the loop returns or raises")


async def server_side_apply_patch(call: Call, applied: Any) -> web.Response:
    """Server-side apply (``application/apply-patch+yaml``): merge the applied configuration into the
    live object under the request's field manager (apply/), or create the object from it; conflicts with
    other managers' fields are 409 unless ``force``. A write that loses to a concurrent one is merged
    again into the object read afresh."""
    resource = call.target.resource
    configuration = applied
    if isinstance(applied, dict):
        # What podsched drops is never applied (nor owned): the configuration as the kind takes it.
        configuration = cleaned(call, applied)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            live = await call.verbs.get(resource.kind, call.info.namespace, call.target.name)
        except errors.NotFound:
            if call.target.subresource:
                raise
            live = None
        merged = server_side_apply(
            codec.encode(live, resource) if live is not None else None, configuration,
            call.query.get("fieldManager", ""), call.flag("force"), resource.group_version,
            descriptor_of(call), rfc3339_now(), name=call.target.name, namespace=call.info.namespace,
            subresource=call.target.subresource)
        obj = codec.to_object(merged, resource)
        try:
            if live is None:
                if resource.kind.namespaced:
                    # The applied configuration need not name it (_check_name refused another): the URL's.
                    kinds.metadata_of(obj).namespace = call.info.namespace
                created = await call.verbs.create(obj, dry_run=call.dry_run)
                return call.respond(codec.encode(created, resource), 201)
            kinds.metadata_of(obj).resource_version = kinds.metadata_of(live).resource_version
            return await write(call, obj)
        except (errors.Conflict, errors.AlreadyExists):
            if attempt == MAX_ATTEMPTS:
                raise
    raise AssertionError("the loop returns or raises")
