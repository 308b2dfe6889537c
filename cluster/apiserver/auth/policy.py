"""The authorization policy file (``--authorization-policy-file``): user-defined roles and bindings of
users and groups to roles, in YAML::

    roles:                      # optional; admin, scheduler, client and readonly always exist
      - name: pod-reader
        rules:
          - verbs: [get, list, watch]
            resources: [pods, pods/status]
            resourceNames: [web]          # optional: only these objects
    bindings:
      - role: admin
        users: [alice]
      - role: pod-reader
        groups: [dev]
        namespaces: [team-a]            # optional: only in these namespaces (kube's RoleBinding)

A binding without namespaces holds in every namespace and at the cluster scope (a ClusterRoleBinding);
one with namespaces holds only for requests addressed to them, never for cluster-scoped kinds or calls
across all namespaces. The built-in group bindings (roles.BUILTIN_GROUP_BINDINGS) hold with or without a
file; a file adds to them. The text is read by ``cluster.api.decoding`` (the reader of manifests and the
scheduler's configuration) and decoded strictly into this file's schema (``PolicyFile``): an unknown
field, a key given twice (which YAML would resolve silently to the last value; named with its line and
column) or a value of the wrong type is refused in that decoder's words. The policy's own rules are
checked here: an unknown verb, resource or role, a role defined twice, shadowing a built-in one or
without rules, a binding of nobody, a namespace that is not a valid name. Every mistake is an error
naming the file and the entry, and the server does not start: a half-understood policy would grant or
deny what its author did not mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

from cluster.api.decoding import DecodeError, Findings, decode, documents
from cluster.api.validation import is_dns1123_label
from cluster.apiserver.auth import roles
from cluster.apiserver.auth.flagfiles import read_flag_text
from cluster.apiserver.auth.roles import (
    BUILTIN_GROUP_BINDINGS,
    BUILTIN_ROLES,
    CLUSTER_WIDE,
    Grant,
    Role,
    Rule,
    Scope,
)


class PolicyFileError(ValueError):
    """The policy file cannot be read or an entry of it is wrong; the message names the file and entry."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Who holds which roles where: grants by user name and by group name, and the roles themselves."""

    roles: dict[str, Role] = field(default_factory=lambda: dict(BUILTIN_ROLES))
    user_roles: dict[str, tuple[Grant, ...]] = field(default_factory=dict)
    group_roles: dict[str, tuple[Grant, ...]] = field(
        default_factory=lambda: {group: (grant,) for group, grant in BUILTIN_GROUP_BINDINGS.items()}
    )


@dataclass(slots=True)
class RuleEntry:
    verbs: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    field_path: str = ""


@dataclass(slots=True)
class RoleEntry:
    name: str | None = None
    rules: list[RuleEntry] | None = None
    field_path: str = ""


#: A binding's ``namespaces`` when the key is absent (cluster-wide), told apart by identity from a
#: ``namespaces:`` given empty or null, which is refused rather than read as every namespace.
_NOT_GIVEN: list[str] = []


@dataclass(slots=True)
class BindingEntry:
    role: str | None = None
    users: list[str] | None = None
    groups: list[str] | None = None
    namespaces: list[str] | None = field(default_factory=lambda: _NOT_GIVEN)
    field_path: str = ""


@dataclass(slots=True)
class PolicyFile:
    """The file's schema, as ``cluster.api.decoding.decode`` reads it."""

    roles: list[RoleEntry] | None = None
    bindings: list[BindingEntry] | None = None


def _describe(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"[:80]


def parse_policy(text: str, path: str) -> Policy:
    """The policy a policy file's ``text`` describes; ``path`` names the file in errors."""
    try:
        found = [data for _, data in documents(text, path, numbered=False)]
    except DecodeError as exc:
        problem = exc.problems[0].removeprefix(f"{path}: ")
        raise PolicyFileError(f"policy file {path}: not valid YAML: {problem}") from None
    if not found:
        raise PolicyFileError(f"policy file {path}: is empty; it needs bindings (and may define roles)")
    if len(found) > 1:
        raise PolicyFileError(f"policy file {path}: holds {len(found)} YAML documents; a policy is one")
    findings = Findings(strict=True)
    given: PolicyFile = decode(PolicyFile, found[0], "", findings)
    if findings.errors:
        raise PolicyFileError(f"policy file {path}: " + "; ".join(findings.errors))
    policy = Policy()
    for role in given.roles or ():
        _define(policy, role, path)
    for binding in given.bindings or ():
        _bind(policy, binding, path)
    return policy


def _fail(path: str, where: str, message: str) -> NoReturn:
    raise PolicyFileError(f"policy file {path}: {where}: {message}")


def _define(policy: Policy, role: RoleEntry, path: str) -> None:
    where = role.field_path
    if not role.name:
        _fail(path, where, f"name must be a non-empty string, not {_describe(role.name)}")
    if role.name in policy.roles:
        what = "a built-in role" if role.name in BUILTIN_ROLES else "defined twice"
        _fail(path, where, f'role "{role.name}" is {what}')
    if not role.rules:
        _fail(path, where, f'role "{role.name}" has no rules')
    policy.roles[role.name] = Role(role.name, tuple(_rule(rule, path) for rule in role.rules))


def _bind(policy: Policy, binding: BindingEntry, path: str) -> None:
    where = binding.field_path
    if not binding.role:
        _fail(path, where, f"role must be a non-empty string, not {_describe(binding.role)}")
    if binding.role not in policy.roles:
        _fail(path, where, f'unknown role "{binding.role}" (known: {", ".join(policy.roles)})')
    users = _strings(binding.users, "users", where, path, required=False)
    groups = _strings(binding.groups, "groups", where, path, required=False)
    if not users and not groups:
        _fail(path, where, "binds nobody: give users, groups or both")
    grant = Grant(binding.role, _scope(binding, path))
    for user in users:
        policy.user_roles[user] = (*policy.user_roles.get(user, ()), grant)
    for group in groups:
        policy.group_roles[group] = (*policy.group_roles.get(group, ()), grant)


def _scope(binding: BindingEntry, path: str) -> Scope:
    """A binding's namespaces: absent, cluster-wide; else a non-empty list of namespace names."""
    if binding.namespaces is _NOT_GIVEN:
        return CLUSTER_WIDE
    namespaces = _strings(binding.namespaces, "namespaces", binding.field_path, path)
    for index, namespace in enumerate(namespaces):
        problems = is_dns1123_label(namespace)
        if problems:
            _fail(path, f"{binding.field_path}.namespaces[{index}]",
                  f"{namespace!r} is not a valid namespace name: {'; '.join(problems)}")
    return Scope(frozenset(namespaces))


def _rule(rule: RuleEntry, path: str) -> Rule:
    where = rule.field_path
    return Rule(
        frozenset(_strings(rule.verbs, "verbs", where, path, allowed=(*roles.VERBS, roles.ALL))),
        frozenset(_strings(rule.resources, "resources", where, path, allowed=(*roles.RESOURCES, roles.ALL))),
        frozenset(_strings(rule.resource_names, "resourceNames", where, path, required=False)),
    )


def _strings(
    values: list[str] | None, key: str, where: str, path: str, *,
    allowed: tuple[str, ...] | None = None, required: bool = True,
) -> tuple[str, ...]:
    """A list field's strings: each non-empty (and one of ``allowed``); the list non-empty if ``required``."""
    if not values:
        if required:
            _fail(path, where, f"{key} must be a non-empty list of strings, not {_describe(values)}")
        return ()
    for index, item in enumerate(values):
        if not item:
            _fail(path, f"{where}.{key}[{index}]", f"must be a non-empty string, not {_describe(item)}")
        if allowed is not None and item not in allowed:
            known = ", ".join(allowed)
            _fail(path, f"{where}.{key}[{index}]", f"unknown {key[:-1]} {item!r} (known: {known})")
    return tuple(values)


def load_policy_file(path: str) -> Policy:
    """The policy in the file at ``path``; PolicyFileError if it is unreadable or wrong."""
    return parse_policy(read_flag_text("--authorization-policy-file", path, PolicyFileError), path)
