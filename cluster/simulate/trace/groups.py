"""Pod groups of a trace: the PodGroups a native CSV pod list's ``group`` columns make, and the check,
for every format, that a group's topology constraint names a label some node of the trace carries.

A CSV row joins the group its ``group`` cell names (in the pod's namespace); ``group_min_count`` makes
the group a gang of that minimum (empty: the basic policy) and ``group_topology_key`` constrains it to
one domain of that node label. Every row of a group gives the same two cells, so that no row's reading
depends on which row came first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cluster.api import objects_pb2, podgroups, validation
from cluster.simulate.trace.table import Row

GROUP, MIN_COUNT, TOPOLOGY_KEY = "group", "group_min_count", "group_topology_key"
COLUMNS = (GROUP, MIN_COUNT, TOPOLOGY_KEY)
#: A gang's minCount is an int32.
MAX_MIN_COUNT = 2**31 - 1
TOPOLOGY_KEY_PATH = "spec.schedulingConstraints.topology[0].key"
_GROUP_FIELDS = {"metadata.name": GROUP, "spec.schedulingPolicy": MIN_COUNT,
                 "spec.schedulingConstraints": TOPOLOGY_KEY}


@dataclass(slots=True)
class _Group:
    namespace: str
    name: str
    #: The first row naming the group: its cells are the group's, and its problems are reported there.
    first: Row
    min_count: int | None
    topology_key: str
    pods: int = 1

    def pod_group(self) -> objects_pb2.PodGroup:
        group = objects_pb2.PodGroup(api_version=podgroups.UPSTREAM_API_VERSION, kind="PodGroup")
        group.metadata.name, group.metadata.namespace = self.name, self.namespace
        if self.min_count is None:
            group.spec.scheduling_policy.basic.SetInParent()
        else:
            group.spec.scheduling_policy.gang.min_count = self.min_count
        if self.topology_key:
            group.spec.scheduling_constraints.topology.add(key=self.topology_key)
        return group


class GroupTable:
    """The groups named by the rows of one pod list, read row by row (``join``)."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], _Group] = {}

    def join(self, row: Row, namespace: str, pod: objects_pb2.Pod) -> None:
        """Make ``pod`` a member of the group its row names, if any; the row's group problems are added
        to the row."""
        name = row.text(GROUP)
        min_count = row.optional_integer(MIN_COUNT, MAX_MIN_COUNT)
        if min_count == 0:
            row.invalid(MIN_COUNT, "must be greater than 0")
        key = row.text(TOPOLOGY_KEY)
        for problem in validation.is_qualified_name(key) if key else []:
            row.invalid(TOPOLOGY_KEY, problem)
        if not name:
            for column in (MIN_COUNT, TOPOLOGY_KEY):
                if row.text(column):
                    row.add(column, validation.forbidden(column, f"needs a {GROUP}: the pod joins no group"))
            return
        for problem in validation.is_dns1123_subdomain(name):
            row.invalid(GROUP, problem)
        pod.spec.scheduling_group.pod_group_name = name
        if row.problems:
            return
        group = self._groups.get((namespace, name))
        if group is None:
            self._groups[(namespace, name)] = _Group(namespace, name, row, min_count, key)
            return
        group.pods += 1
        for column in (MIN_COUNT, TOPOLOGY_KEY):
            given = group.first.text(column)
            if row.text(column) != given:
                row.invalid(column, f"group {name} has {given!r} at {group.first.where}: every row of a "
                            "group gives the same")

    def pod_groups(self) -> tuple[list[tuple[str, objects_pb2.PodGroup]], list[str]]:
        """The groups' PodGroups, in the order their first rows come, each with where its topology key
        is given (for ``topology_problems``), and their problems: a gang larger than the pods that join
        it (it could never be placed), and the API validation's."""
        groups: list[tuple[str, objects_pb2.PodGroup]] = []
        problems: list[str] = []
        for group in self._groups.values():
            row = group.first
            before = len(row.problems)
            if group.min_count is not None and group.min_count > group.pods:
                row.invalid(MIN_COUNT, f"group {group.name} has {group.pods} pods in the trace: a gang of "
                            f"{group.min_count} could never be placed")
            pod_group = group.pod_group()
            row.api_problems(validation.validate_object(pod_group), _GROUP_FIELDS)
            problems += row.problems[before:]
            where = f"{row.where}:{row.columns.get(TOPOLOGY_KEY, 1)}: {TOPOLOGY_KEY}"
            groups.append((where, pod_group))
        return groups, problems


def topology_problems(groups: Iterable[tuple[str, objects_pb2.PodGroup]],
                      nodes: Sequence[objects_pb2.Node], nodes_path: str) -> list[str]:
    """A problem for each group (with where it is defined) whose topology key no node carries: it would
    wait for a domain that does not exist."""
    keys = {key for node in nodes for key in node.metadata.labels}
    problems = []
    for where, group in groups:
        for index, constraint in enumerate(group.spec.scheduling_constraints.topology):
            if constraint.key not in keys:
                path = f"spec.schedulingConstraints.topology[{index}].key"
                problems.append(f"{where}: " + validation.invalid(
                    path, constraint.key, f"no node of {nodes_path} has this label: the group could never "
                    "be placed"))
    return problems


def topology_key(group: objects_pb2.PodGroup) -> str:
    """The node label whose one domain the group must sit in ("" for none)."""
    constraints = group.spec.scheduling_constraints.topology
    return constraints[0].key if constraints else ""
