"""Kubernetes manifests (YAML or JSON files) into API objects.

Real manifests must load unedited, so the loader behaves like kubectl with its default field validation:

- a field its message lacks is dropped with a warning. A real Kubernetes field podsched does not model
  (``cluster.api.unmodelled``) is worded ``spec.dnsPolicy: a Kubernetes field podsched does not model
  (ignored)``; any other is a mistake, worded ``spec.nodeSelecter: unknown field (did you mean
  "nodeSelector"?)`` with the nearest field the message knows. A key given twice in one mapping warns
  ``duplicate field "..."``. ``strict=True`` (``--validate=strict``) makes all of these errors, as
  kubectl's fieldValidation=Strict fails on any field that would be dropped from the object;
- a value of the wrong type is an error, as the API server's decoder makes it one: ``version: 1`` under
  ``labels`` or ``gpu: true`` under ``nodeSelector`` is a number or a boolean where a string is required
  (YAML reads them so; quote them). YAML timestamps stay strings and must be RFC 3339;
- ``kind`` and ``apiVersion`` must name a kind podsched serves, in a version it serves; a version served by
  conversion (cluster.api.conversion: scheduling.k8s.io/v1alpha2) is read in its own shape and converted
  to the stored version's object, a value that has no equal there an error naming its field;
- ``kind: List`` expands to its ``items``; empty documents (bare ``---``, comments) are skipped.

The dict of each document is walked against the protobuf descriptors — that is where unknown fields and
wrong types are found with their paths — and the cleaned dict is then parsed by protobuf's JSON mapping.
Loading is all or nothing: any error anywhere raises one ``ManifestError`` listing every problem as
``<source>: document <n> (<Kind> <name>): <field path>: <problem>``, and nothing is returned.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import conversion, kinds
from cluster.api.decoding import (
    MAX_FLOW_NESTING,
    MAX_VALUES_PER_DOCUMENT,
    DecodeError,
    Findings,
    YamlMapping,
    documents,
    join,
    json_type_name,
    with_duplicates_of,
)
from cluster.api.unmodelled import NOT_MODELLED

__all__ = [
    "MAX_FLOW_NESTING",
    "MAX_MANIFEST_CHARS",
    "MAX_VALUES_PER_DOCUMENT",
    "STDIN_SOURCE",
    "Manifest",
    "ManifestError",
    "load_paths",
    "load_text",
    "parse_document",
]

#: How ``load_paths`` names standard input in messages (kubectl's word).
STDIN_SOURCE = "STDIN"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# A file or stdin is read up to this many characters: far above any manifest of objects under the API
# server's 1.5 MiB limit, and a bound on what `apply -f /dev/zero` holds in memory before it stops.
MAX_MANIFEST_CHARS = 64 * 1024 * 1024

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_UINT32 = (0, 2**32 - 1)
_UINT64 = (0, 2**64 - 1)
_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: _INT32, FieldDescriptor.TYPE_SINT32: _INT32,
    FieldDescriptor.TYPE_SFIXED32: _INT32, FieldDescriptor.TYPE_INT64: _INT64,
    FieldDescriptor.TYPE_SINT64: _INT64, FieldDescriptor.TYPE_SFIXED64: _INT64,
    FieldDescriptor.TYPE_UINT32: _UINT32, FieldDescriptor.TYPE_FIXED32: _UINT32,
    FieldDescriptor.TYPE_UINT64: _UINT64, FieldDescriptor.TYPE_FIXED64: _UINT64,
}
_FLOATS = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)


class ManifestError(DecodeError):
    """A manifest cannot be loaded; ``problems`` lists every error, each naming file, document and field."""


@dataclass(slots=True)
class Manifest:
    #: The file the object came from ("STDIN" for standard input).
    source: str
    #: The 1-based number of the document in its source, as messages print it (empty documents not counted).
    index: int
    kind: kinds.Kind[Any]
    obj: Message
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------- loading


def load_paths(paths: Sequence[str], *, strict: bool = False) -> list[Manifest]:
    """Every manifest in ``paths``: files, directories (their ``*.yaml``, ``*.yml`` and ``*.json``
    files, sorted, not recursive) and ``-`` for standard input. All or nothing."""
    manifests: list[Manifest] = []
    problems: list[str] = []
    for source, text in _read_sources(paths, problems):
        try:
            manifests.extend(load_text(text, source=source, strict=strict))
        except ManifestError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ManifestError(problems)
    return manifests


def _read_sources(paths: Sequence[str], problems: list[str]) -> Iterator[tuple[str, str]]:
    for path in paths:
        if path == "-":
            text = _read_limited(sys.stdin, STDIN_SOURCE, problems)
            if text is not None:
                yield STDIN_SOURCE, text
        elif os.path.isdir(path):
            names = sorted(name for name in os.listdir(path) if name.endswith(MANIFEST_SUFFIXES))
            files = [os.path.join(path, name) for name in names]
            files = [file for file in files if os.path.isfile(file)]
            if not files:
                problems.append(f"{path}: no manifest files in the directory (*.yaml, *.yml, *.json)")
            for file in files:
                text = _read_file(file, problems)
                if text is not None:
                    yield file, text
        else:
            text = _read_file(path, problems)
            if text is not None:
                yield path, text


def _read_file(path: str, problems: list[str]) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return _read_limited(handle, path, problems)
    except FileNotFoundError:
        problems.append(f'{path}: the path "{path}" does not exist')
    except UnicodeDecodeError as exc:
        problems.append(f"{path}: not UTF-8 text: {exc}")
    except OSError as exc:
        problems.append(f"{path}: {exc.strerror or exc}")
    return None


def _read_limited(handle: TextIO, source: str, problems: list[str]) -> str | None:
    """The handle's text, or None (and a problem) past MAX_MANIFEST_CHARS: /dev/zero or an endless pipe
    must end in an error, not in a command that reads until memory runs out."""
    text = handle.read(MAX_MANIFEST_CHARS + 1)
    if len(text) > MAX_MANIFEST_CHARS:
        problems.append(f"{source}: longer than {MAX_MANIFEST_CHARS} characters (the limit): not a manifest")
        return None
    return text


def load_text(text: str, *, source: str, strict: bool = False) -> list[Manifest]:
    """The manifests of one YAML (multi-document) or JSON text. All or nothing."""
    manifests: list[Manifest] = []
    problems: list[str] = []
    try:
        for index, data in documents(text, source):
            problems.extend(_load_document(data, source, index, strict, manifests))
    except DecodeError as exc:  # a YAML syntax error: the documents before it are reported too
        problems.extend(exc.problems)
    if problems:
        raise ManifestError(problems)
    return manifests


def _load_document(data: Any, source: str, index: int, strict: bool, into: list[Manifest]) -> list[str]:
    """Parse one document (a list expands to its items) into ``into``; return its problems."""
    items = _list_items(data)
    if items is None:
        entries: list[tuple[Any, int | None]] = [(data, None)]
    elif isinstance(items, list):
        entries = list(zip(items, range(len(items)), strict=True))
    else:
        return [f"{source}: document {index} ({data['kind']}): items: Invalid value: "
                f"{json_type_name(items)}: expected an array of objects"]
    problems = []
    for document, item in entries:
        try:
            into.append(parse_document(document, source=source, index=index, strict=strict, item=item))
        except ManifestError as exc:
            problems.extend(exc.problems)
    return problems


def _list_items(data: Any) -> Any:
    """The ``items`` of a list document (``kind: List``, or ``PodList`` as a typed list is printed), or
    None for any other document. A typed list's items may omit kind and apiVersion; they are filled in."""
    if not isinstance(data, dict):
        return None
    kind_name = data.get("kind")
    if kind_name == "List":
        return data.get("items")
    if not (isinstance(kind_name, str) and kind_name.endswith("List")):
        return None
    item_kind = next((kind for kind in kinds.KINDS if kind.name == kind_name[: -len("List")]), None)
    if item_kind is None:
        return None
    items = data.get("items")
    if not isinstance(items, list):
        return items
    return [_with_type_meta(item, data.get("apiVersion"), item_kind.name) for item in items]


def _with_type_meta(item: Any, api_version: Any, kind_name: str) -> Any:
    if not isinstance(item, dict):
        return item
    filled = YamlMapping({"apiVersion": api_version, "kind": kind_name})
    filled.update(item)
    return with_duplicates_of(item, filled)


def parse_document(
    data: Any, *, source: str, index: int, strict: bool, item: int | None = None
) -> Manifest:
    """One document (already parsed from YAML/JSON) as an API object. ``item`` is its position in a
    ``kind: List``'s ``items``, for messages. Raises ManifestError listing every problem."""
    where = f"{source}: document {index}" + (f", items[{item}]" if item is not None else "")
    if not isinstance(data, dict):
        raise ManifestError([f"{where}: expected an object (a mapping), got {json_type_name(data)}"])
    kind_name = data.get("kind")
    api_version = data.get("apiVersion")
    identity = _identity(kind_name, data)
    problems = []
    if kind_name is None or kind_name == "":
        problems.append(f"{where}{identity}: kind: Required value: every manifest names its kind "
                        '(e.g. "kind: Pod")')
    elif not isinstance(kind_name, str):
        problems.append(f"{where}{identity}: kind: Invalid value: {_shown(kind_name)}: expected a string, "
                        f"got {json_type_name(kind_name)}")
    if api_version is None or api_version == "":
        problems.append(f"{where}{identity}: apiVersion: Required value: every manifest names its "
                        'apiVersion (e.g. "apiVersion: v1")')
    elif not isinstance(api_version, str):
        problems.append(f"{where}{identity}: apiVersion: Invalid value: {_shown(api_version)}: expected a "
                        f"string, got {json_type_name(api_version)}")
    if problems:
        raise ManifestError(problems)
    assert isinstance(kind_name, str) and isinstance(api_version, str), "checked above"
    kind = _served_kind(kind_name, api_version, f"{where}{identity}")
    converted = conversion.conversion_of(api_version, kind_name)

    walk = _Walk(strict)
    shape = kind.message if converted is None else converted.message
    # The stubs also allow upb's own descriptor class, which is what runs and has the same API.
    cleaned = walk.message(data, cast(Descriptor, shape.DESCRIPTOR), "")
    problems = [f"{where}{identity}: {problem}" for problem in walk.errors]
    if converted is not None and not problems:
        try:
            cleaned = converted.to_stored(cleaned)
        except conversion.ConversionError as exc:
            problems = [f"{where}{identity}: {problem}" for problem in exc.problems]
    if problems:
        raise ManifestError(problems)
    obj = kind.message()
    try:
        json_format.ParseDict(cleaned, obj)
    except json_format.ParseError as exc:  # the walk checks what ParseDict checks; this is a backstop
        raise ManifestError([f"{where}{identity}: {exc}"]) from None
    return Manifest(source, index, kind, obj, walk.warnings)


@dataclass(slots=True)
class CleanedObject:
    """An API request's body as its kind's message takes it: the data with every field the message
    lacks removed, and the field paths removed, apart: what the request's field validation (Strict, Warn,
    Ignore) then makes errors or warnings of."""

    data: dict[str, Any]
    #: Type errors: the body cannot be this kind at all, whatever the field validation.
    errors: list[str]
    unknown: list[str]
    not_modelled: list[str]
    duplicates: list[str]


def clean_object(data: dict[str, Any], message: type[Message]) -> CleanedObject:
    """``data`` (a request body, its type meta already checked) walked against ``message``: its kind's,
    or the shape of the version it is served in by conversion."""
    walk = _Walk(strict=False)
    cleaned = walk.message(data, cast(Descriptor, message.DESCRIPTOR), "")
    return CleanedObject(cleaned, walk.errors, walk.unknown, walk.not_modelled, walk.duplicates)


def object_of(cleaned: dict[str, Any], kind: kinds.Kind[Any]) -> Message:
    """A cleaned body (``clean_object``'s data, without errors) as an object of ``kind``."""
    obj: Message = kind.message()
    json_format.ParseDict(cleaned, obj)
    return obj


def _identity(kind_name: Any, data: dict[Any, Any]) -> str:
    """What the document is, as far as it says, for messages: ' (Pod web)'."""
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    parts = [str(part) for part in (kind_name, name) if isinstance(part, str) and part]
    return f" ({' '.join(parts)})" if parts else ""


def _served_kind(kind_name: str, api_version: str, where: str) -> kinds.Kind[Any]:
    for kind in kinds.KINDS:
        if kind.name == kind_name:
            versions = conversion.served_versions(kind)
            if api_version not in versions:
                raise ManifestError([
                    f'{where}: no matches for kind "{kind_name}" in version "{api_version}": '
                    f"podsched serves {kind.name} in {' and '.join(versions)}"
                ])
            return kind
    served = ", ".join(
        f"{kind.name} ({', '.join(conversion.served_versions(kind))})" for kind in kinds.KINDS)
    raise ManifestError([
        f'{where}: no matches for kind "{kind_name}" in version "{api_version}": podsched serves {served}'
    ])


_QUOTE_HINT = ' (quote it in YAML: "1", "true")'


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def _shown(value: Any) -> str:
    """A bad value as a message shows it: scalars as written, strings quoted, structures by type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value) if len(value) <= 64 else json.dumps(value[:64] + "...")
    return json_type_name(value)


# ------------------------------------------------------------------------------- descriptor walk


class _Walk:
    """Walks one document's data against a message descriptor: returns the data with unknown fields
    removed and collects warnings (unknown and duplicate fields) and errors (wrong types, and in strict
    mode unknown and duplicate fields). Paths are Kubernetes field paths: ``spec.containers[0].name``,
    ``metadata.labels[app]``."""

    def __init__(self, strict: bool) -> None:
        self.findings = Findings(strict=strict)
        self.warnings = self.findings.warnings
        self.errors = self.findings.errors
        #: The paths of the fields dropped, apart: mistakes, real fields not modelled, fields given twice.
        self.unknown: list[str] = []
        self.not_modelled: list[str] = []
        self.duplicates: list[str] = []
        self._values = 0

    def _unknown(self, path: str, name: str, descriptor: Descriptor) -> None:
        """A field ``descriptor`` lacks: a real one podsched drops on purpose, or a mistake, for which the
        nearest field the message knows is suggested."""
        not_modelled = NOT_MODELLED.get(descriptor.name, frozenset())
        (self.not_modelled if name in not_modelled else self.unknown).append(path)
        if name in not_modelled:
            dropped = ", so strict validation rejects it" if self.findings.strict else " (ignored)"
            self.findings.strictly(f"{path}: a Kubernetes field podsched does not model{dropped}")
            return
        nearest = difflib.get_close_matches(name, [*_json_fields(descriptor), *sorted(not_modelled)], n=1)
        hint = f' (did you mean "{nearest[0]}"?)' if nearest else ""
        self.findings.strictly(f"{path}: unknown field{hint}")

    def _wrong_type(self, path: str, value: Any, expected: str, hint: str = "") -> None:
        self.errors.append(
            f"{path}: Invalid value: {_shown(value)}: expected {expected}, got {json_type_name(value)}{hint}"
        )

    def _count(self) -> bool:
        self._values += 1
        if self._values == MAX_VALUES_PER_DOCUMENT + 1:
            self.errors.append(f"document too large: more than {MAX_VALUES_PER_DOCUMENT} values "
                               "(after expanding YAML aliases)")
        return self._values <= MAX_VALUES_PER_DOCUMENT

    def message(self, data: Any, descriptor: Descriptor, path: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            self._wrong_type(path or "<document>", data, "an object")
            return {}
        for key in sorted(getattr(data, "duplicates", {}), key=str):
            self.duplicates.append(join(path, str(key)))
            self.findings.strictly(f'duplicate field "{join(path, str(key))}"')
        fields = _json_fields(descriptor)
        out: dict[str, Any] = {}
        for key, value in data.items():
            if not self._count():
                return out
            child = join(path, str(key))
            field_descriptor = fields.get(key) if isinstance(key, str) else None
            if field_descriptor is None:
                self._unknown(child, str(key), descriptor)
                continue
            if value is None:  # null means unset, as in Kubernetes' JSON
                continue
            out[key] = self.field(value, field_descriptor, child)
        return out

    def field(self, value: Any, fd: FieldDescriptor, path: str) -> Any:
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            return self.map(value, fd.message_type.fields_by_name["value"], path)
        if fd.is_repeated:
            if not isinstance(value, list):
                self._wrong_type(path, value, "an array")
                return []
            return [self.single(item, fd, f"{path}[{i}]") for i, item in enumerate(value) if self._count()]
        return self.single(value, fd, path)

    def map(self, value: Any, value_fd: FieldDescriptor, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self._wrong_type(path, value, "an object")
            return {}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not self._count():
                return out
            # sigs.k8s.io/yaml turns scalar keys into strings: `1: a` is the key "1".
            if isinstance(key, bool):
                key = "true" if key else "false"
            elif isinstance(key, int | float):
                key = str(key)
            elif not isinstance(key, str):
                self._wrong_type(f"{path}[{key}]", key, "a string key")
                continue
            if item is None and value_fd.type == FieldDescriptor.TYPE_STRING:
                item = ""  # Go decodes null into a string map as the empty string
            out[key] = self.single(item, value_fd, f"{path}[{key}]")
        return out

    def single(self, value: Any, fd: FieldDescriptor, path: str) -> Any:
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            assert fd.message_type is not None, "a message field has a message type"
            full_name = fd.message_type.full_name
            if full_name == "google.protobuf.Timestamp":
                return self.timestamp(value, path)
            if full_name == "google.protobuf.Struct":
                # Free-form JSON (a managedFields entry's fieldsV1): any object.
                if not isinstance(value, dict):
                    self._wrong_type(path, value, "an object")
                    return {}
                return value
            if full_name == "google.protobuf.Value":
                # Our one use is Kubernetes' IntOrString: an integer or a string.
                if isinstance(value, bool) or not isinstance(value, int | str):
                    self._wrong_type(path, value, "an integer or a string")
                    return 0
                return value
            return self.message(value, fd.message_type, path)
        if fd.type == FieldDescriptor.TYPE_STRING:
            if not isinstance(value, str):
                self._wrong_type(path, value, "a string", _QUOTE_HINT if _is_scalar(value) else "")
                return ""
            return value
        if fd.type == FieldDescriptor.TYPE_BOOL:
            if not isinstance(value, bool):
                self._wrong_type(path, value, "a boolean")
                return False
            return value
        if fd.type in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, int):
                self._wrong_type(path, value, "an integer")
                return 0
            low, high = _INT_RANGES[fd.type]
            if not low <= value <= high:
                self.errors.append(f"{path}: Invalid value: {value}: out of range [{low}, {high}]")
                return 0
            return value
        if fd.type in _FLOATS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self._wrong_type(path, value, "a number")
                return 0
            return value
        self.errors.append(f"{path}: field type {fd.type} cannot be read from a manifest")
        return None

    def timestamp(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self._wrong_type(path, value, 'an RFC 3339 time string like "2024-05-01T12:00:00Z"')
            return ""
        try:
            Timestamp().FromJsonString(value)
        except ValueError:
            self.errors.append(
                f'{path}: Invalid value: "{value}": expected an RFC 3339 time like "2024-05-01T12:00:00Z"'
            )
            return ""
        return value


_JSON_FIELDS: dict[str, dict[str, FieldDescriptor]] = {}


def _json_fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by their JSON (Kubernetes) names — only those: ``node_name`` is unknown."""
    fields = _JSON_FIELDS.get(descriptor.full_name)
    if fields is None:
        fields = {fd.json_name: fd for fd in descriptor.fields}
        _JSON_FIELDS[descriptor.full_name] = fields
    return fields
