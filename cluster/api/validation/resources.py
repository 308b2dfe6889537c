"""Validation of resource names and quantities (container requests and limits, a RuntimeClass's
overhead)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from fractions import Fraction

from cluster.api import objects_pb2
from cluster.api.names import is_qualified_name
from cluster.api.quantity import parse_quantity
from cluster.api.validation.field import NOT_NEGATIVE, invalid, required

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


_HUGEPAGES_PREFIX = "hugepages-"


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@functools.lru_cache(maxsize=1024)  # a name's answer never changes; pod creates ask for the same few
def is_extended_resource_name(name: str) -> bool:
    """A resource a device plugin or operator defines ("example.com/gpu"): integral, not overcommitted."""
    return (
        not _is_native(name)
        and not name.startswith("requests.")
        and not is_qualified_name("requests." + name)
    )


@functools.lru_cache(maxsize=1024)  # every pod create checks the same few names ("cpu", "memory")
def _resource_name_problems(name: str, container: bool) -> tuple[str, ...]:
    """What is wrong with a resource name, without the field path (``invalid`` adds it)."""
    problems = is_qualified_name(name)
    if not problems and container:
        if "/" not in name:
            if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES_PREFIX):
                problems.append("must be a standard resource for containers")
        elif not _is_native(name) and not is_extended_resource_name(name):
            problems.append("doesn't follow extended resource name standard")
    return tuple(problems)


def check_amount(where: str, text: str, *, whole: bool) -> tuple[Fraction | None, list[str]]:
    """One quantity of a resource map: its value (None when it does not parse) and its problems; it may
    not be negative, nor a fraction where ``whole``."""
    try:
        value = parse_quantity(text)
    except ValueError as exc:
        return None, [invalid(where, text, str(exc).partition(": ")[2] or str(exc))]
    if value < 0:
        return value, [invalid(where, text, NOT_NEGATIVE)]
    if whole and value.denominator != 1:
        return value, [invalid(where, text, "must be an integer")]
    return value, []


def check_quantities(
    resources: Mapping[str, str], path: str, *, container: bool
) -> tuple[list[str], dict[str, Fraction]]:
    """Names and quantities of a resource map; returns the problems and the values that parsed."""
    problems: list[str] = []
    values: dict[str, Fraction] = {}
    for name, text in resources.items():
        where = f"{path}[{name}]"
        problems += [invalid(where, name, detail) for detail in _resource_name_problems(name, container)]
        whole = is_extended_resource_name(name) or name == "pods"
        value, amount_problems = check_amount(where, text, whole=whole)
        problems += amount_problems
        if value is not None:
            values[name] = value
    return problems, values


def validate_resource_requirements(resources: objects_pb2.ResourceRequirements, path: str) -> list[str]:
    problems, limits = check_quantities(resources.limits, f"{path}.limits", container=True)
    request_problems, requests = check_quantities(resources.requests, f"{path}.requests", container=True)
    problems += request_problems
    for name, request in requests.items():
        where = f"{path}.requests[{name}]"
        overcommit_allowed = _is_native(name) and not name.startswith(_HUGEPAGES_PREFIX)
        limit = limits.get(name)
        if limit is not None:
            if request != limit and not overcommit_allowed:
                problems.append(
                    invalid(
                        where,
                        resources.requests[name],
                        f"must be equal to {name} limit of {resources.limits[name]}",
                    )
                )
            elif request > limit:
                problems.append(
                    invalid(
                        where,
                        resources.requests[name],
                        f"must be less than or equal to {name} limit of {resources.limits[name]}",
                    )
                )
        elif name not in resources.limits and not overcommit_allowed:
            problems.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    return problems
