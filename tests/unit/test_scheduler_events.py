"""The event recorder: aggregation of repeats, bounds, failures, never blocking the caller."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from cluster.api import errors, objects_pb2
from cluster.client import Fence
from scheduler.clock import FakeClock
from scheduler.events import NOTE_LENGTH_LIMIT, WARNING, EventRecorder, truncate_message


class FakeEventsApi:
    """Stands in for the client's create/update of Events; ``gate`` holds writes until set."""

    def __init__(self) -> None:
        self.objects: dict[str, objects_pb2.Event] = {}
        self.creates = 0
        self.updates = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail_with: errors.ApiError | None = None
        #: The fence of every write, in order (None: unfenced).
        self.fences: list[Fence | None] = []
        #: The names of the events of each create_many call.
        self.batches: list[list[str]] = []
        self._rv = 0

    async def create(self, event: objects_pb2.Event, *, fence: Fence | None = None) -> objects_pb2.Event:
        await self.gate.wait()
        self.fences.append(fence)
        if self.fail_with is not None:
            raise self.fail_with
        self.creates += 1
        return self._store(event)

    async def create_many(
        self, events: list[objects_pb2.Event], *, fence: Fence | None = None
    ) -> list[objects_pb2.Event | errors.ApiError]:
        """As the client's: each event created on its own, its object or its error."""
        self.batches.append([event.metadata.name for event in events])
        results: list[objects_pb2.Event | errors.ApiError] = []
        for event in events:
            try:
                results.append(await self.create(event, fence=fence))
            except errors.ApiError as err:
                results.append(err)
        return results

    async def update(self, event: objects_pb2.Event, *, fence: Fence | None = None) -> objects_pb2.Event:
        await self.gate.wait()
        self.fences.append(fence)
        current = self.objects.get(event.metadata.name)
        if current is None:
            raise errors.NotFound(f'events "{event.metadata.name}" not found')
        if event.metadata.resource_version != current.metadata.resource_version:
            raise errors.Conflict("the object has been modified")
        self.updates += 1
        return self._store(event)

    def _store(self, event: objects_pb2.Event) -> objects_pb2.Event:
        self._rv += 1
        stored = objects_pb2.Event()
        stored.CopyFrom(event)
        stored.metadata.resource_version = str(self._rv)
        self.objects[stored.metadata.name] = stored
        return stored


def pod(name: str = "web", namespace: str = "default") -> objects_pb2.Pod:
    return objects_pb2.Pod(
        api_version="v1", kind="Pod",
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace, uid=f"uid-{name}"),
    )


async def settle(recorder: EventRecorder) -> None:
    for _ in range(200):
        if recorder.idle():
            return
        await asyncio.sleep(0)
    raise AssertionError("the recorder did not settle")


async def taken(recorder: EventRecorder) -> None:
    """Wait until a writer has taken every pending event."""
    for _ in range(200):
        if not recorder.pending():
            return
        await asyncio.sleep(0)
    raise AssertionError("no writer took the pending events")


@pytest.fixture
def api() -> FakeEventsApi:
    return FakeEventsApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def running(api: FakeEventsApi, clock: FakeClock) -> AsyncIterator[EventRecorder]:
    recorder = EventRecorder(api, clock=clock, max_pending=3, correlation_window_s=600)  # type: ignore[arg-type]
    task = asyncio.create_task(recorder.run())
    try:
        yield recorder
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def record_failed(recorder: EventRecorder, target: objects_pb2.Pod, message: str = "0/2 nodes are available",
                  explanation: str = "{}") -> None:
    recorder.record(target, WARNING, "FailedScheduling", "Scheduling", message,
                    component="default-scheduler", annotations={"podsched.io/explanation": explanation})


async def test_an_event_is_written_with_kubernetes_fields(running: EventRecorder, api: FakeEventsApi) -> None:
    record_failed(running, pod())
    await settle(running)
    (event,) = api.objects.values()
    assert event.metadata.name.startswith("web.")
    assert event.metadata.namespace == "default"
    assert (event.involved_object.kind, event.involved_object.name, event.involved_object.uid) == (
        "Pod", "web", "uid-web")
    assert (event.type, event.reason, event.action, event.count) == (
        "Warning", "FailedScheduling", "Scheduling", 1)
    assert event.source.component == event.reporting_component == "default-scheduler"
    assert event.first_timestamp == event.last_timestamp and event.first_timestamp.seconds > 0
    assert event.metadata.annotations["podsched.io/explanation"] == "{}"


async def test_an_event_carries_its_event_time_for_events_k8s_io(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    # kube-scheduler records through events.k8s.io, whose eventTime is required: the Python client's
    # EventsV1Event refuses an Event without one.
    record_failed(running, pod())
    await settle(running)
    (event,) = api.objects.values()
    assert event.HasField("event_time") and event.event_time == event.first_timestamp


async def test_repeats_update_one_event_with_the_latest_annotations(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    for attempt in range(5):
        record_failed(running, pod(), explanation=f'{{"attempt": {attempt}}}')
        await settle(running)
    (event,) = api.objects.values()
    assert event.count == 5
    assert (api.creates, api.updates) == (1, 4)
    assert event.metadata.annotations["podsched.io/explanation"] == '{"attempt": 4}'


async def test_repeats_waiting_to_be_written_coalesce(running: EventRecorder, api: FakeEventsApi) -> None:
    api.gate.clear()
    for _ in range(1000):
        record_failed(running, pod())
    assert running.pending() <= 1
    api.gate.set()
    await settle(running)
    assert sum(e.count for e in api.objects.values()) == 1000
    assert api.creates + api.updates <= 2
    assert running.dropped == 0


@pytest.mark.parametrize(
    ("second", "events"),
    [
        (dict(message="0/3 nodes are available"), 2),
        (dict(target=pod("other")), 2),
        (dict(), 1),
    ],
    ids=["other-message", "other-object", "identical"],
)
async def test_identity_is_object_and_message(
    running: EventRecorder, api: FakeEventsApi, second: dict, events: int
) -> None:
    record_failed(running, pod())
    await settle(running)
    record_failed(running, second.get("target", pod()), second.get("message", "0/2 nodes are available"))
    await settle(running)
    assert len(api.objects) == events


async def test_a_repeat_after_the_window_starts_a_new_event(
    running: EventRecorder, api: FakeEventsApi, clock: FakeClock
) -> None:
    record_failed(running, pod())
    await settle(running)
    clock.advance(601)
    record_failed(running, pod())
    await settle(running)
    assert sorted(e.count for e in api.objects.values()) == [1, 1]


async def test_a_deleted_event_is_created_again(running: EventRecorder, api: FakeEventsApi) -> None:
    record_failed(running, pod())
    await settle(running)
    api.objects.clear()
    record_failed(running, pod())
    await settle(running)
    (event,) = api.objects.values()
    assert event.count == 1


async def test_distinct_events_beyond_the_bound_are_dropped(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    api.gate.clear()
    for i in range(10):
        record_failed(running, pod(f"p{i}"))
    # max_pending=3 waiting, plus what the workers took before blocking on the gate.
    assert running.pending() <= 3
    written_at_most = 3 + 4
    assert running.dropped >= 10 - written_at_most
    api.gate.set()
    await settle(running)
    assert len(api.objects) == 10 - running.dropped


async def test_record_never_blocks_even_when_writes_hang(running: EventRecorder, api: FakeEventsApi) -> None:
    api.gate.clear()
    loop = asyncio.get_running_loop()
    began = loop.time()
    for i in range(10_000):
        record_failed(running, pod(f"p{i % 50}"))
    assert loop.time() - began < 2.0
    assert not running.idle()


async def test_failed_writes_are_counted_and_dropped(running: EventRecorder, api: FakeEventsApi) -> None:
    api.fail_with = errors.Unavailable("no API server")
    record_failed(running, pod())
    await settle(running)
    assert (running.failed, running.written, len(api.objects)) == (1, 0, 0)


def test_long_messages_are_truncated_as_kubernetes_does() -> None:
    text = truncate_message("x" * 5000)
    assert len(text) == NOTE_LENGTH_LIMIT and text.endswith(" ...")
    assert truncate_message("short") == "short"


async def test_long_pod_names_make_valid_event_names(running: EventRecorder, api: FakeEventsApi) -> None:
    record_failed(running, pod("a" * 253))
    await settle(running)
    (event,) = api.objects.values()
    assert len(event.metadata.name) <= 253


def term(token: int, holder: str = "replica-a") -> Fence:
    return Fence("kube-system", "kube-scheduler", holder, token)


async def test_events_of_a_term_are_written_under_its_fence(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    running.begin_term(term(7))
    record_failed(running, pod())
    await settle(running)
    record_failed(running, pod())
    await settle(running)
    assert (api.creates, api.updates) == (1, 1)
    assert api.fences == [term(7), term(7)]


async def test_a_finished_terms_waiting_events_are_dropped_not_written_under_the_next(
    api: FakeEventsApi, clock: FakeClock
) -> None:
    # One event per write, so that two of the term's events are still waiting when it ends.
    recorder = EventRecorder(api, clock=clock, workers=1, batch_size=1)  # type: ignore[arg-type]
    task = asyncio.create_task(recorder.run())
    try:
        api.gate.clear()
        recorder.begin_term(term(7))
        for name in ("first", "second", "third"):
            record_failed(recorder, pod(name))
        for _ in range(20):  # the one worker takes "first" and waits on the gate
            if recorder.pending() == 2:
                break
            await asyncio.sleep(0)
        assert recorder.pending() == 2
        recorder.end_term(term(7))
        assert (recorder.pending(), recorder.discarded) == (0, 2)
        record_failed(recorder, pod("between-terms"))  # no term to write it under
        assert (recorder.pending(), recorder.discarded) == (0, 3)

        recorder.begin_term(term(9, "replica-b"))
        record_failed(recorder, pod("next"))
        api.gate.set()
        await settle(recorder)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # The write in flight when the term ended went out under its own fence (the server refuses it if the
    # lease has changed hands); nothing of that term went out under the next term's fence.
    written = {event.involved_object.name: fence for event, fence in zip(api.objects.values(), api.fences,
                                                                          strict=True)}
    assert written == {"first": term(7), "next": term(9, "replica-b")}


async def test_without_terms_events_are_written_unfenced(running: EventRecorder, api: FakeEventsApi) -> None:
    record_failed(running, pod())
    await settle(running)
    assert api.fences == [None]


async def test_annotations_given_as_a_function_are_made_once_when_the_event_is_written(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    made: list[int] = []

    def annotations(attempt: int) -> Callable[[], dict[str, str]]:
        def make() -> dict[str, str]:
            made.append(attempt)
            return {"podsched.io/explanation": f'{{"attempt": {attempt}}}'}
        return make

    api.gate.clear()  # the first write waits, so the next two repeats coalesce before they are written
    for attempt in range(3):
        running.record(pod(), WARNING, "FailedScheduling", "Scheduling", "0/2 nodes are available",
                       component="default-scheduler", annotations=annotations(attempt))
        await asyncio.sleep(0)
    assert made == [0]  # the first went out at once; the repeats wait
    api.gate.set()
    await settle(running)
    (event,) = api.objects.values()
    assert event.metadata.annotations["podsched.io/explanation"] == '{"attempt": 2}'
    assert made == [0, 2]  # the coalesced repeat made only the latest annotations


async def test_beyond_a_bound_of_waiting_functions_annotations_are_made_when_recorded(
    api: FakeEventsApi, clock: FakeClock
) -> None:
    # What a waiting function holds (an attempt's per-node scores) is far larger than the annotations
    # it makes: a backlog behind a slow API server keeps at most max_lazy_annotations of them.
    recorder = EventRecorder(api, clock=clock, max_lazy_annotations=2)  # type: ignore[arg-type]
    made: list[str] = []

    def annotations(name: str) -> Callable[[], dict[str, str]]:
        def make() -> dict[str, str]:
            made.append(name)
            return {"podsched.io/explanation": f'{{"pod": "{name}"}}'}
        return make

    names = [f"p{i}" for i in range(5)]
    for name in names:
        recorder.record(pod(name), WARNING, "FailedScheduling", "Scheduling", "0/2 nodes are available",
                        component="default-scheduler", annotations=annotations(name))
    assert made == ["p2", "p3", "p4"]  # the first two wait as functions, the rest were made at once
    # A repeat of a waiting event replaces its annotations under the same bound.
    recorder.record(pod("p0"), WARNING, "FailedScheduling", "Scheduling", "0/2 nodes are available",
                    component="default-scheduler", annotations=annotations("p0-again"))
    assert made == ["p2", "p3", "p4", "p0-again"]
    task = asyncio.create_task(recorder.run())
    try:
        await settle(recorder)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    written = {e.involved_object.name: e.metadata.annotations["podsched.io/explanation"]
               for e in api.objects.values()}
    assert written == {"p0": '{"pod": "p0-again"}', **{n: f'{{"pod": "{n}"}}' for n in names[1:]}}
    assert sorted(made) == sorted(["p0-again", *names[1:]])  # each made once; p0's first never


def test_a_negative_bound_of_lazy_annotations_is_refused(api: FakeEventsApi) -> None:
    with pytest.raises(ValueError, match="max_lazy_annotations must not be negative, got -1"):
        EventRecorder(api, max_lazy_annotations=-1)  # type: ignore[arg-type]


async def test_a_disabled_recorder_writes_nothing_and_makes_no_annotations(api: FakeEventsApi,
                                                                           clock: FakeClock) -> None:
    recorder = EventRecorder(api, clock=clock, enabled=False)  # type: ignore[arg-type]
    task = asyncio.create_task(recorder.run())

    def never() -> dict[str, str]:
        raise AssertionError("a disabled recorder made the annotations of an event")

    try:
        recorder.record(pod(), WARNING, "FailedScheduling", "Scheduling", "0/2 nodes are available",
                        component="default-scheduler", annotations=never)
        await settle(recorder)
        assert api.objects == {} and api.creates == 0
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_the_events_waiting_when_a_writer_is_free_go_out_in_one_batch(
    api: FakeEventsApi, clock: FakeClock
) -> None:
    recorder = EventRecorder(api, clock=clock, workers=1, batch_size=3)  # type: ignore[arg-type]
    task = asyncio.create_task(recorder.run())
    try:
        api.gate.clear()
        record_failed(recorder, pod("first"))
        await taken(recorder)  # the writer takes "first" and waits on the gate
        for name in ("a", "b", "c", "d"):
            record_failed(recorder, pod(name))
        api.gate.set()
        await settle(recorder)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert [[name.partition(".")[0] for name in batch] for batch in api.batches] == [
        ["first"], ["a", "b", "c"], ["d"]]
    assert (recorder.written, recorder.failed) == (5, 0)


async def test_one_events_refusal_in_a_batch_fails_only_that_event(
    running: EventRecorder, api: FakeEventsApi
) -> None:
    api.gate.clear()
    record_failed(running, pod("first"))
    await taken(running)
    record_failed(running, pod("ok"))
    record_failed(running, pod("refused"))
    original = api.create

    async def refusing(event: objects_pb2.Event, *, fence: Fence | None = None) -> objects_pb2.Event:
        if event.involved_object.name == "refused":
            raise errors.Forbidden('events "refused" is forbidden')
        return await original(event, fence=fence)

    api.create = refusing  # type: ignore[method-assign]
    api.gate.set()
    await settle(running)
    assert sorted(event.involved_object.name for event in api.objects.values()) == ["first", "ok"]
    assert (running.written, running.failed) == (2, 1)
