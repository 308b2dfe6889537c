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
file; a file adds to them. The text is read by ``cluster.api.decoding.documents`` (the reader of manifests
and the scheduler's configuration), so a key given twice, which YAML would resolve silently to the last
value, is caught with its line and column. Every mistake — an unknown or repeated key, an unknown verb,
resource or role, a role defined twice or shadowing a built-in one, a binding of nobody, a namespace
that is not a valid name — is an error naming the file and the entry, and the server does not start: a
half-understood policy would grant or deny what its author did not mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

from cluster.api.decoding import DecodeError, documents, duplicate_keys
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


class _Entry:
    """Reads one YAML mapping, naming the file and the path to it in every error."""

    def __init__(self, path: str, where: str, value: Any, keys: tuple[str, ...]) -> None:
        self._path = path
        self.where = where
        if not isinstance(value, dict):
            self.fail(f"must be a mapping, not {_describe(value)}")
        repeated = duplicate_keys(value, "")
        if repeated:
            self.fail(repeated[0])
        unknown = sorted(str(key) for key in value if key not in keys)
        if unknown:
            self.fail(f"unknown field {unknown[0]!r} (known: {', '.join(keys)})")
        self.value: dict[str, Any] = value

    def fail(self, message: str, where: str | None = None) -> NoReturn:
        raise PolicyFileError(f"policy file {self._path}: {where or self.where}: {message}")

    def string(self, key: str) -> str:
        value = self.value.get(key)
        if not isinstance(value, str) or not value:
            self.fail(f"{key} must be a non-empty string, not {_describe(value)}")
        return value

    def strings(
        self, key: str, *, allowed: tuple[str, ...] | None = None, required: bool = True
    ) -> tuple[str, ...]:
        value = self.value.get(key)
        if value is None and not required:
            return ()
        if not isinstance(value, list) or (required and not value):
            self.fail(f"{key} must be a non-empty list of strings, not {_describe(value)}")
        for index, item in enumerate(value):
            item_where = f"{self.where}.{key}[{index}]"
            if not isinstance(item, str) or not item:
                self.fail(f"must be a non-empty string, not {_describe(item)}", item_where)
            if allowed is not None and item not in allowed:
                self.fail(f"unknown {key[:-1]} {item!r} (known: {', '.join(allowed)})", item_where)
        return tuple(value)

    def items(self, key: str) -> list[Any]:
        value = self.value.get(key, [])
        if not isinstance(value, list):
            self.fail(f"{key} must be a list, not {_describe(value)}")
        return value


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    # A mapping from the decoder is a dict that remembers its duplicate keys: to the author, a dict.
    kind = "dict" if isinstance(value, dict) else type(value).__name__
    return f"{kind} {dict(value) if isinstance(value, dict) else value!r}"[:80]


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
    document = found[0]
    top = _Entry(path, "top level", document, ("roles", "bindings"))
    policy = Policy()
    for index, value in enumerate(top.items("roles")):
        entry = _Entry(path, f"roles[{index}]", value, ("name", "rules"))
        name = entry.string("name")
        if name in policy.roles:
            what = "a built-in role" if name in BUILTIN_ROLES else "defined twice"
            entry.fail(f'role "{name}" is {what}')
        rules = [
            _rule(path, f"roles[{index}].rules[{n}]", rule) for n, rule in enumerate(entry.items("rules"))
        ]
        if not rules:
            entry.fail(f'role "{name}" has no rules')
        policy.roles[name] = Role(name, tuple(rules))
    for index, value in enumerate(top.items("bindings")):
        entry = _Entry(path, f"bindings[{index}]", value, ("role", "users", "groups", "namespaces"))
        role = entry.string("role")
        if role not in policy.roles:
            entry.fail(f'unknown role "{role}" (known: {", ".join(policy.roles)})')
        users = entry.strings("users", required=False)
        groups = entry.strings("groups", required=False)
        if not users and not groups:
            entry.fail("binds nobody: give users, groups or both")
        grant = Grant(role, _scope(entry))
        for user in users:
            policy.user_roles[user] = (*policy.user_roles.get(user, ()), grant)
        for group in groups:
            policy.group_roles[group] = (*policy.group_roles.get(group, ()), grant)
    return policy


def _scope(entry: _Entry) -> Scope:
    """A binding's namespaces: absent, cluster-wide; else a non-empty list of namespace names."""
    if "namespaces" not in entry.value:
        return CLUSTER_WIDE
    namespaces = entry.strings("namespaces")
    for index, namespace in enumerate(namespaces):
        problems = is_dns1123_label(namespace)
        if problems:
            entry.fail(
                f"{namespace!r} is not a valid namespace name: {'; '.join(problems)}",
                f"{entry.where}.namespaces[{index}]",
            )
    return Scope(frozenset(namespaces))


def _rule(path: str, where: str, value: Any) -> Rule:
    entry = _Entry(path, where, value, ("verbs", "resources", "resourceNames"))
    return Rule(
        frozenset(entry.strings("verbs", allowed=(*roles.VERBS, roles.ALL))),
        frozenset(entry.strings("resources", allowed=(*roles.RESOURCES, roles.ALL))),
        frozenset(entry.strings("resourceNames", required=False)),
    )


def load_policy_file(path: str) -> Policy:
    """The policy in the file at ``path``; PolicyFileError if it is unreadable or wrong."""
    return parse_policy(read_flag_text("--authorization-policy-file", path, PolicyFileError), path)
