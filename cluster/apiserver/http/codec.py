"""Objects to and from the Kubernetes JSON of the HTTP API.

Out: each object as kube-apiserver's JSON carries it (``convert.to_wire_dict``), in the group/version of
the URL it was asked at (converted from the stored version when that group/version is served by
conversion: cluster.api.conversion). In: a request body (JSON, or YAML where the verb takes it) decoded
against the message of the URL's group/version by the manifest loader's walk, its type meta filled in from
the URL when absent and checked when given, then converted to the stored version where it is another.
What the walk drops is judged by the request's ``fieldValidation``, as kube-apiserver judges it: Strict
refuses an unknown or repeated field (400, ``strict decoding error: unknown field "spec.foo"``), Warn (the
default) sends one ``Warning`` header per field, Ignore drops them silently. The real Kubernetes fields
podsched does not model are warned of under Strict and Warn alike, never refused: real manifests must
apply unedited.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import errors, kinds, validation
from cluster.api.conversion import ConversionError
from cluster.api.convert import to_wire_dict
from cluster.api.decoding import DecodeError, documents
from cluster.api.manifest import clean_object, object_of
from cluster.apiserver.http.eventsv1 import from_events_v1, to_events_v1
from cluster.apiserver.http.paths import Resource

FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")
#: The largest body the server reads (kube-apiserver's limit for a write is 3 MiB).
MAX_BODY_BYTES = 3 * 1024 * 1024


def encode(obj: Message, resource: Resource) -> dict[str, Any]:
    """``obj`` as JSON in ``resource``'s group/version (events.k8s.io/v1 reshapes a core Event)."""
    data = to_wire_dict(obj)
    if resource.is_events_v1:
        return to_events_v1(data)
    if resource.conversion is not None:
        return resource.conversion.to_served(data)
    data["apiVersion"] = resource.group_version
    return data


def dumps(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def read_body(body: bytes) -> Any:
    """The one document of a JSON body (or YAML, which server-side apply takes), its mappings
    remembering keys given twice; BadRequest naming what is wrong when it cannot be read."""
    try:
        docs = [data for _, data in documents(body.decode(), "the request body", numbered=False)]
    except (UnicodeDecodeError, DecodeError) as exc:
        raise errors.BadRequest(f"the body of the request could not be decoded: {exc}") from None
    if len(docs) != 1:
        raise errors.BadRequest(f"the body of the request must hold one object, not {len(docs)} documents")
    return docs[0]


def field_validation_of(value: str | None) -> str:
    if value is None or value == "":
        return "Warn"
    if value not in FIELD_VALIDATIONS:
        raise errors.BadRequest(
            f'fieldValidation must be one of "Ignore", "Warn" or "Strict", not "{value}"')
    return value


def clean(data: Any, resource: Resource, field_validation: str) -> tuple[dict[str, Any], list[str]]:
    """A request body's JSON as the resource's kind takes it (every field it lacks removed; the
    events.k8s.io view in the core shape), and the warnings to send with the answer."""
    kind = resource.kind
    handled = f'{kind.name} in version "{resource.version}" cannot be handled as a {kind.name}'
    if not isinstance(data, dict):
        raise errors.BadRequest(f"{handled}: the body is not a JSON object")
    api_version = data.setdefault("apiVersion", resource.group_version)
    kind_name = data.setdefault("kind", kind.name)
    if api_version != resource.group_version:
        raise errors.BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({resource.group_version})")
    if kind_name != kind.name:
        raise errors.BadRequest(f"the kind in the data ({kind_name}) does not match the expected kind "
                                f"({kind.name})")
    if resource.is_events_v1:
        data = from_events_v1(data)
    cleaned = clean_object(data, resource.message)
    if cleaned.errors:
        raise errors.BadRequest(f"{handled}: {'; '.join(cleaned.errors)}")
    dropped = [f'unknown field "{path}"' for path in cleaned.unknown]
    dropped += [f'duplicate field "{path}"' for path in cleaned.duplicates]
    if field_validation == "Strict" and dropped:
        raise errors.BadRequest(f"{handled}: strict decoding error: {', '.join(dropped)}")
    if field_validation == "Ignore":
        return cleaned.data, []
    modelled = [f"{path}: a Kubernetes field podsched does not model (ignored)"
                for path in cleaned.not_modelled]
    return cleaned.data, dropped + modelled


def to_object(cleaned: dict[str, Any], resource: Resource) -> Message:
    """``clean``'s data as the object to write, in the stored version. A value the stored version cannot
    hold is Invalid (422), as kube-apiserver's validation of the converted object words it."""
    if resource.conversion is not None:
        try:
            cleaned = resource.conversion.to_stored(cleaned)
        except ConversionError as exc:
            unconverted = resource.kind.message()
            metadata = cleaned.get("metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
                kinds.metadata_of(unconverted).name = metadata["name"]
            validation.ensure_valid(unconverted, exc.problems)
    try:
        return object_of(cleaned, resource.kind)
    except json_format.ParseError as exc:  # clean() checks what ParseDict checks; this is a backstop
        raise errors.BadRequest(str(exc)) from None


def decode(data: Any, resource: Resource, field_validation: str) -> tuple[Message, list[str]]:
    """The object a request body carries, and the warnings to send with the answer."""
    cleaned, warnings = clean(data, resource, field_validation)
    return to_object(cleaned, resource), warnings
