"""How clients print ResourceQuota objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.api.quota import format_requirements
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import age


def quota_usage(quota: objects_pb2.ResourceQuota) -> tuple[str, str]:
    """kubectl's REQUEST and LIMIT columns: ``pods: 1/10`` per limited resource, sorted by name; the
    ``limits.*`` resources in the second."""
    hard, used = quota.status.hard, quota.status.used
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        (limits if name.startswith("limits.") else requests).append(
            f"{name}: {used.get(name, '0')}/{hard[name]}")
    return ", ".join(requests), ", ".join(limits)


def _quota_row(quota: objects_pb2.ResourceQuota, now: float) -> list[Cell]:
    return [quota.metadata.name, age(quota.metadata, now), *quota_usage(quota)]


async def _describe_quota(reader: Reader, quota: objects_pb2.ResourceQuota, text: DescribeText) -> None:
    name_fields(text, quota, namespaced=True)
    if quota.spec.scopes:
        text.field("Scopes", ", ".join(quota.spec.scopes))
    if quota.spec.scope_selector.match_expressions:
        text.field("Scope Selector", format_requirements(list(quota.spec.scope_selector.match_expressions)))
    hard, used = quota.status.hard, quota.status.used
    rows = [[name, used.get(name, "0"), hard[name]] for name in sorted(hard)]
    text.table(["Resource", "Used", "Hard"], rows, level=0, underline=True)


PRINTER = Printer(
    kinds.RESOURCE_QUOTA,
    Columns((
        NAME,
        AGE,
        Column("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
        Column("Limit", "Limits control the maximum amount of cpu/memory that a container may use "
                        "independent of contention on the node."),
    ), _quota_row),
    _describe_quota,
)
