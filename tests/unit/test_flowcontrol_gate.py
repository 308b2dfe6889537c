"""FlowControl as a request gate: who lands at which priority level, exempt callers never wait, lease and
scheduler traffic never queue behind a client's, users are served in turn, a watch's seat covers only its
start, and the configuration refuses nonsense."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator

import pytest

from cluster.api import errors
from cluster.apiserver.auth import ANONYMOUS, RequestInfo, UserInfo
from cluster.apiserver.auth.authorizer import Authorizer
from cluster.apiserver.auth.policy import Policy
from cluster.apiserver.auth.roles import Grant
from cluster.apiserver.flowcontrol import (
    EXEMPT,
    GLOBAL_DEFAULT,
    LEADER_ELECTION,
    WORKLOAD_HIGH,
    FlowControl,
    FlowControlConfig,
    FlowSchemas,
    nominal_seats,
    watch_started,
)

#: The built-in roles and group bindings, as a server without a policy file has them.
ALLOWS = Authorizer(Policy()).allows
ADMIN = UserInfo("admin", groups=("system:masters",))
SCHEDULER = UserInfo("scheduler-1", groups=("podsched:schedulers",))
ALICE = UserInfo("alice", groups=("podsched:clients",))
BOB = UserInfo("bob", groups=("podsched:clients",))

LEASE_UPDATE = RequestInfo("update", "leases", namespace="kube-system", name="kube-scheduler")
POD_CREATE = RequestInfo("create", "pods", namespace="default", name="web")
POD_WATCH = RequestInfo("watch", "pods", namespace="default")


@pytest.mark.parametrize(
    ("user", "request_info", "schema", "level"),
    [
        (ADMIN, POD_CREATE, "exempt", EXEMPT),
        (ADMIN, LEASE_UPDATE, "exempt", EXEMPT),
        (SCHEDULER, LEASE_UPDATE, "leader-election", LEADER_ELECTION),
        (SCHEDULER, RequestInfo("get", "leases", namespace="kube-system", name="kube-scheduler"),
         "leader-election", LEADER_ELECTION),
        (SCHEDULER, RequestInfo("create", "leases", namespace="kube-system", name="kube-scheduler"),
         "leader-election", LEADER_ELECTION),
        (SCHEDULER, RequestInfo("watch", "leases", namespace="kube-system"),
         "leader-election", LEADER_ELECTION),
        (SCHEDULER, RequestInfo("delete", "leases", namespace="kube-system", name="kube-scheduler"),
         "kube-scheduler", WORKLOAD_HIGH),
        (SCHEDULER, RequestInfo("create", "pods", "binding", "default", "web"),
         "kube-scheduler", WORKLOAD_HIGH),
        (SCHEDULER, RequestInfo("list", "nodes"), "kube-scheduler", WORKLOAD_HIGH),
        (ALICE, POD_CREATE, "global-default", GLOBAL_DEFAULT),
        (ALICE, LEASE_UPDATE, "global-default", GLOBAL_DEFAULT),
        (ANONYMOUS, RequestInfo("get", "nodes", name="n1"), "global-default", GLOBAL_DEFAULT),
    ],
    ids=["admin-pod", "admin-lease", "scheduler-lease-update", "scheduler-lease-get",
         "scheduler-lease-create", "scheduler-lease-watch", "scheduler-lease-delete", "scheduler-bind",
         "scheduler-list-nodes",
         "client-pod", "client-lease", "anonymous"],
)
def test_classification(user: UserInfo, request_info: RequestInfo, schema: str, level: str) -> None:
    classification = FlowSchemas(ALLOWS).classify(user, request_info)
    assert (classification.flow_schema, classification.priority_level, classification.flow) == (
        schema, level, user.name
    )


def test_a_user_the_policy_binds_to_the_scheduler_role_is_a_scheduler() -> None:
    policy = Policy(user_roles={"sched-bot": (Grant("scheduler"),)})
    schemas = FlowSchemas(Authorizer(policy).allows)
    bot = UserInfo("sched-bot", groups=("system:authenticated",))
    assert schemas.classify(bot, LEASE_UPDATE).priority_level == LEADER_ELECTION
    assert schemas.classify(bot, POD_WATCH).priority_level == WORKLOAD_HIGH


def test_the_levels_share_the_concurrency_limit_by_kubes_nominal_shares() -> None:
    assert nominal_seats(FlowControlConfig(max_requests_inflight=60, max_mutating_requests_inflight=30)) == {
        LEADER_ELECTION: 13, WORKLOAD_HIGH: 52, GLOBAL_DEFAULT: 26
    }
    assert set(nominal_seats(FlowControlConfig(max_requests_inflight=1, max_mutating_requests_inflight=0))
               .values()) == {1}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"max_requests_inflight": -1}, "--max-requests-inflight must not be negative, got -1"),
        ({"max_mutating_requests_inflight": -2},
         "--max-mutating-requests-inflight must not be negative, got -2"),
        ({"max_requests_inflight": 0, "max_mutating_requests_inflight": 0},
         "--max-requests-inflight plus --max-mutating-requests-inflight is the server's concurrency limit "
         "and must be positive, got 0 + 0"),
        ({"queue_length_limit": -1}, "queue length limit must not be negative, got -1"),
        ({"queue_wait_s": 0.0}, "queue_wait_s must be a positive number of seconds, got 0.0"),
        ({"watch_setup_s": math.inf}, "watch_setup_s must be a positive number of seconds, got inf"),
    ],
    ids=["negative-readonly", "negative-mutating", "zero-total", "negative-queue", "zero-wait",
         "infinite-setup"],
)
def test_the_config_refuses_nonsense(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        FlowControlConfig(**fields)  # type: ignore[arg-type]
    assert str(refused.value) == message


def tiny(**fields: float) -> FlowControl:
    """One seat per level, so a single request fills it."""
    config = FlowControlConfig(max_requests_inflight=1, max_mutating_requests_inflight=0, **fields)  # type: ignore[arg-type]
    return FlowControl(config, allows=ALLOWS)


@contextlib.asynccontextmanager
async def holding(
    gate: FlowControl, user: UserInfo, request: RequestInfo
) -> AsyncIterator[asyncio.Task[None]]:
    """A request of ``user`` that is admitted (or waits to be) and stays inside the gate until the block
    ends; one still waiting then gives up."""
    entered = asyncio.Event()
    leave = asyncio.Event()

    async def call() -> None:
        async with gate.admit(user, request):
            entered.set()
            await leave.wait()

    task = asyncio.create_task(call())
    await asyncio.sleep(0)
    try:
        yield task
    finally:
        leave.set()
        if not entered.is_set():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_exempt_callers_never_wait() -> None:
    gate = tiny()
    async with contextlib.AsyncExitStack() as stack:
        calls = [await stack.enter_async_context(holding(gate, ADMIN, POD_CREATE)) for _ in range(20)]
        await asyncio.sleep(0)
        assert all(not call.done() for call in calls)
        assert all(level.executing == 0 for level in gate.levels.values())


async def test_lease_and_scheduler_calls_do_not_queue_behind_a_saturated_client_level() -> None:
    gate = tiny(queue_length_limit=2)
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(3):  # one running, two waiting: the client's level is full
            await stack.enter_async_context(holding(gate, ALICE, POD_CREATE))
        with pytest.raises(errors.TooManyRequests, match="'global-default'"):
            async with gate.admit(ALICE, POD_CREATE):
                pass
        async with asyncio.timeout(1):
            async with gate.admit(SCHEDULER, LEASE_UPDATE):
                pass
            async with gate.admit(SCHEDULER, RequestInfo("create", "pods", "binding", "default", "web")):
                pass


async def test_a_second_user_is_served_before_the_first_users_backlog() -> None:
    gate = tiny()
    order: list[str] = []

    async def call(user: UserInfo) -> None:
        async with gate.admit(user, POD_CREATE):
            order.append(user.name)
            await asyncio.sleep(0)

    async with holding(gate, ALICE, POD_CREATE):
        backlog = [asyncio.create_task(call(ALICE)) for _ in range(5)]
        await asyncio.sleep(0)
        late = asyncio.create_task(call(BOB))
        await asyncio.sleep(0)
    await asyncio.gather(*backlog, late)
    assert order.index("bob") == 1


async def test_a_watch_gives_its_seat_back_once_started_and_keeps_streaming() -> None:
    gate = tiny()
    level = gate.levels[GLOBAL_DEFAULT]
    async with gate.admit(ALICE, POD_WATCH):
        assert level.executing == 1
        watch_started()
        assert level.executing == 0
        async with asyncio.timeout(1):  # another call gets the seat while the watch streams
            async with gate.admit(BOB, POD_CREATE):
                pass
        watch_started()  # a second signal gives nothing back twice
        assert level.executing == 0
    assert level.executing == 0


async def test_a_watch_with_nothing_to_send_gives_its_seat_back_after_its_setup_time() -> None:
    gate = tiny(watch_setup_s=0.05)
    level = gate.levels[GLOBAL_DEFAULT]
    async with gate.admit(ALICE, POD_WATCH):
        assert level.executing == 1
        await asyncio.sleep(0.1)
        assert level.executing == 0


async def test_a_watch_that_ends_while_starting_gives_its_seat_back() -> None:
    gate = tiny()
    level = gate.levels[GLOBAL_DEFAULT]
    with pytest.raises(errors.Invalid):
        async with gate.admit(ALICE, POD_WATCH):
            raise errors.Invalid("bad selector")
    assert level.executing == 0


async def test_a_failing_call_gives_its_seat_back() -> None:
    gate = tiny()
    with pytest.raises(errors.NotFound):
        async with gate.admit(ALICE, POD_CREATE):
            raise errors.NotFound("pods \"web\" not found")
    assert gate.levels[GLOBAL_DEFAULT].executing == 0



async def test_a_batch_takes_a_seat_per_item_at_most_its_levels_seats() -> None:
    gate = FlowControl(FlowControlConfig(max_requests_inflight=70, max_mutating_requests_inflight=0),
                       allows=ALLOWS)
    level = gate.levels["global-default"]
    async with gate.admit(ALICE, POD_CREATE, 3):
        assert (level.executing, level.seats_in_use) == (1, 3)
    async with gate.admit(ALICE, POD_CREATE, 1000):
        assert (level.executing, level.seats_in_use) == (1, level.seats)
    assert (level.executing, level.seats_in_use) == (0, 0)
