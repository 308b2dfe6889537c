"""Who owns what after applies and updates, from structured-merge-diff's merge tests (leaf_test,
multiple_appliers_test, key_test, set_test, conflict cases), with a Pod's schema in place of their test
schemas: spec.priority, spec.schedulerName and spec.nodeName are leaves, spec.containers a list map by
name, spec.tolerations an atomic list, metadata.labels a granular map, spec.nodeSelector an atomic one."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.apiserver.http.apply import typed, updater
from cluster.apiserver.http.apply.fieldpath import FieldSet, PathElement, path_string, to_fields_v1
from cluster.apiserver.http.patch.patchmeta import ListSchema

POD = typed.of_message(objects_pb2.Pod.DESCRIPTOR)
F, K, V = PathElement.field, PathElement.key, PathElement.value


def spec(**fields: Any) -> dict[str, Any]:
    return {"spec": fields}


def spec_fields(*names: str) -> dict[str, Any]:
    return {"f:spec": {f"f:{name}": {} for name in sorted(names)}}


class State:
    """An object and its managers through a sequence of operations, as the upstream tests' State."""

    def __init__(self) -> None:
        # upstream's new object of the kind: its spec is there, empty
        self.live: Any = {"spec": {}}
        self.managers: updater.Managers = {}

    def apply(self, manager: str, config: dict[str, Any], force: bool = False) -> None:
        self.live, self.managers, _ = updater.apply(
            self.live, config, POD, "v1", self.managers, manager, force)

    def update(self, manager: str, new: dict[str, Any]) -> None:
        self.managers = updater.update(self.live, new, POD, "v1", self.managers, manager)
        self.live = new

    def owned(self) -> dict[str, dict[str, Any]]:
        return {manager: to_fields_v1(versioned.fields) for manager, versioned in self.managers.items()}


def conflicts_of(state: State, manager: str, config: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(updater.Conflicts) as caught:
        state.apply(manager, config)
    return [(owner, path_string(path)) for owner, path in caught.value.conflicts]


# --------------------------------------------------------------------------------------------- leaves

def test_apply_twice() -> None:
    state = State()
    state.apply("default", spec(priority=1, schedulerName="string"))
    state.apply("default", spec(priority=2, schedulerName="string", nodeName="n"))
    assert state.live == spec(priority=2, schedulerName="string", nodeName="n")
    assert state.owned() == {"default": spec_fields("priority", "schedulerName", "nodeName")}
    assert state.managers["default"].applied


def test_apply_twice_removes_what_is_no_longer_applied() -> None:
    state = State()
    state.apply("default", spec(priority=1, schedulerName="string", nodeName="n"))
    state.apply("default", spec(schedulerName="string"))
    assert state.live == spec(schedulerName="string")
    assert state.owned() == {"default": spec_fields("schedulerName")}


def test_apply_update_apply_no_conflict() -> None:
    state = State()
    state.apply("default", spec(priority=1, schedulerName="string"))
    state.update("controller", spec(priority=1, schedulerName="string", nodeName="n"))
    state.apply("default", spec(priority=2, schedulerName="string"))
    assert state.live == spec(priority=2, schedulerName="string", nodeName="n")
    assert state.owned() == {"default": spec_fields("priority", "schedulerName"),
                             "controller": spec_fields("nodeName")}


def test_apply_update_apply_with_conflict_then_force() -> None:
    state = State()
    state.apply("default", spec(priority=1, schedulerName="string"))
    state.update("controller", spec(priority=1, schedulerName="controller string", nodeName="n"))
    assert state.owned() == {"default": spec_fields("priority"),
                             "controller": spec_fields("schedulerName", "nodeName")}
    config = spec(priority=2, schedulerName="user string")
    assert conflicts_of(state, "default", config) == [("controller", ".spec.schedulerName")]
    assert state.live["spec"]["schedulerName"] == "controller string", "a conflicting apply changes nothing"
    state.apply("default", config, force=True)
    assert state.live == spec(priority=2, schedulerName="user string", nodeName="n")
    assert state.owned() == {"default": spec_fields("priority", "schedulerName"),
                             "controller": spec_fields("nodeName")}


def test_applying_the_value_another_manager_set_shares_the_field() -> None:
    state = State()
    state.update("controller", spec(priority=1))
    state.apply("default", spec(priority=1))
    assert state.owned() == {"controller": spec_fields("priority"), "default": spec_fields("priority")}
    # the applier lets go of it; the controller still owns it, so it stays
    state.apply("default", spec(schedulerName="s"))
    assert state.live == spec(priority=1, schedulerName="s")
    assert state.owned() == {"controller": spec_fields("priority"), "default": spec_fields("schedulerName")}


def test_an_update_that_removes_a_field_takes_it_from_its_owner() -> None:
    state = State()
    state.apply("default", spec(priority=1, schedulerName="s"))
    state.update("controller", spec(schedulerName="s"))
    assert state.owned() == {"default": spec_fields("schedulerName")}
    state.update("controller", {"spec": {}})
    assert state.owned() == {}, "a manager left with nothing is dropped"


def test_conflicts_name_every_owner_in_order() -> None:
    state = State()
    state.update("b-controller", spec(priority=1, nodeName="n1"))
    state.update("a-controller", spec(priority=1, nodeName="n1", schedulerName="x"))
    assert conflicts_of(state, "default", spec(priority=2, nodeName="n2", schedulerName="y")) == [
        ("a-controller", ".spec.schedulerName"),
        ("b-controller", ".spec.nodeName"), ("b-controller", ".spec.priority"),
    ]


# --------------------------------------------------------------------------------------- list maps

def _containers(*items: dict[str, Any]) -> dict[str, Any]:
    return spec(containers=list(items))


def test_multiple_appliers_of_a_list_map_own_their_items() -> None:
    state = State()
    state.apply("apply-one", _containers({"name": "a", "image": "x"}))
    state.apply("apply-two", _containers({"name": "b", "image": "y"}))
    assert state.live == _containers({"name": "a", "image": "x"}, {"name": "b", "image": "y"})
    item_a = {".": {}, "f:image": {}, "f:name": {}}
    assert state.owned() == {
        "apply-one": {"f:spec": {"f:containers": {'k:{"name":"a"}': item_a}}},
        "apply-two": {"f:spec": {"f:containers": {'k:{"name":"b"}': item_a}}},
    }
    state.apply("apply-one", spec(containers=[]))
    assert state.live == _containers({"name": "b", "image": "y"})
    assert set(state.owned()) == {"apply-two"}


def test_an_item_two_appliers_own_stays_until_both_let_go() -> None:
    state = State()
    state.apply("apply-one", _containers({"name": "a", "image": "x"}))
    state.apply("apply-two", _containers({"name": "a", "image": "x"}))
    state.apply("apply-one", _containers({"name": "c", "image": "z"}))
    assert state.live == _containers({"name": "a", "image": "x"}, {"name": "c", "image": "z"})
    state.apply("apply-two", spec(priority=1))
    assert state.live == spec(containers=[{"name": "c", "image": "z"}], priority=1)


def test_a_field_of_an_item_conflicts_by_its_key() -> None:
    state = State()
    state.apply("default", _containers({"name": "c", "image": "nginx"}))
    state.update("controller", _containers({"name": "c", "image": "nginx:2"}))
    assert conflicts_of(state, "default", _containers({"name": "c", "image": "nginx:3"})) == [
        ("controller", '.spec.containers[name="c"].image')]


def test_list_map_merge_keeps_live_items_in_place() -> None:
    state = State()
    state.update("controller", _containers({"name": "a"}, {"name": "b"}))
    state.apply("default", _containers({"name": "b", "image": "i"}, {"name": "c"}))
    assert [c["name"] for c in state.live["spec"]["containers"]] == ["a", "b", "c"]
    assert state.live["spec"]["containers"][1] == {"name": "b", "image": "i"}


def test_a_key_with_a_default_names_the_item_by_it() -> None:
    fields = typed.to_field_set(_containers({"name": "c", "ports": [{"containerPort": 80}]}), POD)
    port = (F("spec"), F("containers"), K({"name": "c"}),
            F("ports"), K({"containerPort": 80, "protocol": "TCP"}))
    assert fields.has(port)
    assert fields.has((*port, F("containerPort")))


def test_an_item_without_its_key_is_refused() -> None:
    with pytest.raises(typed.SchemaError, match='omits key field "name"'):
        State().apply("default", _containers({"image": "x"}))


def test_an_applied_list_with_two_items_of_one_key_is_refused() -> None:
    with pytest.raises(typed.SchemaError, match="duplicate entries for key"):
        State().apply("default", _containers({"name": "a"}, {"name": "a"}))


# ------------------------------------------------------------------------------ atomic and granular

def test_an_atomic_list_is_one_field() -> None:
    state = State()
    state.apply("one", spec(tolerations=[{"key": "a", "operator": "Exists"}]))
    assert state.owned() == {"one": spec_fields("tolerations")}
    assert conflicts_of(state, "two", spec(tolerations=[{"key": "b", "operator": "Exists"}])) == [
        ("one", ".spec.tolerations")]


def test_an_atomic_map_is_one_field_and_a_granular_map_one_per_key() -> None:
    state = State()
    state.apply("one", {"metadata": {"labels": {"app": "web"}}, "spec": {"nodeSelector": {"disk": "ssd"}}})
    state.apply("two", {"metadata": {"labels": {"tier": "db"}}})
    assert state.live["metadata"]["labels"] == {"app": "web", "tier": "db"}
    assert state.owned() == {
        "one": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:nodeSelector": {}}},
        "two": {"f:metadata": {"f:labels": {"f:tier": {}}}},
    }


def test_an_empty_struct_is_owned_as_such() -> None:
    fields = typed.to_field_set(spec(affinity={}), POD)
    assert to_fields_v1(fields) == {"f:spec": {"f:affinity": {}}}


def test_set_lists_are_owned_by_value() -> None:
    schema = typed.Type("list", element=typed.Type("scalar"), list_schema=ListSchema("set"))
    fields = typed.to_field_set(["a", "b"], schema)
    assert to_fields_v1(fields) == {'v:"a"': {}, 'v:"b"': {}}
    assert typed.merge(["a", "b"], ["c", "b"], schema) == ["a", "c", "b"]
    diff = typed.compare(["a", "b"], ["b", "c"], schema)
    assert (diff.removed, diff.added) == (FieldSet.of((V("a"),)), FieldSet.of((V("c"),)))


def test_compare_marks_new_containers_as_added_themselves() -> None:
    diff = typed.compare({}, {"metadata": {"labels": {"app": "x"}}}, POD)
    assert to_fields_v1(diff.added) == {"f:metadata": {".": {}, "f:labels": {".": {}, "f:app": {}}}}
    diff = typed.compare(spec(priority=1, nodeName="a"), spec(priority=2), POD)
    assert to_fields_v1(diff.modified) == spec_fields("priority")
    assert to_fields_v1(diff.removed) == spec_fields("nodeName")


def _names(*names: str) -> dict[str, Any]:
    return _containers(*({"name": name} for name in names))


def _owned_items(*names: str, fields: tuple[str, ...] = ("name",)) -> dict[str, Any]:
    return {"f:spec": {"f:containers": {
        f'k:{{"name":"{name}"}}': {".": {}, **{f"f:{f}": {} for f in fields}} for name in names}}}


@pytest.mark.parametrize(("ops", "live", "owned"), [
    pytest.param(
        [("apply-one", _names("a", "b")), ("apply-two", _names("c")), ("apply-one", _names("a"))],
        _names("a", "c"),
        {"apply-one": _owned_items("a"), "apply-two": _owned_items("c")},
        id="remove_one"),
    pytest.param(
        [("apply-one", _containers({"name": "a", "image": "0"})),
         ("apply-two", _containers({"name": "a", "image": "0"}))],
        _containers({"name": "a", "image": "0"}),
        {"apply-one": _owned_items("a", fields=("image", "name")),
         "apply-two": _owned_items("a", fields=("image", "name"))},
        id="same_value_no_conflict"),
    pytest.param(
        [("apply-one", _names("a", "b", "c")), ("apply-two", _names("c", "d")), ("apply-one", _names("a"))],
        _names("a", "c", "d"),
        {"apply-one": _owned_items("a"), "apply-two": _owned_items("c", "d")},
        id="remove_one_keep_one"),
])
def test_multiple_appliers_set(ops: list[tuple[str, dict[str, Any]]], live: dict[str, Any],
                               owned: dict[str, Any]) -> None:
    state = State()
    for manager, config in ops:
        state.apply(manager, config)
    assert state.live == live
    assert state.owned() == owned


def test_multiple_appliers_change_value_yes_conflict() -> None:
    state = State()
    state.apply("apply-one", _containers({"name": "a", "image": "0"}))
    assert conflicts_of(state, "apply-two", _containers({"name": "a", "image": "1"})) == [
        ("apply-one", '.spec.containers[name="a"].image')]
    assert state.live == _containers({"name": "a", "image": "0"})
