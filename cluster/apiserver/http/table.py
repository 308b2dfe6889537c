"""The meta.k8s.io/v1 Table of a list, an object or a watch event's object: what kube-apiserver answers a
client that accepts ``application/json;as=Table;v=v1;g=meta.k8s.io`` (kubectl get does).

The columns are the kind's printer's (cluster/printers), as kubectl would print them from the object
itself: the server sends every column, the wide ones with priority 1, and kubectl shows those only for
``-o wide``. Each row carries the object as the request's ``includeObject`` asks: none, its metadata as a
PartialObjectMetadata (the default), or the whole object.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors
from cluster.api.kinds import Kind, metadata_of
from cluster.printers.catalog import PRINTERS
from cluster.printers.table import Columns

API_VERSION = "meta.k8s.io/v1"

#: includeObject's values; an empty one means METADATA.
NONE = "None"
METADATA = "Metadata"
OBJECT = "Object"

#: The whole object as Kubernetes JSON (the codec's), for includeObject=Object and for the metadata.
ToDict = Callable[[Message], dict[str, Any]]


def check_include_object(include_object: str) -> None:
    """Raise BadRequest for an includeObject value Kubernetes does not know."""
    if include_object not in ("", NONE, METADATA, OBJECT):
        raise errors.BadRequest(f'unrecognized includeObject value: "{include_object}"')


def table_of_list(
    kind: Kind[Any],
    items: Sequence[Message],
    *,
    include_object: str,
    resource_version: str,
    continue_token: str,
    remaining: int | None,
    now: float,
    to_dict: ToDict,
    no_headers: bool = False,
) -> dict[str, Any]:
    """The Table of a list's ``items`` and its list metadata, at ``now`` (seconds since the epoch)."""
    check_include_object(include_object)
    columns = PRINTERS[kind].columns
    metadata: dict[str, Any] = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    if remaining is not None:
        metadata["remainingItemCount"] = remaining
    return _table(columns, metadata, [_row(columns, obj, include_object, now, to_dict) for obj in items],
                  no_headers)


def table_of_object(
    kind: Kind[Any],
    obj: Message,
    *,
    include_object: str,
    now: float,
    to_dict: ToDict,
    no_headers: bool = False,
) -> dict[str, Any]:
    """The Table of one object (a GET, or a watch event's object: a watch sends the columns with its first
    event only, so its later events pass ``no_headers``)."""
    check_include_object(include_object)
    columns = PRINTERS[kind].columns
    resource_version = metadata_of(obj).resource_version
    metadata = {"resourceVersion": resource_version} if resource_version else {}
    return _table(columns, metadata, [_row(columns, obj, include_object, now, to_dict)], no_headers)


def _table(
    columns: Columns[Any], metadata: dict[str, Any], rows: list[dict[str, Any]], no_headers: bool
) -> dict[str, Any]:
    return {
        "kind": "Table",
        "apiVersion": API_VERSION,
        "metadata": metadata,
        # Kubernetes sends null, not an empty list, when the request asked for no headers.
        "columnDefinitions": None if no_headers else column_definitions(columns),
        "rows": rows,
    }


def column_definitions(columns: Columns[Any]) -> list[dict[str, Any]]:
    return [
        {"name": column.name, "type": column.type, "format": column.format,
         "description": column.description, "priority": column.priority}
        for column in columns.columns
    ]


def _row(
    columns: Columns[Any], obj: Message, include_object: str, now: float, to_dict: ToDict
) -> dict[str, Any]:
    embedded: dict[str, Any] | None
    if include_object == NONE:
        embedded = None
    elif include_object == OBJECT:
        embedded = to_dict(obj)
    else:
        embedded = {"kind": "PartialObjectMetadata", "apiVersion": API_VERSION,
                    "metadata": to_dict(obj).get("metadata", {})}
    return {"cells": columns.row(obj, now), "object": embedded}
