"""Objects as kubectl prints them with -o yaml|json|name|jsonpath=...|custom-columns=...: one object as
itself, several as a `kind: List` (also when there are none: scripts read an empty list, not nothing).
Keys are sorted, as kubectl prints them (it prints the server's JSON maps)."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from google.protobuf.message import Message

from cluster.api import convert
from cluster.api.kinds import as_api_object, kind_of, metadata_of
from cluster.cli import jsonpath
from cluster.cli.common import resource_ref
from cluster.printers.table import TableWriter
from cluster.printers.values import NONE

#: The formats that take no template, and those that need one (``-o jsonpath=TEMPLATE``).
FORMATS = ("wide", "yaml", "json", "name")
TEMPLATE_FORMATS = ("jsonpath", "custom-columns")


@dataclass(frozen=True, slots=True)
class OutputFormat:
    name: str
    template: str = ""


def parse_format(text: str) -> OutputFormat:
    """``-o``'s argument (an argparse type): ``json``, ``jsonpath={.metadata.name}``, ..."""
    name, equals, template = text.partition("=")
    if name in FORMATS and not equals:
        return OutputFormat(name)
    if name in TEMPLATE_FORMATS:
        if not template:
            raise argparse.ArgumentTypeError(f"{name} needs a template: -o {name}=TEMPLATE")
        return OutputFormat(name, template)
    allowed = ",".join(sorted(FORMATS + TEMPLATE_FORMATS))
    raise argparse.ArgumentTypeError(
        f'unable to match a printer suitable for the output format "{text}", allowed formats are: {allowed}'
    )


def object_data(obj: Message) -> dict[str, Any]:
    """The object as kubectl's JSON: with apiVersion and kind, every map's keys sorted."""
    return _sorted(convert.to_dict(with_type_meta(obj)))


def list_data(objs: Sequence[Message]) -> dict[str, Any]:
    """kubectl's `kind: List` of ``objs`` (empty, too)."""
    return {
        "apiVersion": "v1",
        "items": [object_data(obj) for obj in objs],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


# kubectl's RelaxedJSONPathExpression: a column's path may leave out the braces and the leading dot.
_RELAXED_PATH = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


class CustomColumns:
    """``-o custom-columns=HEADER:PATH,...``: a header per column, and per object the values each path
    finds, joined by commas (``<none>`` when it finds none)."""

    def __init__(self, spec: str) -> None:
        self.headers: list[str] = []
        self._paths: list[jsonpath.Template] = []
        for column in spec.split(","):
            header, colon, path = column.partition(":")
            if not colon:
                raise jsonpath.JsonPathError(
                    f"unexpected custom-columns spec: {column}, expected <header>:<json-path-expr>"
                )
            relaxed = _RELAXED_PATH.match(path)
            if relaxed is None:
                raise jsonpath.JsonPathError(
                    f"unexpected path string {path}, expected a 'name1.name2' or '.name1.name2' or "
                    "'{name1.name2}' or '{.name1.name2}'"
                )
            self.headers.append(header)
            self._paths.append(jsonpath.Template("{.%s}" % (relaxed[1] or relaxed[2])))

    def cells(self, obj: Message) -> list[str]:
        data = object_data(obj)
        found = (path.find(data) for path in self._paths)
        return [",".join(map(jsonpath.text_of, values)) or NONE for values in found]

    def table(self, objs: Sequence[Message]) -> str:
        return "".join(line + "\n" for line in TableWriter(self.headers).table([self.cells(o) for o in objs]))


class Renderer:
    """Prints objects in one of the formats that are not kubectl's tables; a template is parsed when the
    renderer is made, so that a bad one is refused before anything is asked of the server."""

    def __init__(self, fmt: OutputFormat) -> None:
        self.fmt = fmt
        self.template = jsonpath.Template(fmt.template) if fmt.name == "jsonpath" else None
        self.columns = CustomColumns(fmt.template) if fmt.name == "custom-columns" else None

    def listing(self, objs: Sequence[Message]) -> str:
        """A get without names: all of them as a `kind: List`."""
        if self.fmt.name == "name":
            return "".join(name_line(obj) + "\n" for obj in objs)
        if self.columns is not None:
            return self.columns.table(objs)
        return self._data(list_data(objs))

    def one(self, obj: Message) -> str:
        if self.fmt.name == "name":
            return name_line(obj) + "\n"
        if self.columns is not None:
            return self.columns.table([obj])
        return self._data(object_data(obj))

    def _data(self, data: dict[str, Any]) -> str:
        if self.template is not None:
            return self.template.execute(data)
        return dump_yaml(data) if self.fmt.name == "yaml" else dump_json(data)


def with_type_meta(obj: Message) -> Message:
    """The object with apiVersion and kind filled in, as kubectl always prints them."""
    kind = kind_of(obj)
    given = as_api_object(obj)
    if given.api_version and given.kind:
        return obj
    typed = type(obj)()
    typed.CopyFrom(obj)
    filled = as_api_object(typed)
    filled.api_version = filled.api_version or kind.api_version
    filled.kind = filled.kind or kind.name
    return typed


def name_line(obj: Message) -> str:
    return resource_ref(kind_of(obj), metadata_of(obj).name, as_api_object(obj).api_version)


class _KubectlDumper(yaml.SafeDumper):
    """Quotes strings that need it with double quotes (`resourceVersion: "9"`), as kubectl does."""

    def choose_scalar_style(self) -> str:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def dump_yaml(data: dict) -> str:
    # kubectl's YAML comes from its JSON through sigs.k8s.io/yaml, which sorts every mapping's keys.
    return yaml.dump(
        data, Dumper=_KubectlDumper, sort_keys=True, default_flow_style=False, allow_unicode=True
    )


def dump_json(data: dict) -> str:
    # kubectl indents JSON by four spaces.
    return json.dumps(data, indent=4, ensure_ascii=False) + "\n"
