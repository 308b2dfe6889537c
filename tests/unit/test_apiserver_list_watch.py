"""List (selectors, paging at one revision, continue tokens) and Watch (from "", from a version,
selectors, compaction) through the real service."""

from __future__ import annotations

import pytest

from cluster.api import errors, kinds, objects_pb2
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]


async def _pods(api: Harness) -> None:
    """a0..a4 in namespace a (app=web for even ones), b0..b4 in namespace b, b1 and b3 bound to n1."""
    for ns in ("a", "b"):
        for i in range(5):
            pod = make_pod(f"{ns}{i}", namespace=ns)
            pod.metadata.labels["app"] = "web" if i % 2 == 0 else "db"
            if ns == "b" and i % 2 == 1:
                pod.spec.node_name = "n1"
            await api.create(pod)


@pytest.mark.parametrize(
    ("namespace", "label_selector", "field_selector", "expected"),
    [
        ("", "", "", ["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"]),
        ("a", "", "", ["a0", "a1", "a2", "a3", "a4"]),
        ("", "app=web", "", ["a0", "a2", "a4", "b0", "b2", "b4"]),
        ("", "app in (db),app!=web", "", ["a1", "a3", "b1", "b3"]),
        ("", "", "spec.nodeName=n1", ["b1", "b3"]),
        ("", "", "spec.nodeName=", ["a0", "a1", "a2", "a3", "a4", "b0", "b2", "b4"]),
        ("", "", "status.phase=Running", ["b1", "b3"]),
        ("b", "app=web", "status.phase=Pending", ["b0", "b2", "b4"]),
        ("", "", "metadata.namespace=a,metadata.name!=a0", ["a1", "a2", "a3", "a4"]),
        ("c", "", "", []),
    ],
    ids=["all", "namespace", "label", "label-set", "field-node", "field-unbound", "field-phase",
         "both", "field-meta", "empty-namespace"],
)
async def test_list_selects(
    api: Harness, namespace: str, label_selector: str, field_selector: str, expected: list[str]
) -> None:
    await _pods(api)
    names = await api.names("Pod", namespace, label_selector=label_selector, field_selector=field_selector)
    assert names == expected


async def test_list_pages_are_one_consistent_snapshot(api: Harness) -> None:
    await _pods(api)
    first = await api.list("Pod", limit=3)
    assert [kinds.unwrap(i).metadata.name for i in first.items] == ["a0", "a1", "a2"]
    assert first.continue_token
    # Writes between pages are not seen: every page is read at the first page's revision.
    await api.delete("Pod", "a4", "a")
    await api.create(make_pod("b9", namespace="b"))
    names = [kinds.unwrap(i).metadata.name for i in first.items]
    token = first.continue_token
    while token:
        page = await api.list("Pod", limit=3, continue_token=token)
        assert page.resource_version == first.resource_version
        assert len(page.items) <= 3
        names += [kinds.unwrap(i).metadata.name for i in page.items]
        token = page.continue_token
    assert names == ["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"]
    assert all(
        int(kinds.unwrap(i).metadata.resource_version) <= int(first.resource_version) for i in first.items
    )


async def test_limit_counts_selected_objects(api: Harness) -> None:
    await _pods(api)
    page = await api.list("Pod", limit=2, field_selector="spec.nodeName=n1")
    assert [kinds.unwrap(i).metadata.name for i in page.items] == ["b1", "b3"]
    # b3 is not the last pod: more may match, so a token is returned (and its page is empty).
    assert page.continue_token
    rest = await api.list(
        "Pod", limit=2, field_selector="spec.nodeName=n1", continue_token=page.continue_token
    )
    assert list(rest.items) == [] and rest.continue_token == ""
    exact = await api.list("Pod", "b", limit=5)
    assert len(exact.items) == 5 and exact.continue_token == ""


async def test_a_compacted_continue_token_is_expired(api: Harness) -> None:
    await _pods(api)
    first = await api.list("Pod", limit=3)
    for i in range(3):
        await api.create(make_node(f"n{i}"))
    assert api.store is not None
    await api.store.compact(await api.store.current_revision())
    with pytest.raises(
        errors.Expired,
        match=r"^The provided continue parameter is too old to display a consistent list result. You can "
        r"start a new list without the continue parameter.$",
    ):
        await api.list("Pod", limit=3, continue_token=first.continue_token)


_SELECTOR_ERRORS = [
    ({"label_selector": "app in web"}, r'^invalid label selector "app in web": '),
    ({"label_selector": "Bad Key=x"}, r'^invalid label selector "Bad Key=x"'),
    ({"field_selector": "spec.foo=bar"}, "^field label not supported: spec.foo$"),
    ({"field_selector": "nonsense"}, r"^invalid selector: 'nonsense'; can't understand 'nonsense'$"),
]
_SELECTOR_IDS = ["label-syntax", "label-key", "unsupported-field", "field-syntax"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"continue_token": "garbage!"},
         "^continue key is not valid: not a continue token this server issued$"),
        ({"limit": -1}, "^limit must not be negative: -1$"),
        *_SELECTOR_ERRORS,
    ],
    ids=["bad-token", "negative-limit", *_SELECTOR_IDS],
)
async def test_bad_list_requests_are_invalid(api: Harness, fields: dict[str, object], message: str) -> None:
    with pytest.raises(errors.Invalid, match=message):
        await api.list("Pod", **fields)


@pytest.mark.parametrize(("fields", "message"), _SELECTOR_ERRORS, ids=_SELECTOR_IDS)
async def test_bad_watch_selectors_are_invalid(api: Harness, fields: dict[str, str], message: str) -> None:
    with pytest.raises(errors.Invalid, match=message):
        await api.next_events(api.watch("Pod", **fields), 1)


async def test_list_cluster_scoped_kind_ignores_namespace(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_node("n2"))
    listed = await api.list("Node", namespace="whatever")
    assert [kinds.unwrap(i).metadata.name for i in listed.items] == ["n1", "n2"]
    assert int(listed.resource_version) >= int(kinds.unwrap(listed.items[-1]).metadata.resource_version)


# -------------------------------------------------------------------------------------------- watch


async def test_watch_from_now_sends_state_then_changes(api: Harness) -> None:
    web = await api.create(make_pod("web"))
    stream = api.watch("Pod")
    [(kind, obj)] = await api.next_events(stream, 1)
    assert (kind, obj) == ("ADDED", web)
    relabel = objects_pb2.Pod()
    relabel.CopyFrom(web)
    relabel.metadata.labels["x"] = "y"
    updated = await api.update(relabel)
    await api.delete("Pod", "web")  # unscheduled: deleted at once
    events = await api.next_events(stream, 2)
    assert [t for t, _ in events] == ["MODIFIED", "DELETED"]
    assert events[0][1] == updated
    deleted = events[1][1]
    assert deleted.metadata.labels["x"] == "y"  # the last state...
    # ...at the revision of its deletion.
    assert int(deleted.metadata.resource_version) > int(updated.metadata.resource_version)
    stream.cancel()


async def test_watch_from_a_version_sends_every_later_change(api: Harness) -> None:
    first = await api.create(make_pod("one"))
    second = await api.create(make_pod("two"))
    third = await api.create(make_pod("three"))
    stream = api.watch("Pod", resource_version=first.metadata.resource_version)
    events = await api.next_events(stream, 2)
    assert events == [("ADDED", second), ("ADDED", third)]
    stream.cancel()


async def test_watch_with_selectors_sees_objects_enter_and_leave(api: Harness) -> None:
    await api.create(make_node("n1"))
    pending = await api.create(make_pod("web"))
    stream = api.watch("Pod", field_selector="spec.nodeName=n1")
    other = api.watch("Pod", "other-namespace")
    bound = await api.bind("web", "n1")
    [(kind, obj)] = await api.next_events(stream, 1)
    assert kind == "ADDED" and obj == bound
    await api.delete("Pod", "web", grace=0)
    [(kind, obj)] = await api.next_events(stream, 1)
    assert kind == "DELETED" and obj.metadata.name == "web"
    unbound = api.watch(
        "Pod", field_selector="spec.nodeName=", resource_version=pending.metadata.resource_version
    )
    [(kind, obj)] = await api.next_events(unbound, 1)
    # Binding took the pod out of the unbound selection: to that watcher it was deleted, as it was last seen.
    assert kind == "DELETED" and obj.spec.node_name == ""
    assert obj.metadata.resource_version == bound.metadata.resource_version
    await api.create(make_pod("elsewhere", namespace="other-namespace"))
    [(kind, obj)] = await api.next_events(other, 1)
    assert (kind, obj.metadata.name) == ("ADDED", "elsewhere")
    for s in (stream, other, unbound):
        s.cancel()


async def test_watch_from_a_compacted_version_is_expired(api: Harness) -> None:
    first = await api.create(make_pod("one"))
    for i in range(3):
        await api.create(make_pod(f"p{i}"))
    assert api.store is not None
    compacted = await api.store.current_revision()
    await api.store.compact(compacted)
    stream = api.watch("Pod", resource_version=first.metadata.resource_version)
    with pytest.raises(
        errors.Expired,
        match=rf"^too old resource version: {first.metadata.resource_version} \({compacted}\)$",
    ):
        await api.next_events(stream, 1)


async def test_watch_with_a_bad_version_is_invalid(api: Harness) -> None:
    message = r'^invalid resource version "abc": must be a non-negative integer$'
    with pytest.raises(errors.Invalid, match=message):
        await api.next_events(api.watch("Pod", resource_version="abc"), 1)
