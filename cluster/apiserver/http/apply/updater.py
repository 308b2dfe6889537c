"""Who owns what after a write, as structured-merge-diff's merge.Updater: an update takes the fields it
changed from every other manager; an apply merges the applied configuration, drops the fields its manager
applied before and no longer applies (unless another manager owns them), and either conflicts with the
managers that own a field it changes or, forced, takes those fields from them.

Managers are keyed by their identifier (``managedfields.identifier``); podsched serves one version of
each kind, so no set is ever converted between versions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.apiserver.http.apply.fieldpath import FieldSet, Path
from cluster.apiserver.http.apply.typed import (
    Type,
    compare,
    ensure_named_fields_are_members,
    merge,
    remove_items,
    to_field_set,
)


@dataclass(frozen=True, slots=True)
class VersionedSet:
    """One manager's fields, the apiVersion it wrote them in, and whether it applied them."""

    fields: FieldSet
    api_version: str
    applied: bool


Managers = dict[str, VersionedSet]


class Conflicts(Exception):
    """Fields an apply changes that other managers own: (manager identifier, path) pairs in upstream's
    order (by manager, then path)."""

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


def _update(live: Any, new: Any, t: Type, managers: Managers, workflow: str, force: bool,
            ignored: FieldSet) -> tuple[Managers, FieldSet, FieldSet]:
    """Take what ``new`` changes of ``live`` from every manager but ``workflow`` (or raise Conflicts
    unless ``force``), drop what it removes from them; the removed and the changed fields. Changes at or
    below ``ignored`` (the fields the write's strategy resets) count for no one."""
    diff = compare(live, new, t)
    removed = diff.removed.recursive_difference(ignored)
    changed = diff.modified.union(diff.added).recursive_difference(ignored)
    conflicts: dict[str, FieldSet] = {}
    out = dict(managers)
    for manager, owned in managers.items():
        if manager == workflow:
            continue
        taken = owned.fields.intersection(changed)
        if not taken.empty():
            conflicts[manager] = taken
    if conflicts and not force:
        raise Conflicts([(manager, path) for manager in sorted(conflicts)
                         for path in conflicts[manager].paths()])
    for manager, owned in managers.items():
        kept = owned.fields
        if manager != workflow:
            kept = kept.difference(conflicts.get(manager, FieldSet())).difference(removed)
        if kept.empty():
            del out[manager]
        elif kept is not owned.fields:
            out[manager] = VersionedSet(kept, owned.api_version, owned.applied)
    return out, removed, changed


def update(live: Any, new: Any, t: Type, version: str, managers: Managers, manager: str,
           ignored: FieldSet | None = None) -> Managers:
    """The managers after an update by ``manager`` turned ``live`` into ``new`` (Updater.Update)."""
    ignored = ignored or FieldSet()
    out, removed, changed = _update(live, new, t, managers, manager, True, ignored)
    previous = out.get(manager)
    owned = (previous.fields if previous is not None else FieldSet()).difference(removed).union(changed)
    owned = owned.recursive_difference(ignored)
    if owned.empty():
        out.pop(manager, None)
    else:
        out[manager] = VersionedSet(owned, version, applied=False)
    return out


def apply(live: Any, config: Any, t: Type, version: str, managers: Managers, manager: str,
          force: bool, ignored: FieldSet | None = None) -> tuple[Any, Managers, bool]:
    """The object and managers after ``manager`` applied ``config`` to ``live`` (Updater.Apply), and
    whether the object changed; raises Conflicts unless ``force``. The applier owns nothing at or below
    ``ignored``."""
    ignored = ignored or FieldSet()
    merged = merge(live, config, t)
    last = managers.get(manager)
    owned = to_field_set(config, t).recursive_difference(ignored)
    managers = {**managers, manager: VersionedSet(owned, version, applied=True)}
    if last is not None and not last.fields.empty():
        merged = _prune(merged, managers, last.fields, t)
    out, _, _ = _update(live, merged, t, managers, manager, force, ignored)
    return merged, out, merged != live


def _prune(merged: Any, managers: Managers, last: FieldSet, t: Type) -> Any:
    """``merged`` without what the applier applied last time and applies no more, unless another manager
    owns it (Updater.prune: remove, add back the owned items, add back the dangling ones)."""
    def named(fields: FieldSet) -> FieldSet:
        return ensure_named_fields_are_members(fields, t)

    last_named = named(last)
    pruned = remove_items(merged, last_named, t)
    owned = FieldSet()
    for versioned in managers.values():
        owned = owned.union(versioned.fields)
    merged_set = named(to_field_set(merged, t))
    unowned = merged_set.difference(named(to_field_set(pruned, t)).union(named(owned)))
    pruned = remove_items(merged, unowned, t)
    dangling = merged_set.difference(named(to_field_set(pruned, t))).intersection(last_named)
    return remove_items(merged, dangling, t)
