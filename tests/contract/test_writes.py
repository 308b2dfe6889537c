"""Compare-and-swap writes: create, update, delete, their results, and guards."""

from __future__ import annotations

import asyncio

import pytest

from store.base import Guard, KeyValue, Store, WriteResult


async def test_create_writes_a_new_key_at_the_next_revision(store: Store) -> None:
    before = await store.current_revision()

    result = await store.create("/pods/a", b"v1")

    assert result == WriteResult(True, before + 1, KeyValue("/pods/a", b"v1", before + 1, before + 1))
    assert await store.get("/pods/a") == result.current
    assert await store.current_revision() == before + 1


async def test_create_of_an_existing_key_fails_and_reports_it(store: Store) -> None:
    first = await store.create("/pods/a", b"v1")

    result = await store.create("/pods/a", b"v2")

    assert result == WriteResult(False, first.revision, first.current)
    assert await store.get("/pods/a") == first.current
    assert await store.current_revision() == first.revision


async def test_get_of_a_missing_key_is_none(store: Store) -> None:
    assert await store.get("/pods/missing") is None


@pytest.mark.parametrize(
    ("expected", "succeeds"),
    [("current", True), ("stale", False), ("none", True), ("zero", False)],
    ids=["current-revision", "stale-revision", "unconditional", "revision-zero"],
)
async def test_update_compares_the_mod_revision(store: Store, expected: str, succeeds: bool) -> None:
    created = await store.create("/pods/a", b"v1")
    second = await store.update("/pods/a", b"v2", created.revision)
    expected_revision = {"current": second.revision, "stale": created.revision, "none": None, "zero": 0}[
        expected
    ]

    result = await store.update("/pods/a", b"v3", expected_revision)

    assert result.succeeded is succeeds
    assert result.failed_guards == ()
    if succeeds:
        assert result.revision == second.revision + 1
        assert result.current == KeyValue("/pods/a", b"v3", created.revision, second.revision + 1)
    else:
        assert result.revision == second.revision
        assert result.current == second.current
    assert await store.get("/pods/a") == result.current


@pytest.mark.parametrize("expected_revision", [None, 1], ids=["unconditional", "with-revision"])
async def test_update_of_a_missing_key_fails(store: Store, expected_revision: int | None) -> None:
    before = await store.current_revision()

    result = await store.update("/pods/missing", b"v", expected_revision)

    assert result == WriteResult(False, before, None)
    assert await store.get("/pods/missing") is None
    assert await store.current_revision() == before


@pytest.mark.parametrize(
    ("expected", "succeeds"),
    [("current", True), ("stale", False), ("none", True)],
    ids=["current-revision", "stale-revision", "unconditional"],
)
async def test_delete_compares_the_mod_revision(store: Store, expected: str, succeeds: bool) -> None:
    created = await store.create("/pods/a", b"v1")
    second = await store.update("/pods/a", b"v2", created.revision)
    expected_revision = {"current": second.revision, "stale": created.revision, "none": None}[expected]

    result = await store.delete("/pods/a", expected_revision)

    # Success and failure both report the key as it was: the deleted value, or the one that stayed.
    assert result.current == second.current
    assert result.succeeded is succeeds
    if succeeds:
        assert result.revision == second.revision + 1
        assert await store.get("/pods/a") is None
        assert await store.current_revision() == second.revision + 1
    else:
        assert result.revision == second.revision
        assert await store.get("/pods/a") == second.current


async def test_delete_of_a_missing_key_fails(store: Store) -> None:
    before = await store.current_revision()

    assert await store.delete("/pods/missing", None) == WriteResult(False, before, None)


async def test_a_key_created_again_after_deletion_has_a_new_create_revision(store: Store) -> None:
    first = await store.create("/pods/a", b"v1")
    await store.delete("/pods/a", first.revision)

    again = await store.create("/pods/a", b"v2")

    assert again.succeeded
    assert again.current == KeyValue("/pods/a", b"v2", first.revision + 2, first.revision + 2)


@pytest.mark.parametrize(
    "value", [b"", b"\x00\xff binary \x00", bytes(range(256)) * 64], ids=["empty", "binary", "16KiB"]
)
async def test_values_round_trip_byte_for_byte(store: Store, value: bytes) -> None:
    await store.create("/pods/a", value)

    got = await store.get("/pods/a")

    assert got is not None and got.value == value


async def test_keys_are_exact_not_prefixes(store: Store) -> None:
    await store.create("/pods/a", b"a")
    await store.create("/pods/ab", b"ab")

    assert (await store.get("/pods/a")).value == b"a"  # type: ignore[union-attr]
    assert (await store.delete("/pods/a", None)).succeeded
    assert (await store.get("/pods/ab")).value == b"ab"  # type: ignore[union-attr]


# -- guards -----------------------------------------------------------------------------------------


async def _fence(store: Store) -> tuple[int, int]:
    """A lease-like key at some revision and the pod to write under it."""
    lease = await store.create("/leases/scheduler", b"holder-1")
    pod = await store.create("/pods/a", b"unbound")
    return lease.revision, pod.revision


@pytest.mark.parametrize("operation", ["update", "delete"])
async def test_a_held_guard_lets_the_write_through(store: Store, operation: str) -> None:
    lease_revision, pod_revision = await _fence(store)
    guards = [Guard("/leases/scheduler", lease_revision), Guard("/fences/absent", 0)]

    if operation == "update":
        result = await store.update("/pods/a", b"bound", pod_revision, guards)
    else:
        result = await store.delete("/pods/a", pod_revision, guards)

    assert result.succeeded and result.failed_guards == ()
    assert result.revision == pod_revision + 1


@pytest.mark.parametrize("operation", ["update", "delete"])
async def test_a_failed_guard_blocks_the_write_and_is_named(store: Store, operation: str) -> None:
    lease_revision, pod_revision = await _fence(store)
    renewed = await store.update("/leases/scheduler", b"holder-2", lease_revision)
    stale = Guard("/leases/scheduler", lease_revision)
    held = Guard("/fences/absent", 0)

    if operation == "update":
        result = await store.update("/pods/a", b"bound", pod_revision, [held, stale])
    else:
        result = await store.delete("/pods/a", pod_revision, [held, stale])

    assert result == WriteResult(
        False, renewed.revision, KeyValue("/pods/a", b"unbound", pod_revision, pod_revision), (stale,)
    )
    assert (await store.get("/pods/a")).value == b"unbound"  # type: ignore[union-attr]
    assert await store.current_revision() == renewed.revision


async def test_a_create_lands_only_while_its_guards_hold(store: Store) -> None:
    lease = await store.create("/leases/scheduler", b"holder-1")
    held = Guard("/leases/scheduler", lease.revision)

    created = await store.create("/events/a", b"e1", [held, Guard("/fences/absent", 0)])
    assert created.succeeded and created.failed_guards == ()

    renewed = await store.update("/leases/scheduler", b"holder-2", lease.revision)
    refused = await store.create("/events/b", b"e2", [held])

    assert refused == WriteResult(False, renewed.revision, None, (held,))
    assert await store.get("/events/b") is None
    assert await store.current_revision() == renewed.revision


async def test_an_absence_guard_fails_once_the_key_exists(store: Store) -> None:
    pod = await store.create("/pods/a", b"v1")
    await store.create("/fences/token", b"x")
    guard = Guard("/fences/token", 0)

    result = await store.update("/pods/a", b"v2", pod.revision, [guard])

    assert not result.succeeded
    assert result.failed_guards == (guard,)


async def test_a_guard_on_a_deleted_key_fails(store: Store) -> None:
    lease_revision, pod_revision = await _fence(store)
    await store.delete("/leases/scheduler", lease_revision)
    guard = Guard("/leases/scheduler", lease_revision)

    result = await store.update("/pods/a", b"bound", pod_revision, [guard])

    assert not result.succeeded
    assert result.failed_guards == (guard,)


async def test_a_stale_revision_with_held_guards_reports_no_guard(store: Store) -> None:
    lease_revision, pod_revision = await _fence(store)
    await store.update("/pods/a", b"moved", pod_revision)

    result = await store.update(
        "/pods/a", b"bound", pod_revision, [Guard("/leases/scheduler", lease_revision)]
    )

    assert not result.succeeded
    assert result.failed_guards == ()
    assert result.current is not None and result.current.value == b"moved"


async def test_a_stale_revision_and_a_failed_guard_are_both_reported(store: Store) -> None:
    lease_revision, pod_revision = await _fence(store)
    await store.update("/pods/a", b"moved", pod_revision)
    await store.update("/leases/scheduler", b"holder-2", lease_revision)
    stale = Guard("/leases/scheduler", lease_revision)

    result = await store.update("/pods/a", b"bound", pod_revision, [stale])

    assert not result.succeeded
    assert result.failed_guards == (stale,)
    assert result.current is not None and result.current.value == b"moved"


# -- concurrency ------------------------------------------------------------------------------------


async def test_concurrent_compare_and_swap_increments_lose_no_update(store: Store) -> None:
    writers, increments = 8, 25
    await store.create("/counter", b"0")

    async def increment() -> int:
        conflicts = 0
        for _ in range(increments):
            while True:
                current = await store.get("/counter")
                assert current is not None
                result = await store.update(
                    "/counter", str(int(current.value) + 1).encode(), current.mod_revision
                )
                if result.succeeded:
                    break
                conflicts += 1
        return conflicts

    conflicts = await asyncio.gather(*(increment() for _ in range(writers)))

    final = await store.get("/counter")
    assert final is not None and int(final.value) == writers * increments
    assert final.mod_revision - final.create_revision == writers * increments
    assert sum(conflicts) > 0, "the writers never raced; the test proves nothing"


async def test_concurrent_creates_of_one_key_have_one_winner(store: Store) -> None:
    results = await asyncio.gather(*(store.create("/pods/a", f"writer-{i}".encode()) for i in range(10)))

    winners = [r for r in results if r.succeeded]
    assert len(winners) == 1
    assert all(r.current == winners[0].current for r in results)


# -- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", ["create", "update", "delete"])
async def test_an_empty_key_is_refused(store: Store, operation: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        if operation == "create":
            await store.create("", b"v")
        elif operation == "update":
            await store.update("", b"v", None)
        else:
            await store.delete("", None)
