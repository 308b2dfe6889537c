"""What validation knows of one kind: the checks of its object, of an update of it and of its status, as
Kubernetes' ValidateX / ValidateXUpdate / ValidateXStatusUpdate functions come in sets per kind. Each API
group's module declares one per kind it serves; the package's entry points dispatch on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic

from cluster.api.kinds import Kind, M
from cluster.api.names import is_dns1123_subdomain

Problems = list[str]


def _none(*_: Any) -> Problems:
    return []


@dataclass(frozen=True, slots=True)
class KindValidation(Generic[M]):
    kind: Kind[M]
    #: Every field error of an object of the kind beyond its metadata's.
    validate: Callable[[M], Problems]
    #: The errors of changing an old object into a new one beyond ``validate(new)`` (immutable fields).
    validate_update: Callable[[M, M], Problems] = _none
    #: The part of ``validate`` about the status (what a status update is judged by); none for a kind
    #: without status rules.
    validate_status: Callable[[M], Problems] = _none
    #: The errors of changing an old status into a new one beyond ``validate_status(new)``.
    validate_status_update: Callable[[M, M], Problems] = _none
    #: How the kind's names are checked: a DNS subdomain, as most kinds.
    name_check: Callable[[str], Problems] = is_dns1123_subdomain
