"""Kubernetes' resource URLs read as kube-apiserver's RequestInfoFactory reads them, and the verb of each
method on them."""

from __future__ import annotations

import pytest

from cluster.api import errors, kinds
from cluster.apiserver.http.app import verb_of
from cluster.apiserver.http.paths import EVENTS_V1, parse


@pytest.mark.parametrize(("path", "kind", "group_version", "namespace", "name", "subresource"), [
    ("/api/v1/pods", kinds.POD, "v1", "", "", ""),
    ("/api/v1/namespaces/default/pods", kinds.POD, "v1", "default", "", ""),
    ("/api/v1/namespaces/default/pods/web", kinds.POD, "v1", "default", "web", ""),
    ("/api/v1/namespaces/default/pods/web/status", kinds.POD, "v1", "default", "web", "status"),
    ("/api/v1/namespaces/default/pods/web/binding", kinds.POD, "v1", "default", "web", "binding"),
    ("/api/v1/namespaces/default/pods/web/eviction", kinds.POD, "v1", "default", "web", "eviction"),
    ("/api/v1/nodes/n1", kinds.NODE, "v1", "", "n1", ""),
    ("/api/v1/nodes/n1/status", kinds.NODE, "v1", "", "n1", "status"),
    ("/api/v1/namespaces", kinds.NAMESPACE, "v1", "", "", ""),
    ("/api/v1/namespaces/team-a", kinds.NAMESPACE, "v1", "", "team-a", ""),
    ("/api/v1/namespaces/team-a/status", kinds.NAMESPACE, "v1", "", "team-a", "status"),
    ("/apis/scheduling.k8s.io/v1/priorityclasses/high", kinds.PRIORITY_CLASS, "scheduling.k8s.io/v1", "",
     "high", ""),
    ("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", kinds.LEASE,
     "coordination.k8s.io/v1", "kube-system", "kube-scheduler", ""),
    ("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups", kinds.POD_GROUP,
     "scheduling.x-k8s.io/v1alpha1", "ml", "", ""),
    ("/apis/events.k8s.io/v1/namespaces/default/events", kinds.EVENT, EVENTS_V1, "default", "", ""),
    ("/apis/apps/v1/namespaces/default/replicasets/rs%2Dweb", kinds.REPLICA_SET, "apps/v1", "default",
     "rs-web", ""),
])
def test_a_resource_url_names_its_target(
    path: str, kind: kinds.Kind, group_version: str, namespace: str, name: str, subresource: str
) -> None:
    target = parse(path)
    assert (target.resource.kind, target.resource.group_version) == (kind, group_version)
    assert (target.namespace, target.name, target.subresource) == (namespace, name, subresource)


def test_the_watch_prefix_and_the_bindings_collection() -> None:
    watched = parse("/api/v1/watch/namespaces/default/pods")
    assert watched.watch_prefix and watched.resource.kind is kinds.POD and watched.namespace == "default"
    bindings = parse("/api/v1/namespaces/default/bindings")
    assert bindings.bindings and bindings.subresource == "binding" and bindings.namespace == "default"


@pytest.mark.parametrize("path", [
    "/api/v2/pods",                                   # no such version
    "/apis/apps/v2/replicasets",                      # nor here
    "/api/v1/widgets",                                # no such resource
    "/api/v1/namespaces/default/nodes",               # a cluster-scoped kind under a namespace
    "/api/v1/namespaces/default/pods/web/exec",       # a subresource podsched does not serve
    "/api/v1/nodes/n1/eviction",                      # nor this kind
    "/api/v1/namespaces/default/pods/web/status/x",   # too long
    "/apis/policy/v1",                                # discovery, not a resource
    "/api/v1/bindings",                               # bindings are namespaced
])
def test_a_url_that_addresses_nothing_served_is_not_found(path: str) -> None:
    with pytest.raises(errors.NotFound, match="the server could not find the requested resource"):
        parse(path)


@pytest.mark.parametrize(("method", "path", "watch", "verb"), [
    ("GET", "/api/v1/namespaces/default/pods/web", False, "get"),
    ("GET", "/api/v1/namespaces/default/pods", False, "list"),
    ("GET", "/api/v1/namespaces/default/pods", True, "watch"),
    ("GET", "/api/v1/watch/namespaces/default/pods/web", False, "watch"),
    ("POST", "/api/v1/namespaces/default/pods", False, "create"),
    ("PUT", "/api/v1/namespaces/default/pods/web", False, "update"),
    ("PATCH", "/api/v1/namespaces/default/pods/web", False, "patch"),
    ("DELETE", "/api/v1/namespaces/default/pods/web", False, "delete"),
    ("DELETE", "/api/v1/namespaces/default/pods", False, "deletecollection"),
])
def test_the_verb_of_each_method(method: str, path: str, watch: bool, verb: str) -> None:
    assert verb_of(method, parse(path), watch) == verb


def test_an_unknown_method_is_not_allowed() -> None:
    with pytest.raises(errors.MethodNotSupported) as raised:
        verb_of("TRACE", parse("/api/v1/pods"), False)
    assert raised.value.http_code == 405
