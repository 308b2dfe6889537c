"""The framework runtime with small fake plugins: building a profile, and each extension point's rules."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from scheduler.clock import FakeClock
from scheduler.config import Profile
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeScore,
    NodeSet,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
)
from scheduler.framework.handle import FrameworkHandle
from scheduler.framework.registry import PluginRef, PluginSet, PointPlugins, Registry
from scheduler.framework.runtime import (
    MAX_PERMIT_TIMEOUT_SECONDS,
    PRE_FILTER_NARROWING_PLUGINS,
    FrameworkError,
    build_framework,
)
from tests.unit.framework_fakes import (
    Binder,
    Capacity,
    NeedsPeer,
    NodeFilter,
    Nominator,
    Scorer,
    Snapshot,
    Sort,
    build,
    fake_handle,
    node,
    pod,
)

NODES = [node("n1"), node("n2"), node("n3")]


def snapshot() -> Snapshot:
    return Snapshot(NODES)


# ------------------------------------------------------------------------------------------ building


class Everything:
    """One plugin at many extension points: built once, found at each."""

    name = "Everything"
    built = 0

    def __init__(self) -> None:
        Everything.built += 1

    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[None, None]:
        return None, None

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 1

    def reserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def make_profile(
    multi_point: Sequence[PluginRef], points: Mapping[str, PointPlugins] | None = None
) -> Profile:
    return Profile("p", PluginSet(PointPlugins(tuple(multi_point)), dict(points or {})), {})


def registry_of(**factories: Any) -> Registry:
    base: dict[str, Any] = {"Sort": lambda a, h: Sort(), "Binder": lambda a, h: Binder()}
    base.update(factories)
    return Registry(base)


def handle() -> FrameworkHandle:
    return fake_handle(snapshot())


BASE = (PluginRef("Sort"), PluginRef("Binder"))


def test_a_plugin_at_several_points_is_built_once_and_found_at_each() -> None:
    Everything.built = 0
    fw = build_framework(
        make_profile((*BASE, PluginRef("Everything", 4))),
        registry_of(Everything=lambda a, h: Everything()),
        handle(),
    )
    assert Everything.built == 1
    for point in ("preFilter", "filter", "score", "reserve"):
        assert fw.plugin_names(point) == ["Everything"], point
    assert fw.plugin_names("postFilter") == []
    assert fw.score_weights == {"Everything": 4}


def filt(name: str) -> Any:
    return lambda a, h: NodeFilter(name)


def test_multi_point_expansion_order_overrides_and_disables_follow_kube_scheduler() -> None:
    reg = registry_of(A=filt("A"), B=filt("B"), C=filt("C"), D=filt("D"))
    multi = (*BASE, PluginRef("A"), PluginRef("B"), PluginRef("C"))
    # filter: D explicitly, then B explicitly (overrides multiPoint's B); C disabled at filter.
    profile = make_profile(
        multi, {"filter": PointPlugins((PluginRef("D"), PluginRef("B")), frozenset({"C"}))}
    )
    fw = build_framework(profile, reg, handle())
    # Overrides first (in this point's order), then multiPoint's, then the rest of this point's.
    assert fw.plugin_names("filter") == ["B", "A", "D"]
    assert fw.plugin_names("preFilter") == ["A", "B", "C"]


def test_star_disabled_at_a_point_keeps_multi_point_plugins_out_of_it() -> None:
    reg = registry_of(A=filt("A"), B=filt("B"))
    profile = make_profile(
        (*BASE, PluginRef("A")), {"filter": PointPlugins((PluginRef("B"),), frozenset({"*"}))}
    )
    fw = build_framework(profile, reg, handle())
    assert fw.plugin_names("filter") == ["B"]
    assert fw.plugin_names("preFilter") == ["A"]


def test_an_explicit_score_weight_wins_over_multi_point_and_unset_means_one() -> None:
    reg = registry_of(S=lambda a, h: Scorer("S", {}), T=lambda a, h: Scorer("T", {}))
    profile = make_profile(
        (*BASE, PluginRef("S", 3), PluginRef("T")), {"score": PointPlugins((PluginRef("S", 7),))}
    )
    fw = build_framework(profile, reg, handle())
    assert fw.score_weights == {"S": 7, "T": 1}
    assert fw.plugin_names("score") == ["S", "T"]


class NotAFilter:
    name = "NotAFilter"

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 0


class Named:
    name = "SomethingElse"

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class ReserveOnly:
    name = "ReserveOnly"

    def reserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def _boom(args: Any, handle: Any) -> Any:
    raise RuntimeError("no GPU inventory")


BUILD_ERRORS = [
    (
        "enabled-at-a-point-it-does-not-implement",
        make_profile(BASE, {"filter": PointPlugins((PluginRef("NotAFilter"),))}),
        'profile "p": plugin "NotAFilter" is enabled at filter but does not implement it (no filter method)',
    ),
    (
        "no-queue-sort",
        make_profile((PluginRef("Binder"),)),
        "exactly one queueSort plugin is required, got 0",
    ),
    (
        "two-queue-sorts",
        make_profile((*BASE, PluginRef("Sort2"))),
        "exactly one queueSort plugin is required, got 2",
    ),
    ("no-binder", make_profile((PluginRef("Sort"),)), "at least one bind plugin is required"),
    (
        "factory-fails",
        make_profile((*BASE, PluginRef("Boom"))),
        'initializing plugin "Boom" (tests.unit.test_framework_runtime:_boom): no GPU inventory',
    ),
    (
        "name-mismatch",
        make_profile((*BASE, PluginRef("Named"))),
        "plugin registered as \"Named\" calls itself 'SomethingElse'",
    ),
    (
        "reserve-without-unreserve",
        make_profile((*BASE, PluginRef("ReserveOnly"))),
        'plugin "ReserveOnly" implements reserve but not unreserve',
    ),
    ("not-registered", make_profile((*BASE, PluginRef("Ghost"))), 'no plugin "Ghost" is registered'),
    (
        "cannot-import",
        make_profile((*BASE, PluginRef("Missing"))),
        'plugin "Missing": cannot import no_such_package.plugin',
    ),
]


@pytest.mark.parametrize(
    ("profile", "message"), [c[1:] for c in BUILD_ERRORS], ids=[c[0] for c in BUILD_ERRORS]
)
def test_a_profile_that_cannot_be_built_says_why(profile: Profile, message: str) -> None:
    reg = registry_of(
        NotAFilter=lambda a, h: NotAFilter(),
        Sort2=lambda a, h: _Sort2(),
        Boom=_boom,
        Named=lambda a, h: Named(),
        ReserveOnly=lambda a, h: ReserveOnly(),
        Missing="no_such_package.plugin",
    )
    with pytest.raises(FrameworkError, match=r'^profile "p": ') as caught:
        build_framework(profile, reg, handle())
    assert message in str(caught.value)


class _Sort2(Sort):
    name = "Sort2"


def test_factories_get_their_args_and_the_handle() -> None:
    seen: list[tuple[Any, Any]] = []

    def factory(args: Any, h: Any) -> NodeFilter:
        seen.append((args, h))
        return NodeFilter("WithArgs")

    h = handle()
    profile = Profile(
        "p", PluginSet(PointPlugins((*BASE, PluginRef("WithArgs"))), {}), {"WithArgs": {"x": 1}}
    )
    build_framework(profile, registry_of(WithArgs=factory), h)
    assert seen == [({"x": 1}, h)]


def test_queue_sort_and_events_to_register() -> None:
    declared = [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

    class Declares(NodeFilter):
        def events_to_register(self) -> list[ClusterEventWithHint]:
            return declared

    fw = build(Declares("Declares"), NodeFilter("Silent"), Scorer("ScoreOnly", {}))
    events = fw.events_to_register()
    assert events["Declares"] == declared
    # A plugin that can reject but declares nothing is requeued by every event (fail open).
    assert events["Silent"] == [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))]
    # Score plugins cannot reject a pod: they register nothing.
    assert set(events) == {"Declares", "Silent"}
    high = QueuedPodInfo(pod("high", priority=10), timestamp=0)
    low = QueuedPodInfo(pod("low", priority=1), timestamp=0)
    assert fw.queue_sort_less(high, low) and not fw.queue_sort_less(low, high)


def test_the_handle_serves_what_it_was_given_and_runs_its_own_profiles_filters() -> None:
    snap, nominator = snapshot(), Nominator()
    h = fake_handle(snap, nominator=nominator, client="client")
    assert h.snapshot() is snap and h.nominator is nominator and h.client == "client"
    with pytest.raises(RuntimeError, match="still being built"):
        h.run_filter_with_nominated_pods(CycleState(), pod("p"), node("n1"))
    profile = Profile("p", PluginSet(PointPlugins((*BASE, PluginRef("NotN1"))), {}), {})
    registry = registry_of(NotN1=lambda a, h: NodeFilter("NotN1", {"n1": Status.unschedulable("no")}))
    fw = build_framework(profile, registry, h)
    assert fw.handle is h and fw.waiting_pods is h.waiting_pods
    rejection = h.run_filter_with_nominated_pods(CycleState(), pod("p"), node("n1"))
    assert rejection is not None and rejection.plugin == "NotN1"
    assert h.run_filter_with_nominated_pods(CycleState(), pod("p"), node("n2")) is None
    # A handle serves one profile: a second framework needs its own.
    with pytest.raises(ValueError, match="each profile needs its own handle"):
        build_framework(profile, registry, h)


# ------------------------------------------------------------------------------------------ PreFilter


def names(*items: str) -> PreFilterResult:
    return PreFilterResult(frozenset(items))


def test_pre_filter_results_intersect() -> None:
    fw = build(
        NodeFilter("A", result=names("n1", "n2")),
        NodeFilter("B"),
        NodeFilter("C", result=names("n2", "n3")),
        snapshot=snapshot(),
    )
    state = CycleState()
    result, status = fw.run_pre_filter(state, pod("p"))
    assert status is None and result == names("n2")
    assert state.read(PRE_FILTER_NARROWING_PLUGINS) == frozenset({"A", "C"})


@pytest.mark.parametrize(
    ("results", "message", "blamed"),
    [
        ({"A": names()}, "node(s) didn't satisfy plugin A", "A"),
        ({"A": names("n1"), "B": names("n2")}, "node(s) didn't satisfy plugin(s) [A B] simultaneously", "B"),
    ],
    ids=["one-plugin-empty", "two-plugins-disjoint"],
)
def test_an_empty_intersection_rejects_the_pod_everywhere(
    results: dict[str, PreFilterResult], message: str, blamed: str
) -> None:
    fw = build(*(NodeFilter(name, result=result) for name, result in results.items()), snapshot=snapshot())
    _, status = fw.run_pre_filter(CycleState(), pod("p"))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), plugin=blamed)


def test_pre_filter_skip_skips_the_plugins_filter_for_the_cycle() -> None:
    skipper = NodeFilter("Skipper", reject={"n1": Status.unschedulable("no")}, pre_status=Status.skip())
    fw = build(skipper, snapshot=snapshot())
    state = CycleState()
    assert fw.run_pre_filter(state, pod("p")) == (None, None)
    assert state.skip_filter_plugins == {"Skipper"}
    assert fw.run_filter(state, pod("p"), NODES[0]) is None
    assert skipper.filtered == []


def test_unresolvable_pre_filter_stops_at_once_but_unschedulable_lets_the_others_run() -> None:
    first = NodeFilter("First", pre_status=Status.unschedulable("wait for room"))
    second = NodeFilter("Second")
    fw = build(first, second, snapshot=snapshot())
    _, status = fw.run_pre_filter(CycleState(), pod("p"))
    assert status == Status(Code.UNSCHEDULABLE, ("wait for room",), plugin="First")
    assert second.pre_filter_calls == 1

    first = NodeFilter("First", pre_status=Status.unresolvable("never"))
    second = NodeFilter("Second")
    fw = build(first, second, snapshot=snapshot())
    _, status = fw.run_pre_filter(CycleState(), pod("p"))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("never",), plugin="First")
    assert second.pre_filter_calls == 0


class Raises(NodeFilter):
    def pre_filter(self, *args: Any) -> Any:
        raise ValueError("bad state")

    def filter(self, *args: Any) -> Any:
        raise ValueError("bad node")


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (NodeFilter("Odd", pre_status=Status.wait("?")), 'running PreFilter plugin "Odd": ?'),
        (Raises("Odd"), 'running PreFilter plugin "Odd": bad state'),
    ],
    ids=["unexpected-code", "exception"],
)
def test_pre_filter_errors_carry_the_plugin(plugin: NodeFilter, message: str) -> None:
    fw = build(plugin, snapshot=snapshot())
    _, status = fw.run_pre_filter(CycleState(), pod("p"))
    assert status is not None and status.code is Code.ERROR
    assert (status.plugin, status.message()) == ("Odd", message)


# ------------------------------------------------------------------------------------------- Filter


def test_filter_stops_at_the_first_rejection_and_names_the_plugin() -> None:
    first = NodeFilter(
        "First", reject={"n1": Status.unresolvable("node(s) didn't match the requested node name")}
    )
    second = NodeFilter(
        "Second", reject={"n1": Status.unschedulable("x"), "n2": Status.unschedulable("Too many pods")}
    )
    fw = build(first, second)
    state = CycleState()
    assert fw.run_filter(state, pod("p"), NODES[0]) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",), plugin="First"
    )
    assert second.filtered == []
    assert fw.run_filter(state, pod("p"), NODES[1]) == Status(
        Code.UNSCHEDULABLE, ("Too many pods",), plugin="Second"
    )
    assert fw.run_filter(state, pod("p"), NODES[2]) is None


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (NodeFilter("Odd", reject={"n1": Status.skip()}), 'running "Odd" filter plugin: '),
        (Raises("Odd"), 'running "Odd" filter plugin: bad node'),
    ],
    ids=["skip-is-not-a-filter-answer", "exception"],
)
def test_filter_errors_carry_the_plugin(plugin: NodeFilter, message: str) -> None:
    status = build(plugin).run_filter(CycleState(), pod("p"), NODES[0])
    assert status is not None and status.code is Code.ERROR
    assert (status.plugin, status.message()) == ("Odd", message)


# ----------------------------------------------------------------------------- nominated pods, 2 passes


def peer(name: str, priority: int) -> PodInfo:
    return pod(name, priority=priority, labels={"app": "peer"})


NOMINATED_CASES = [
    # (id, plugins, nominated to n1, expected status, Capacity.add_pod calls)
    ("no-nominated-pods", lambda: [Capacity(1)], [], None, []),
    (
        "higher-priority-nominee-takes-the-room",
        lambda: [Capacity(1)],
        [pod("big", priority=10)],
        Status(Code.UNSCHEDULABLE, ("Too many pods",), plugin="Capacity"),
        [("default/big", "n1")],
    ),
    (
        "equal-priority-nominee-takes-the-room",
        lambda: [Capacity(1)],
        [pod("same", priority=5)],
        Status(Code.UNSCHEDULABLE, ("Too many pods",), plugin="Capacity"),
        [("default/same", "n1")],
    ),
    ("lower-priority-nominee-is-ignored", lambda: [Capacity(1)], [pod("small", priority=1)], None, []),
    ("the-pod-itself-is-ignored", lambda: [Capacity(1)], [pod("p", priority=5)], None, []),
    (
        "affinity-on-a-nominee-does-not-count",
        lambda: [Capacity(5), NeedsPeer()],
        [peer("peer", 10)],
        Status(Code.UNSCHEDULABLE, ("node(s) didn't match pod affinity rules",), plugin="NeedsPeer"),
        [("default/peer", "n1")],
    ),
]


@pytest.mark.parametrize(
    ("plugins", "nominated", "expected", "added"),
    [c[1:] for c in NOMINATED_CASES],
    ids=[c[0] for c in NOMINATED_CASES],
)
def test_filter_with_nominated_pods_passes_only_if_both_passes_pass(
    plugins: Any, nominated: list[PodInfo], expected: Status | None, added: list[tuple[str, str]]
) -> None:
    built = plugins()
    target = node("n1")
    fw = build(*built, nominator=Nominator({"n1": nominated}), snapshot=Snapshot([target]))
    state = CycleState()
    incoming = pod("p", priority=5)
    fw.run_pre_filter(state, incoming)
    assert fw.run_filter_with_nominated_pods(state, incoming, target) == expected
    assert built[0].added == added
    # The nominated pods were added to copies: the cycle's node and state are untouched.
    assert target.pods == {} and state.read(Capacity.KEY) == 0


def test_a_nominee_passing_both_passes_fits() -> None:
    target = node("n1")
    fw = build(
        Capacity(2), nominator=Nominator({"n1": [pod("big", priority=10)]}), snapshot=Snapshot([target])
    )
    state = CycleState()
    fw.run_pre_filter(state, pod("p"))
    assert fw.run_filter_with_nominated_pods(state, pod("p"), target) is None


class FailingAddPod(Capacity):
    def add_pod(self, *args: Any) -> Status | None:
        return Status.as_error("lost track")


def test_a_failing_add_pod_is_an_error() -> None:
    fw = build(FailingAddPod(3), nominator=Nominator({"n1": [pod("big", priority=10)]}), snapshot=snapshot())
    state = CycleState()
    fw.run_pre_filter(state, pod("p"))
    status = fw.run_filter_with_nominated_pods(state, pod("p"), NODES[0])
    assert status is not None and status.code is Code.ERROR
    assert status.message() == 'running AddPod on PreFilter plugin "Capacity": lost track'


def test_remove_pod_extension_updates_the_state() -> None:
    capacity = Capacity(3)
    fw = build(capacity, snapshot=snapshot())
    state = CycleState()
    fw.run_pre_filter(state, pod("p"))
    assert fw.run_pre_filter_extension_remove_pod(state, pod("p"), pod("victim"), NODES[0]) is None
    assert state.read(Capacity.KEY) == -1


# -------------------------------------------------------------------------------------------- Score


def scale_to_100(scores: list[NodeScore]) -> None:
    top = max(s.score for s in scores) or 1
    scores[:] = [NodeScore(s.name, s.score * 100 // top) for s in scores]


def test_scores_are_normalized_weighted_and_summed() -> None:
    fw = build(
        Scorer("Raw", {"n1": 10, "n2": 50, "n3": 100}),
        Scorer("Scaled", {"n1": 4, "n2": 2, "n3": 0}, normalize=scale_to_100),
        weights={"Raw": 2, "Scaled": 3},
    )
    state = CycleState()
    assert fw.run_pre_score(state, pod("p"), NODES) is None
    result, status = fw.run_score(state, pod("p"), NodeSet(NODES))
    assert status is None and result is not None
    assert result.names == ["n1", "n2", "n3"]
    assert result.totals == [10 * 2 + 100 * 3, 50 * 2 + 50 * 3, 100 * 2]
    assert result.per_plugin["Scaled"] == [100, 50, 0]
    assert result.weights == {"Raw": 2, "Scaled": 3}


class PlainScaler(Scorer):
    """NormalizeScore over plain ints (``normalize_scores``), which the framework prefers."""

    def normalize_scores(self, state: CycleState, pod: Any, scores: list[int]) -> Status | None:
        top = max(scores) or 1
        scores[:] = [s * 100 // top for s in scores]
        return None


def test_plain_int_normalize_is_preferred_and_means_the_same() -> None:
    fw = build(PlainScaler("Scaled", {"n1": 4, "n2": 2, "n3": 0}, normalize=lambda s: Status.as_error("no")))
    result, status = fw.run_score(CycleState(), pod("p"), NodeSet(NODES))
    assert status is None and result is not None
    assert result.per_plugin["Scaled"] == result.totals == [100, 50, 0]


def test_pre_score_skip_leaves_the_plugin_out_of_scoring() -> None:
    skipped = Scorer("Skipped", {"n1": 100}, pre_status=Status.skip())
    fw = build(skipped, Scorer("Kept", {"n1": 7}))
    state = CycleState()
    assert fw.run_pre_score(state, pod("p"), NODES) is None
    assert state.skip_score_plugins == {"Skipped"}
    result, _ = fw.run_score(state, pod("p"), NodeSet(NODES[:1]))
    assert result is not None and (result.names, result.totals) == (["n1"], [7]) and skipped.scored == []


class ScoreRaises(Scorer):
    def score(self, *args: Any) -> int:
        raise ValueError("cannot read topology")


SCORE_ERRORS = [
    (
        "out-of-range-after-normalize",
        Scorer("Big", {"n1": 101}),
        'plugin "Big" returns an invalid score 101, it should in the range of [0, 100] after normalizing',
    ),
    (
        "negative",
        Scorer("Big", {"n1": -1}),
        'plugin "Big" returns an invalid score -1, it should in the range of [0, 100] after normalizing',
    ),
    (
        "score-raises",
        ScoreRaises("Big", {}),
        'running Score plugins: plugin "Big" failed with: cannot read topology',
    ),
    (
        "normalize-fails",
        Scorer("Big", {}, normalize=lambda s: Status.as_error("division by zero")),
        'running Normalize on Score plugins: plugin "Big" failed with: division by zero',
    ),
    (
        "normalize-drops-nodes",
        Scorer("Big", {}, normalize=lambda s: s.clear()),
        'running Normalize on Score plugins: plugin "Big" failed with: 0 scores for 3 nodes',
    ),
]


@pytest.mark.parametrize(
    ("plugin", "message"), [c[1:] for c in SCORE_ERRORS], ids=[c[0] for c in SCORE_ERRORS]
)
def test_score_errors(plugin: Scorer, message: str) -> None:
    result, status = build(plugin).run_score(CycleState(), pod("p"), NodeSet(NODES))
    assert result is None and status is not None
    assert (status.code, status.plugin, status.message()) == (Code.ERROR, "Big", message)


def test_pre_score_rejection_is_an_error() -> None:
    fw = build(Scorer("Picky", {}, pre_status=Status.unschedulable("no")))
    status = fw.run_pre_score(CycleState(), pod("p"), NODES)
    assert status == Status(Code.ERROR, ('running PreScore plugin "Picky": no',), plugin="Picky")


# ---------------------------------------------------------------------------------- Reserve / Permit


class Reserver:
    def __init__(self, name: str, log: list[str], status: Status | None = None) -> None:
        self.name = name
        self.log = log
        self.status = status

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        self.log.append(f"reserve {self.name}")
        return self.status

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        self.log.append(f"unreserve {self.name}")
        if self.name == "B":
            raise RuntimeError("must not stop the others")


def test_reserve_in_order_unreserve_in_reverse() -> None:
    log: list[str] = []
    fw = build(
        Reserver("A", log),
        Reserver("B", log),
        Reserver("C", log, Status.unschedulable("volume busy")),
        Reserver("D", log),
    )
    status = fw.run_reserve(CycleState(), pod("p"), "n1")
    assert status == Status(Code.UNSCHEDULABLE, ("volume busy",), plugin="C")
    fw.run_unreserve(CycleState(), pod("p"), "n1")
    assert log == [
        "reserve A",
        "reserve B",
        "reserve C",
        "unreserve D",
        "unreserve C",
        "unreserve B",
        "unreserve A",
    ]


class Permitter:
    def __init__(self, name: str, status: Status | None, timeout: float = 0.0) -> None:
        self.name = name
        self.status = status
        self.timeout = timeout

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        return self.status, self.timeout


def test_permit_allows_or_rejects_at_once() -> None:
    assert build(Permitter("Yes", None)).run_permit(CycleState(), pod("p"), "n1") is None
    fw = build(Permitter("Yes", None), Permitter("No", Status.unschedulable("quota")))
    assert fw.run_permit(CycleState(), pod("p"), "n1") == Status(Code.UNSCHEDULABLE, ("quota",), plugin="No")
    fw = build(Permitter("Odd", Status.skip()))
    status = fw.run_permit(CycleState(), pod("p"), "n1")
    assert status is not None and status.code is Code.ERROR and status.plugin == "Odd"


async def test_a_waiting_pod_binds_once_every_waiting_plugin_allows_it() -> None:
    clock = FakeClock()
    fw = build(Permitter("Gang", Status.wait(), 30), Permitter("Quota", Status.wait(), 60), clock=clock)
    incoming = pod("p")
    status = fw.run_permit(CycleState(), incoming, "n1")
    assert status == Status(Code.WAIT, ('one or more plugins asked to wait and no plugin rejected pod "p"',))
    waiting = fw.waiting_pods.get(incoming.key)
    assert waiting is not None and sorted(waiting.pending_plugins()) == ["Gang", "Quota"]
    task = asyncio.create_task(fw.wait_on_permit(incoming))
    await asyncio.sleep(0)
    waiting.allow("Gang")
    await asyncio.sleep(0)
    assert not task.done()
    waiting.allow("Quota")
    assert await task is None
    assert fw.waiting_pods.get(incoming.key) is None


async def test_a_waiting_pod_can_be_rejected() -> None:
    fw = build(Permitter("Gang", Status.wait(), 30), clock=FakeClock())
    incoming = pod("p")
    fw.run_permit(CycleState(), incoming, "n1")
    task = asyncio.create_task(fw.wait_on_permit(incoming))
    await asyncio.sleep(0)
    assert fw.waiting_pods.reject(incoming.key, "Gang", "gang incomplete")
    assert await task == Status(Code.UNSCHEDULABLE, ("gang incomplete",), plugin="Gang")
    assert not fw.waiting_pods.reject(incoming.key)


async def test_a_waiting_pod_times_out_at_its_earliest_pending_plugin() -> None:
    clock = FakeClock()
    fw = build(Permitter("Slow", Status.wait(), 60), Permitter("Fast", Status.wait(), 10), clock=clock)
    incoming = pod("p")
    fw.run_permit(CycleState(), incoming, "n1")
    task = asyncio.create_task(fw.wait_on_permit(incoming))
    await asyncio.sleep(0)
    clock.advance(9)
    await asyncio.sleep(0)
    assert not task.done()
    clock.advance(1)
    assert await task == Status(
        Code.UNSCHEDULABLE, ("rejected due to timeout after waiting 10s at plugin Fast",), plugin="Fast"
    )


async def test_allowing_a_plugin_removes_its_timeout() -> None:
    clock = FakeClock()
    fw = build(Permitter("Slow", Status.wait(), 60), Permitter("Fast", Status.wait(), 10), clock=clock)
    incoming = pod("p")
    fw.run_permit(CycleState(), incoming, "n1")
    task = asyncio.create_task(fw.wait_on_permit(incoming))
    await asyncio.sleep(0)
    waiting = fw.waiting_pods.get(incoming.key)
    assert waiting is not None
    waiting.allow("Fast")
    for _ in range(3):
        await asyncio.sleep(0)
    clock.advance(30)
    await asyncio.sleep(0)
    assert not task.done()
    clock.advance(30)
    status = await task
    assert status is not None and status.plugin == "Slow"


def test_permit_timeouts_are_capped_at_fifteen_minutes() -> None:
    fw = build(Permitter("Forever", Status.wait(), 3600), clock=FakeClock())
    fw.run_permit(CycleState(), pod("p"), "n1")
    waiting = fw.waiting_pods.get("default/p")
    assert waiting is not None and waiting._next_deadline() == ("Forever", MAX_PERMIT_TIMEOUT_SECONDS)


async def test_wait_on_permit_of_a_pod_that_never_waited_is_immediate() -> None:
    assert await build().wait_on_permit(pod("p")) is None


# --------------------------------------------------------------------------- PreBind / Bind / PostBind


class PreBinder:
    def __init__(self, name: str, status: Status | None) -> None:
        self.name = name
        self.status = status

    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        return self.status


BIND_CASES = [
    (
        "first-non-skip-binds",
        [Binder("Skip1", Status.skip()), Binder("Real"), Binder("Never")],
        None,
        ["Real"],
    ),
    (
        "all-skip",
        [Binder("Skip1", Status.skip()), Binder("Skip2", Status.skip())],
        Status(Code.SKIP, plugin="Skip2"),
        [],
    ),
    (
        "rejection",
        [Binder("No", Status.unschedulable("node gone"))],
        Status(Code.UNSCHEDULABLE, ("node gone",), plugin="No"),
        [],
    ),
    (
        "error",
        [Binder("Broken", Status.as_error("conflict"))],
        Status(Code.ERROR, ('running Bind plugin "Broken": conflict',), plugin="Broken"),
        [],
    ),
]


@pytest.mark.parametrize(
    ("binders", "expected", "bound_by"), [c[1:] for c in BIND_CASES], ids=[c[0] for c in BIND_CASES]
)
async def test_bind(binders: list[Binder], expected: Status | None, bound_by: list[str]) -> None:
    fw = build(*binders, points={"bind": [b.name for b in binders]})
    assert await fw.run_bind(CycleState(), pod("p"), "n1") == expected
    assert [b.name for b in binders if b.bound and b.status is None] == bound_by


async def test_pre_bind_and_post_bind() -> None:
    fw = build(PreBinder("Volumes", None), PreBinder("Claims", Status.unschedulable("claim lost")))
    assert await fw.run_pre_bind(CycleState(), pod("p"), "n1") == Status(
        Code.UNSCHEDULABLE, ("claim lost",), plugin="Claims"
    )
    done: list[str] = []

    class Notes:
        name = "Notes"

        def post_bind(self, state: Any, p: PodInfo, node_name: str) -> None:
            done.append(node_name)
            raise RuntimeError("ignored: the pod is bound")

    build(Notes()).run_post_bind(CycleState(), pod("p"), "n1")
    assert done == ["n1"]


# ---------------------------------------------------------------------------------------- PostFilter


class Preempter:
    def __init__(self, name: str, status: Status | None, node: str | None = "") -> None:
        self.name = name
        self.status = status
        self.node = node
        self.called = False

    async def post_filter(
        self, state: Any, pod: Any, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        self.called = True
        return (None if self.node is None else PostFilterResult(self.node)), self.status


async def test_post_filter_first_success_wins() -> None:
    later = Preempter("Later", None, "n3")
    fw = build(Preempter("No", Status.unschedulable("no victims")), Preempter("Yes", None, "n2"), later)
    result, status = await fw.run_post_filter(CycleState(), pod("p"), {})
    assert status is None and result == PostFilterResult("n2") and not later.called


@pytest.mark.parametrize(
    ("a_node", "b_node", "expected"),
    [
        # No candidate anywhere: the empty nomination is returned so the failure handler clears a stale
        # one (kube's ModeOverride with ""), not dropped as if nobody had an opinion.
        ("", "", PostFilterResult("")),
        ("", None, PostFilterResult("")),
        # None is kube's ModeNoop (e.g. the pod may not preempt): the nomination stays as it is.
        (None, None, None),
        # A later plugin's result overrides an earlier one, as in kube's RunPostFilterPlugins.
        ("n1", "", PostFilterResult("")),
    ],
    ids=["both-clear", "clear-then-noop", "both-noop", "later-overrides"],
)
async def test_post_filter_failures_combine_their_reasons_and_blame_the_first(
    a_node: str | None, b_node: str | None, expected: PostFilterResult | None
) -> None:
    fw = build(
        Preempter("A", Status.unschedulable("a says no"), a_node),
        Preempter("B", Status.unschedulable("b says no"), b_node),
    )
    result, status = await fw.run_post_filter(CycleState(), pod("p"), {})
    assert result == expected
    assert status == Status(Code.UNSCHEDULABLE, ("a says no", "b says no"), plugin="A")


async def test_post_filter_unresolvable_and_errors_stop_at_once() -> None:
    later = Preempter("Later", None, "n3")
    fw = build(Preempter("Hopeless", Status.unresolvable("nothing to do")), later)
    _, status = await fw.run_post_filter(CycleState(), pod("p"), {})
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("nothing to do",), plugin="Hopeless")
    fw = build(Preempter("Broken", Status.as_error("api down")), later)
    result, status = await fw.run_post_filter(CycleState(), pod("p"), {})
    assert result is None and status is not None and status.code is Code.ERROR and status.plugin == "Broken"
    assert not later.called
