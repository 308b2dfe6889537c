"""Each RPC's request as Kubernetes' authorization sees it (RequestInfo)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message

from cluster.api import apiserver_pb2, errors, kinds
from cluster.apiserver.auth import requests
from cluster.apiserver.auth.identity import RequestInfo
from tests.builders import node, pod


def _pod(namespace: str = "", name: str = "web") -> apiserver_pb2.Object:
    return kinds.wrap(pod(name, namespace))


def _node(name: str = "n1") -> apiserver_pb2.Object:
    return kinds.wrap(node(name))


def _binding() -> apiserver_pb2.BindRequest:
    request = apiserver_pb2.BindRequest()
    request.binding.metadata.namespace = "team"
    request.binding.metadata.name = "web"
    request.binding.target.name = "n1"
    return request


def _group() -> apiserver_pb2.BindGroupRequest:
    request = apiserver_pb2.BindGroupRequest()
    for namespace, name in (("team", "web"), ("", "db"), ("other", "cache")):
        binding = request.bindings.add()
        binding.metadata.namespace, binding.metadata.name, binding.target.name = namespace, name, "n1"
    return request


def test_a_group_bind_asks_to_bind_each_of_its_pods() -> None:
    assert requests.group_bindings(_group()) == [
        RequestInfo("create", "pods", "binding", "team", "web"),
        RequestInfo("create", "pods", "binding", "default", "db"),
        RequestInfo("create", "pods", "binding", "other", "cache"),
    ]


@pytest.mark.parametrize(
    ("describe", "request_message", "expected"),
    [
        (
            requests.create, apiserver_pb2.CreateRequest(object=_pod("team")),
            RequestInfo("create", "pods", "", "team"),
        ),
        (
            requests.create, apiserver_pb2.CreateRequest(object=_pod()),
            RequestInfo("create", "pods", "", "default"),
        ),
        (requests.create, apiserver_pb2.CreateRequest(object=_node()), RequestInfo("create", "nodes")),
        (
            requests.get, apiserver_pb2.GetRequest(kind="po", namespace="team", name="web"),
            RequestInfo("get", "pods", "", "team", "web"),
        ),
        (
            requests.update, apiserver_pb2.UpdateRequest(object=_node("n2")),
            RequestInfo("update", "nodes", "", "", "n2"),
        ),
        (
            requests.update_status, apiserver_pb2.UpdateRequest(object=_pod("team")),
            RequestInfo("update", "pods", "status", "team", "web"),
        ),
        (
            requests.delete,
            apiserver_pb2.DeleteRequest(kind="Lease", namespace="kube-system", name="kube-scheduler"),
            RequestInfo("delete", "leases", "", "kube-system", "kube-scheduler"),
        ),
        (requests.list_, apiserver_pb2.ListRequest(kind="pods"), RequestInfo("list", "pods")),
        (
            requests.list_, apiserver_pb2.ListRequest(kind="nodes", namespace="ignored"),
            RequestInfo("list", "nodes"),
        ),
        (
            requests.watch, apiserver_pb2.WatchRequest(kind="events", namespace="team"),
            RequestInfo("watch", "events", "", "team"),
        ),
        (requests.bind, _binding(), RequestInfo("create", "pods", "binding", "team", "web")),
        (requests.bind_group, _group(), RequestInfo("create", "pods", "binding", "team", "web")),
        (requests.bind_group, apiserver_pb2.BindGroupRequest(),
         RequestInfo("create", "pods", "binding", "default", "")),
    ],
    ids=[
        "create", "create-default-namespace", "create-cluster-scoped", "get", "update", "update-status",
        "delete",
        "list-all-namespaces", "list-cluster-scoped", "watch", "bind", "bind-group", "bind-group-empty",
    ],
)
def test_each_rpc_maps_to_its_request_info(
    describe: Callable[[Any], requests.Described], request_message: Message, expected: RequestInfo
) -> None:
    described = describe(request_message)
    assert described.info == expected
    assert described.kind.plural == expected.resource


@pytest.mark.parametrize(
    ("describe", "request_message", "message"),
    [
        (requests.create, apiserver_pb2.CreateRequest(), "the request carries no object"),
        (requests.get, apiserver_pb2.GetRequest(kind="secrets", name="x"), 'unknown kind "secrets"'),
        (requests.list_, apiserver_pb2.ListRequest(), "kind is required"),
        (requests.get, apiserver_pb2.GetRequest(kind="pods", namespace="a/b", name="x"), "may not contain"),
    ],
    ids=["no-object", "unknown-kind", "no-kind", "bad-namespace"],
)
def test_a_request_that_cannot_be_described_is_invalid(
    describe: Callable[[Any], requests.Described], request_message: Message, message: str
) -> None:
    with pytest.raises(errors.Invalid, match=message):
        describe(request_message)
