"""Objects as kubectl prints them with -o yaml|json|name: one object as itself, several as a `kind: List`."""

from __future__ import annotations

import json
from collections.abc import Sequence

import yaml
from google.protobuf.message import Message

from cluster.api import convert
from cluster.api.kinds import as_api_object, kind_of, metadata_of
from cluster.cli.common import resource_ref

FORMATS = ("wide", "yaml", "json", "name")


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
    return yaml.dump(
        data, Dumper=_KubectlDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def dump_json(data: dict) -> str:
    # kubectl indents JSON by four spaces.
    return json.dumps(data, indent=4, ensure_ascii=False) + "\n"


def render(objs: Sequence[Message], fmt: str, *, as_list: bool) -> str:
    """yaml/json/name output of ``objs``; ``as_list`` wraps them in a `kind: List` (a get without a
    NAME), as kubectl does even for one item."""
    if fmt == "name":
        return "".join(name_line(obj) + "\n" for obj in objs)
    if as_list:
        data = {
            "apiVersion": "v1",
            "items": [convert.to_dict(with_type_meta(obj)) for obj in objs],
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        }
        return dump_yaml(data) if fmt == "yaml" else dump_json(data)
    (obj,) = objs
    return render_one(obj, fmt)


def render_one(obj: Message, fmt: str) -> str:
    data = convert.to_dict(with_type_meta(obj))
    return dump_yaml(data) if fmt == "yaml" else dump_json(data)
