"""The authorizer over the built-in roles (each can do exactly its job), user-defined rules, and the
denial in kube-apiserver's words."""

from __future__ import annotations

import pytest

from cluster.api import errors
from cluster.apiserver.auth.authorizer import Authorizer
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.policy import Policy, parse_policy
from cluster.apiserver.auth.roles import RESOURCES, VERBS

GROUP_OF_ROLE = {
    "admin": "system:masters",
    "scheduler": "podsched:schedulers",
    "client": "podsched:clients",
    "readonly": "podsched:readonly",
}
#: What each built-in role may do, as "verb resource[/subresource]"; everything else is denied.
ALLOWED = {
    "admin": {f"{verb} {resource}" for verb in VERBS for resource in RESOURCES},
    "scheduler": {
        *(f"{verb} {resource}" for verb in ("get", "list", "watch") for resource in RESOURCES),
        "create pods/binding", "update pods/status", "update podgroups/status", "delete pods",
        "patch pods/status", "patch podgroups/status", "update compositepodgroups/status",
        "patch compositepodgroups/status", "update resourceclaims/status",
        "patch resourceclaims/status", "create resourceclaims", "delete resourceclaims",
        "create events", "update events", "patch events", "create leases", "update leases", "patch leases",
        "create leasecandidates", "update leasecandidates", "patch leasecandidates", "delete leasecandidates",
        "update persistentvolumes", "patch persistentvolumes", "update persistentvolumeclaims",
        "patch persistentvolumeclaims",
    },
    "client": {
        "create pods", "get pods", "list pods", "watch pods", "delete pods", "deletecollection pods",
        "create podgroups", "get podgroups", "list podgroups", "watch podgroups", "delete podgroups",
        "deletecollection podgroups", "create pods/eviction",
        *(f"{verb} compositepodgroups"
          for verb in ("create", "get", "list", "watch", "delete", "deletecollection")),
        "get nodes", "list nodes", "watch nodes",
        "get runtimeclasses", "list runtimeclasses", "watch runtimeclasses",
        *(f"{verb} {resource}"
          for verb in ("create", "update", "patch", "delete", "deletecollection", "get", "list", "watch")
          for resource in ("services", "replicasets", "statefulsets", "replicationcontrollers",
                           "resourceclaims", "resourceclaimtemplates", "workloads",
                           "persistentvolumeclaims")),
        *(f"{verb} {resource}" for verb in ("get", "list", "watch")
          for resource in ("deviceclasses", "resourceslices", "storageclasses", "persistentvolumes")),
    },
    "readonly": {f"{verb} {resource}" for verb in ("get", "list", "watch") for resource in RESOURCES},
}


def _request(verb: str, resource: str, namespace: str = "default", name: str = "") -> RequestInfo:
    plural, _, subresource = resource.partition("/")
    return RequestInfo(verb, plural, subresource, namespace, name)


@pytest.mark.parametrize("role", sorted(GROUP_OF_ROLE))
def test_each_builtin_role_may_do_exactly_its_job(role: str) -> None:
    authorizer = Authorizer(Policy())
    user = UserInfo("someone", groups=(GROUP_OF_ROLE[role], "system:authenticated"))
    allowed = {
        f"{verb} {resource}" for verb in VERBS for resource in RESOURCES
        if authorizer.allows(user, _request(verb, resource))
    }
    assert allowed == ALLOWED[role]


def test_a_user_in_no_bound_group_may_do_nothing() -> None:
    authorizer = Authorizer(Policy())
    user = UserInfo("nobody", groups=("system:authenticated",))
    assert not any(authorizer.allows(user, _request(v, r)) for v in VERBS for r in RESOURCES)


@pytest.mark.parametrize(
    ("request_info", "message"),
    [
        (
            _request("delete", "pods", name="web"),
            'pods "web" is forbidden: User "bob" cannot delete resource "pods" '
            'in API group "" in the namespace "default"',
        ),
        (
            _request("list", "pods", namespace=""),
            'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope',
        ),
        (
            _request("create", "pods/binding", name="web"),
            'pods "web" is forbidden: User "bob" cannot create resource "pods/binding" '
            'in API group "" in the namespace "default"',
        ),
        (
            _request("update", "nodes", namespace="", name="n1"),
            'nodes "n1" is forbidden: User "bob" cannot update resource "nodes" '
            'in API group "" at the cluster scope',
        ),
        (
            _request("create", "priorityclasses", namespace="", name="high"),
            'priorityclasses.scheduling.k8s.io "high" is forbidden: User "bob" cannot create resource '
            '"priorityclasses" in API group "scheduling.k8s.io" at the cluster scope',
        ),
    ],
    ids=["named", "cluster-wide-list", "subresource", "cluster-scoped-kind", "other-group"],
)
def test_a_denial_names_the_user_verb_resource_and_scope(request_info: RequestInfo, message: str) -> None:
    with pytest.raises(errors.PermissionDenied) as raised:
        Authorizer(Policy()).authorize(UserInfo("bob"), request_info)
    assert raised.value.message == message
    assert raised.value.code.name == "PERMISSION_DENIED"


def test_user_defined_rules_limit_verbs_resources_and_names() -> None:
    policy = parse_policy(
        """
roles:
  - name: web-status
    rules:
      - {verbs: [get, update], resources: [pods/status], resourceNames: [web]}
      - {verbs: ["*"], resources: [leases]}
bindings:
  - {role: web-status, users: [carol]}
  - {role: readonly, groups: [auditors]}
""",
        "policy.yaml",
    )
    authorizer = Authorizer(policy)
    carol = UserInfo("carol")
    assert authorizer.allows(carol, _request("update", "pods/status", name="web"))
    assert not authorizer.allows(carol, _request("update", "pods/status", name="db"))
    assert not authorizer.allows(carol, _request("update", "pods", name="web")), "pods/status is not pods"
    assert authorizer.allows(carol, _request("delete", "leases", name="any"))
    assert not authorizer.allows(carol, _request("get", "pods", name="web"))
    auditor = UserInfo("dave", groups=("auditors",))
    assert authorizer.allows(auditor, _request("watch", "events"))
    assert not authorizer.allows(auditor, _request("create", "events"))


def test_pods_does_not_grant_its_subresources_but_a_star_does() -> None:
    policy = parse_policy(
        "roles:\n  - {name: pods-only, rules: [{verbs: ['*'], resources: [pods]}]}\n"
        "  - {name: everything, rules: [{verbs: [create], resources: ['*']}]}\n"
        "bindings:\n  - {role: pods-only, users: [p]}\n  - {role: everything, users: [e]}\n",
        "policy.yaml",
    )
    authorizer = Authorizer(policy)
    assert not authorizer.allows(UserInfo("p"), _request("create", "pods/binding"))
    assert authorizer.allows(UserInfo("e"), _request("create", "pods/binding"))


CLIENT = UserInfo("cleo", groups=("podsched:clients", "system:authenticated"))


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease"])
@pytest.mark.parametrize("verb", ["create", "delete", "get", "list", "watch"])
def test_the_builtin_client_role_has_no_pods_in_the_system_namespaces(verb: str, namespace: str) -> None:
    authorizer = Authorizer(Policy())
    assert not authorizer.allows(CLIENT, _request(verb, "pods", namespace=namespace, name="web"))
    assert authorizer.allows(CLIENT, _request(verb, "pods", namespace="team-a", name="web"))


def test_the_builtin_client_role_still_reads_nodes() -> None:
    authorizer = Authorizer(Policy())
    assert authorizer.allows(CLIENT, _request("list", "nodes", namespace=""))
    assert authorizer.allows(CLIENT, _request("get", "nodes", namespace="", name="n1"))


def test_the_builtin_client_role_reads_runtime_classes_its_pods_name() -> None:
    authorizer = Authorizer(Policy())
    assert authorizer.allows(CLIENT, _request("get", "runtimeclasses", namespace="", name="kata"))
    assert not authorizer.allows(CLIENT, _request("create", "runtimeclasses", namespace=""))


def test_a_client_refused_in_kube_system_is_told_so_in_kube_apiservers_words() -> None:
    with pytest.raises(errors.PermissionDenied) as raised:
        Authorizer(Policy()).authorize(CLIENT, _request("create", "pods", namespace="kube-system"))
    assert raised.value.message == (
        'pods is forbidden: User "cleo" cannot create resource "pods" '
        'in API group "" in the namespace "kube-system"'
    )


NAMESPACED = parse_policy(
    """
roles:
  - name: cluster-reader
    rules:
      - {verbs: [get, list], resources: [nodes, priorityclasses]}
bindings:
  - {role: client, users: [tess], namespaces: [team-a, team-b]}
  - {role: cluster-reader, users: [tess], namespaces: [team-a]}
  - {role: admin, groups: [ops], namespaces: [kube-system]}
  - {role: readonly, users: [rita]}
""",
    "policy.yaml",
)


def test_a_namespaced_binding_grants_its_role_only_in_its_namespaces() -> None:
    authorizer = Authorizer(NAMESPACED)
    tess = UserInfo("tess")
    for namespace in ("team-a", "team-b"):
        assert authorizer.allows(tess, _request("create", "pods", namespace=namespace))
        assert authorizer.allows(tess, _request("delete", "pods", namespace=namespace, name="web"))
    for namespace in ("default", "kube-system", "team-c"):
        assert not authorizer.allows(tess, _request("create", "pods", namespace=namespace))
        assert not authorizer.allows(tess, _request("get", "pods", namespace=namespace, name="web"))
    ops = UserInfo("olga", groups=("ops",))
    assert authorizer.allows(ops, _request("create", "pods", namespace="kube-system"))
    assert not authorizer.allows(ops, _request("create", "pods", namespace="default"))


@pytest.mark.parametrize(
    "request_info",
    [
        _request("get", "nodes", namespace="", name="n1"),
        _request("list", "priorityclasses", namespace=""),
        _request("list", "pods", namespace=""),
        _request("watch", "pods", namespace=""),
    ],
    ids=["node", "priorityclasses", "pods-in-every-namespace", "watch-every-namespace"],
)
def test_a_namespaced_binding_never_grants_the_cluster_scope(request_info: RequestInfo) -> None:
    authorizer = Authorizer(NAMESPACED)
    assert not authorizer.allows(UserInfo("tess"), request_info)
    assert not authorizer.allows(UserInfo("olga", groups=("ops",)), request_info)
    assert authorizer.allows(UserInfo("rita"), request_info), "a binding without namespaces is cluster-wide"


def test_a_policy_binding_without_namespaces_gives_clients_kube_system_back() -> None:
    policy = parse_policy("bindings:\n  - {role: client, groups: [podsched:clients]}\n", "policy.yaml")
    assert Authorizer(policy).allows(CLIENT, _request("create", "pods", namespace="kube-system"))
