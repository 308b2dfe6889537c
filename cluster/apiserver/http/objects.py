"""The single-object verbs of the HTTP API: get, create, update (and the status subresource), delete,
and pods/binding; each the same verb the gRPC API calls, with kube-apiserver's HTTP answers (201 for a
create, the object for a delete, metav1.Status for a binding)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, cast

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2
from cluster.apiserver import binding
from cluster.apiserver import eviction as eviction_rest
from cluster.apiserver.http import codec
from cluster.apiserver.http.apply.apply import manager_of
from cluster.apiserver.http.apply.managedfields import fill_entry, record_update
from cluster.apiserver.http.call import Call
from cluster.apiserver.http.table import table_of_object
from cluster.apiserver.strategy import DEFAULT_NAMESPACE


async def get(call: Call) -> web.Response:
    resource = call.target.resource
    obj = await call.verbs.get(resource.kind, call.info.namespace, call.target.name)
    if call.table:
        return call.respond(table_of_object(resource.kind, obj, include_object=call.include_object,
                                            now=time.time(), to_dict=lambda one: codec.encode(one, resource)))
    return call.respond(codec.encode(obj, resource))


def _check_identity(obj: Message, call: Call, *, name_required: bool) -> None:
    """The body's namespace and name against the URL's, as kube-apiserver checks them."""
    meta = kinds.metadata_of(obj)
    kind = call.target.resource.kind
    if kind.namespaced:
        if meta.namespace and meta.namespace != call.info.namespace:
            raise errors.BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request")
        meta.namespace = call.info.namespace
    elif meta.namespace:
        meta.namespace = ""
    if name_required and meta.name != call.target.name:
        if not meta.name:
            meta.name = call.target.name
        else:
            raise errors.BadRequest(
                f"the name of the object ({meta.name}) does not match the name on the URL "
                f"({call.target.name})")


def with_managed_fields(call: Call, live: dict[str, Any] | None, cleaned: dict[str, Any]) -> Message:
    """The object a create, update or patch writes (``cleaned``: its body as the kind takes it), its
    managedFields recording the write's field manager (``fieldManager``, else the client's User-Agent)
    as every write of kube-apiserver's does. As there, the change is judged on the object as it will be
    read back (decoded, so a field set to its zero value is no field), and a body's own managedFields
    (``[]`` resets them) are taken as given. The events.k8s.io view is another shape than its stored
    message: its writes record none."""
    resource = call.target.resource
    obj = codec.to_object(cleaned, resource)
    if resource.is_events_v1:
        return obj
    new = codec.encode(obj, resource)
    given = cleaned.get("metadata")
    if isinstance(given, dict) and "managedFields" in given:
        new.setdefault("metadata", {})["managedFields"] = given["managedFields"]
    manager = manager_of(call.query.get("fieldManager"), call.request.headers.get("User-Agent", ""))
    recorded = record_update(live, new, manager, resource.group_version, call.target.subresource,
                             rfc3339_now(), message=descriptor_of(call))
    meta = kinds.metadata_of(obj)
    del meta.managed_fields[:]
    for entry in recorded.get("metadata", {}).get("managedFields", ()):
        fill_entry(entry, meta.managed_fields.add())
    return obj


def descriptor_of(call: Call) -> Descriptor:
    return cast(Descriptor, call.target.resource.message.DESCRIPTOR)


def rfc3339_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cleaned(call: Call, data: Any) -> dict[str, Any]:
    """The body as the kind takes it (codec.clean), its warnings kept for the answer. Field managers
    are recorded on this, so that nobody is made the owner of a field podsched drops."""
    data, warnings = codec.clean(data, call.target.resource, call.field_validation)
    call.warnings.extend(warnings)
    return data


async def create(call: Call) -> web.Response:
    resource = call.target.resource
    obj = with_managed_fields(call, None, cleaned(call, await call.body()))
    _check_identity(obj, call, name_required=False)
    created = await call.verbs.create(obj, dry_run=call.dry_run)
    return call.respond(codec.encode(created, resource), 201)


async def update(call: Call) -> web.Response:
    body = await call.body()
    resource = call.target.resource
    try:
        live: dict[str, Any] | None = codec.encode(
            await call.verbs.get(resource.kind, call.info.namespace, call.target.name), resource)
    except errors.NotFound:
        live = None  # the update answers NotFound itself
    obj = with_managed_fields(call, live, cleaned(call, body))
    _check_identity(obj, call, name_required=True)
    return await write(call, obj)


async def write(call: Call, obj: Message) -> web.Response:
    """Replace the object (or its status, at the status subresource) with ``obj``."""
    verbs = call.verbs
    if call.target.subresource == "status":
        updated = await verbs.update_status(
            obj, dry_run=call.dry_run, nomination_check=verbs.leadership.nomination_check(call.user, None))
    else:
        updated = await verbs.update(obj, dry_run=call.dry_run)
    return call.respond(codec.encode(updated, call.target.resource))


async def delete(call: Call) -> web.Response:
    options = await _delete_options(call)
    target = call.target
    kind, namespace = target.resource.kind, call.info.namespace
    call.verbs.leadership.check_delete(call.user, kind, namespace, target.name, None)
    deleted = await call.verbs.delete(
        kind, namespace, target.name, grace_period_seconds=options.get("grace"),
        resource_version=options.get("resourceVersion", ""), uid=options.get("uid", ""),
        dry_run=options["dry_run"],
    )
    return call.respond(codec.encode(deleted, target.resource))


async def _delete_options(call: Call) -> dict[str, Any]:
    """DeleteOptions from the body (kubectl sends them there) and the query (the Python client's)."""
    raw = await call.raw_body()
    body: Any = codec.read_body(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise errors.BadRequest("the body of a delete must be a DeleteOptions object")
    options: dict[str, Any] = {"dry_run": call.dry_run or body.get("dryRun") == ["All"]}
    grace = body.get("gracePeriodSeconds", call.integer("gracePeriodSeconds"))
    if grace is not None:
        if isinstance(grace, bool) or not isinstance(grace, int):
            raise errors.BadRequest(f"gracePeriodSeconds: Invalid value: {grace!r}: must be an integer")
        options["grace"] = grace
    preconditions = body.get("preconditions") or {}
    if not isinstance(preconditions, dict):
        raise errors.BadRequest("preconditions: must be an object")
    for key in ("uid", "resourceVersion"):
        value = preconditions.get(key)
        if value:
            options[key] = str(value)
    return options


async def bind(call: Call) -> web.Response:
    """pods/binding: a v1 Binding naming the node; refused for a non-admin under enforced leadership
    exactly as an unfenced gRPC Bind is (an HTTP bind carries no fence)."""
    data = await call.body()
    if not isinstance(data, dict):
        raise errors.BadRequest("the body of a binding must be a Binding object")
    request = objects_pb2.Binding()
    meta = data.get("metadata") or {}
    target = data.get("target") or {}
    if not isinstance(meta, dict) or not isinstance(target, dict):
        raise errors.BadRequest("a Binding's metadata and target must be objects")
    request.metadata.name = str(meta.get("name") or call.target.name)
    request.metadata.namespace = call.info.namespace or DEFAULT_NAMESPACE
    if call.target.bindings:
        if not request.metadata.name:
            raise errors.Invalid('Binding "" is invalid: metadata.name: Required value: name is required')
    elif request.metadata.name != call.target.name:
        raise errors.BadRequest(
            f"the name of the object ({request.metadata.name}) does not match the name on the URL "
            f"({call.target.name})")
    if meta.get("uid"):
        request.metadata.uid = str(meta["uid"])
    if meta.get("resourceVersion"):
        request.metadata.resource_version = str(meta["resourceVersion"])
    request.target.kind = str(target.get("kind") or "Node")
    request.target.name = str(target.get("name") or "")
    if call.dry_run:
        raise errors.BadRequest("dryRun is not supported for pods/binding")
    verbs = call.verbs
    verbs.leadership.check_bind(call.user, request.metadata.namespace, request.metadata.name, None)
    await binding.bind(verbs.registry, request, verbs.now(), peek=verbs.cache.peek)
    return call.respond(success_status(), 201)


async def evict(call: Call) -> web.Response:
    """pods/eviction: a policy/v1 Eviction, the pod deleted only if its PodDisruptionBudget allows
    (eviction.py); kubectl drain's way to delete."""
    data = await call.body()
    if not isinstance(data, dict):
        raise errors.BadRequest("the body of an eviction must be an Eviction object")
    eviction = objects_pb2.Eviction()
    try:
        json_format.ParseDict(data, eviction, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise errors.BadRequest(f"the Eviction cannot be read: {exc}") from None
    await eviction_rest.evict(
        call.verbs, call.info.namespace, call.target.name, eviction, dry_run=call.dry_run)
    return call.respond(success_status(), 201)


def success_status() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
