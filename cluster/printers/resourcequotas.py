"""How clients print ResourceQuota objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.api.quota import format_requirements
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import Columns
from cluster.printers.values import age


def quota_usage(quota: objects_pb2.ResourceQuota) -> str:
    """kubectl's REQUEST column: ``pods: 1/10`` per limited resource, sorted by name."""
    hard, used = quota.status.hard, quota.status.used
    return ", ".join(f"{name}: {used.get(name, '0')}/{hard[name]}" for name in sorted(hard))


def _quota_row(quota: objects_pb2.ResourceQuota) -> list[str]:
    return [quota.metadata.name, age(quota.metadata), quota_usage(quota)]


async def _describe_quota(reader: Reader, quota: objects_pb2.ResourceQuota, text: DescribeText) -> None:
    name_fields(text, quota, namespaced=True)
    if quota.spec.scopes:
        text.field("Scopes", ", ".join(quota.spec.scopes))
    if quota.spec.scope_selector.match_expressions:
        text.field("Scope Selector", format_requirements(list(quota.spec.scope_selector.match_expressions)))
    hard, used = quota.status.hard, quota.status.used
    rows = [[name, used.get(name, "0"), hard[name]] for name in sorted(hard)]
    text.table(["Resource", "Used", "Hard"], rows, level=0, underline=True)


PRINTER = Printer(kinds.RESOURCE_QUOTA, Columns(("NAME", "AGE", "REQUEST"), _quota_row), _describe_quota)
