"""apply's warnings about objects it writes but podsched does nothing with."""

import textwrap

import pytest

from cluster.api.manifest import load_text
from cluster.cli.apply import controller_warnings

WORKLOADS = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: ReplicaSet
    metadata: {name: web}
    spec:
      selector: {matchLabels: {app: web}}
    ---
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db}
    spec:
      selector: {matchLabels: {app: db}}
    ---
    apiVersion: v1
    kind: ReplicationController
    metadata: {name: legacy}
    spec:
      selector: {app: legacy}
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: web}
    spec:
      selector: {app: web}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1}
    spec:
      containers: [{name: web, image: web}]
""")


def test_each_workload_controller_is_named_with_no_pods_warning() -> None:
    assert controller_warnings(load_text(WORKLOADS, source="w.yaml")) == [
        "replicaset.apps/web: podsched runs no workload controllers; no pods will be created for it",
        "statefulset.apps/db: podsched runs no workload controllers; no pods will be created for it",
        (
            "replicationcontroller/legacy: podsched runs no workload controllers; no pods will be created "
            "for it"
        ),
    ]


@pytest.mark.parametrize("kind_doc", WORKLOADS.split("---\n")[3:])
def test_other_kinds_bring_no_warning(kind_doc: str) -> None:
    assert controller_warnings(load_text(kind_doc, source="x.yaml")) == []
