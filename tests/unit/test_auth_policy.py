"""The authorization policy file: built-in roles and bindings, user-defined roles, and a clear error
naming the file and entry for each kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.apiserver.auth.policy import PolicyFileError, load_policy_file, parse_policy
from cluster.apiserver.auth.roles import BUILTIN_ROLES, Grant, Rule

GOOD = """
roles:
  - name: pod-reader
    rules:
      - verbs: [get, list, watch]
        resources: [pods, pods/status]
        resourceNames: [web]
bindings:
  - role: admin
    users: [alice]
  - role: pod-reader
    users: [alice]
    groups: [dev]
"""


def test_a_policy_adds_roles_and_bindings_to_the_builtin_ones() -> None:
    policy = parse_policy(GOOD, "policy.yaml")
    assert set(policy.roles) == {*BUILTIN_ROLES, "pod-reader"}
    assert policy.roles["pod-reader"].rules == (
        Rule(frozenset({"get", "list", "watch"}), frozenset({"pods", "pods/status"}), frozenset({"web"})),
    )
    assert policy.user_roles == {"alice": (Grant("admin"), Grant("pod-reader"))}
    assert policy.group_roles["dev"] == (Grant("pod-reader"),)
    assert policy.group_roles["system:masters"] == (Grant("admin"),)
    assert policy.group_roles["podsched:schedulers"] == (Grant("scheduler"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bindings: [\n", "not valid YAML"),
        ("", "is empty"),
        ("- role: admin\n", "<document>: Invalid value: must be a mapping, not a list"),
        ("rolez: []\n", '<document>: unknown field "rolez"'),
        ("roles: {}\n", "roles: Invalid value: must be a list, not a mapping"),
        ("roles:\n  - rules: []\n", "roles[0]: name must be a non-empty string, not nothing"),
        ("roles:\n  - name: admin\n    rules: []\n", 'roles[0]: role "admin" is a built-in role'),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get], resources: [pods]}]}\n"
            "  - {name: r, rules: [{verbs: [get], resources: [pods]}]}\n",
            'roles[1]: role "r" is defined twice',
        ),
        ("roles:\n  - name: r\n", 'roles[0]: role "r" has no rules'),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get, destroy], resources: [pods]}]}\n",
            "roles[0].rules[0].verbs[1]: unknown verb 'destroy' "
            "(known: create, get, list, watch, update, patch, delete, deletecollection, *)",
        ),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get], resources: [secrets]}]}\n",
            "roles[0].rules[0].resources[0]: unknown resource 'secrets'",
        ),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get]}]}\n",
            "roles[0].rules[0]: resources must be a non-empty list of strings, not nothing",
        ),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get], resources: [pods], names: [x]}]}\n",
            'roles[0].rules[0]: unknown field "names"',
        ),
        ("bindings:\n  - {role: root, users: [a]}\n", 'bindings[0]: unknown role "root"'),
        ("bindings:\n  - {role: admin}\n", "bindings[0]: binds nobody: give users, groups or both"),
        (
            "bindings:\n  - {role: admin, users: alice}\n",
            "bindings[0].users: Invalid value: must be a list, not a string",
        ),
        ("bindings:\n  - {role: admin, groups: ['']}\n", "bindings[0].groups[0]: must be a non-empty string"),
        (
            "bindings:\n  - {role: client, users: [a], namespaces: team-a}\n",
            "bindings[0].namespaces: Invalid value: must be a list, not a string",
        ),
        (
            "bindings:\n  - {role: client, users: [a], namespaces: []}\n",
            "bindings[0]: namespaces must be a non-empty list of strings, not list []",
        ),
        (
            "bindings:\n  - {role: client, users: [a], namespaces: }\n",
            "bindings[0]: namespaces must be a non-empty list of strings, not nothing",
        ),
        (
            "bindings:\n  - {role: client, users: [a], namespaces: [team-a, 7]}\n",
            "bindings[0].namespaces[1]: Invalid value: 7: must be a string",
        ),
        (
            "bindings:\n  - {role: client, users: [a], namespaces: [Team_A]}\n",
            "bindings[0].namespaces[0]: 'Team_A' is not a valid namespace name: a lowercase RFC 1123 label",
        ),
        (
            "bindings:\n  - {role: client, users: [a], namespace: [team-a]}\n",
            'bindings[0]: unknown field "namespace"',
        ),
    ],
    ids=[
        "bad-yaml", "empty", "not-a-mapping", "unknown-top-field", "roles-not-a-list", "role-without-name",
        "shadows-builtin", "defined-twice", "no-rules", "unknown-verb", "unknown-resource",
        "rule-without-resources",
        "unknown-rule-field", "unknown-role", "binds-nobody", "users-not-a-list", "blank-group",
        "namespaces-not-a-list", "namespaces-empty", "namespaces-null", "namespace-not-a-string",
        "namespace-invalid-name", "namespace-misspelt",
    ],
)
def test_a_bad_entry_is_an_error_naming_file_and_entry(text: str, message: str) -> None:
    with pytest.raises(PolicyFileError) as raised:
        parse_policy(text, "policy.yaml")
    assert str(raised.value).startswith("policy file policy.yaml: ")
    assert message in str(raised.value)


def test_an_unreadable_file_is_an_error_naming_the_flag_and_file(tmp_path: Path) -> None:
    missing = tmp_path / "policy.yaml"
    with pytest.raises(PolicyFileError, match=f"--authorization-policy-file {missing}: cannot read it"):
        load_policy_file(str(missing))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "bindings:\n  - role: admin\n    users: [alice]\n    role: client\n",
            "policy file policy.yaml: bindings[0]: line 4, column 5: duplicate key 'role'",
        ),
        (
            "roles:\n  - {name: r, rules: [{verbs: [get], resources: [pods], verbs: [list]}]}\n"
            "bindings:\n  - {role: r, users: [a]}\n",
            "policy file policy.yaml: roles[0].rules[0]: line 2, column 57: duplicate key 'verbs'",
        ),
        ("bindings: []\nbindings:\n  - {role: admin, users: [a]}\n",
         "policy file policy.yaml: line 2, column 1: duplicate key 'bindings'"),
    ],
    ids=["in-a-binding", "in-a-rule", "at-the-top"],
)
def test_a_key_given_twice_is_an_error_naming_its_position(text: str, message: str) -> None:
    # YAML itself keeps the last value silently: the policy would grant what its author did not read.
    with pytest.raises(PolicyFileError) as raised:
        parse_policy(text, "policy.yaml")
    assert str(raised.value) == message


def test_a_policy_file_is_one_document() -> None:
    with pytest.raises(PolicyFileError, match=r"policy file policy\.yaml: holds 2 YAML documents"):
        parse_policy("bindings: [{role: admin, users: [a]}]\n---\nbindings: []\n", "policy.yaml")
