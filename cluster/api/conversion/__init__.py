"""apiVersions served by converting, as kube-apiserver serves an older version of a group from the one
version its storage keeps: an object of such a version is converted to the stored version when it is
written (``to_stored``) and back when it is read (``to_served``), on Kubernetes' JSON data model. One
module per converted group version; the table here ties each (apiVersion, kind) to its conversion and to
the message that describes the served shape (what manifests, request bodies, patches and OpenAPI use).

A kind's own ``also_served`` versions are another thing: those objects keep the apiVersion they were
written in (kinds.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from cluster.api import kinds
from cluster.api.conversion import scheduling_v1alpha2
from cluster.api.conversion.error import ConversionError

__all__ = ["CONVERSIONS", "Conversion", "ConversionError", "conversion_of", "converted_versions",
           "served_versions"]

Document = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Conversion:
    """One kind in one apiVersion served by conversion."""

    api_version: str
    kind: str
    #: The apiVersion objects of this kind are stored in.
    stored_version: str
    #: The message of the served shape.
    message: type[Message]
    to_stored: Callable[[Document], Document]
    to_served: Callable[[Document], Document]


CONVERSIONS: tuple[Conversion, ...] = tuple(
    Conversion(scheduling_v1alpha2.API_VERSION, kind, scheduling_v1alpha2.STORED_VERSION, message,
               scheduling_v1alpha2.to_stored, scheduling_v1alpha2.to_served)
    for kind, message in scheduling_v1alpha2.MESSAGES.items()
)

_BY_VERSION_AND_KIND = {(c.api_version, c.kind): c for c in CONVERSIONS}


def conversion_of(api_version: str, kind_name: str) -> Conversion | None:
    """The conversion of ``kind_name`` in ``api_version``, None when that version is not a converted one."""
    return _BY_VERSION_AND_KIND.get((api_version, kind_name))


def converted_versions(kind: kinds.Kind[Any]) -> tuple[str, ...]:
    """The apiVersions ``kind`` is served in by conversion."""
    return tuple(c.api_version for c in CONVERSIONS
                 if c.kind == kind.name and c.stored_version == kind.api_version)


def served_versions(kind: kinds.Kind[Any]) -> tuple[str, ...]:
    """Every apiVersion ``kind`` is served in: its own (the preferred first), then the converted ones."""
    return (*kind.api_versions, *converted_versions(kind))
