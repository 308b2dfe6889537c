"""The API limits (cluster/apiserver/limits.py, and the label count in validation): each refusal names the
limit and the value; the gates count and release what they hold."""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest

from cluster.api import errors, validation
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.roles import MASTERS_GROUP
from cluster.apiserver.limits import (
    MAX_STATUS_MESSAGE_BYTES,
    ApiLimits,
    RequestDeadline,
    WatchLimit,
    check_page_size,
    status_message,
)
from cluster.apiserver.verbs import MAX_PATH_NAME_LENGTH, check_path_name
from tests import builders

ALICE = UserInfo("alice", groups=("podsched:clients",))
BOB = UserInfo("bob", groups=("podsched:clients",))
ADMIN = UserInfo("root", groups=(MASTERS_GROUP,))
WATCH_PODS = RequestInfo("watch", "pods")
LIST_PODS = RequestInfo("list", "pods")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"request_timeout_s": 0}, "request timeout must be positive, got 0s"),
        ({"max_watches_per_user": 0}, "max watches per user must be at least 1, got 0"),
        ({"max_page_size": 0}, "max page size must be at least 1, got 0"),
    ],
    ids=["timeout", "watches", "page-size"],
)
def test_nonsense_limits_are_refused_naming_the_limit(changes: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ApiLimits(**changes)  # type: ignore[arg-type]


def test_a_page_size_up_to_the_maximum_is_fine_and_zero_means_everything() -> None:
    check_page_size(0, 10)
    check_page_size(10, 10)


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (11, "limit 11 is more than the maximum page size of 10"),
        (2**63 - 1, f"limit {2**63 - 1} is more than the maximum page size of 10"),
        (-1, "limit must not be negative: -1"),
    ],
)
def test_a_page_size_past_the_maximum_or_negative_is_invalid(limit: int, message: str) -> None:
    with pytest.raises(errors.Invalid, match=message):
        check_page_size(limit, 10)


async def test_the_deadline_cuts_a_slow_call_with_an_error_naming_the_timeout() -> None:
    gate = RequestDeadline(0.05)
    with pytest.raises(errors.Timeout) as raised:
        async with gate.admit(ALICE, LIST_PODS):
            await asyncio.sleep(5)
    assert raised.value.message == (
        "the request to list pods did not finish within the server's request timeout of 50ms "
        "(--request-timeout)"
    )


@pytest.mark.parametrize(
    ("timeout_s", "shown"), [(0.05, "50ms"), (0.0025, "2.5ms"), (2e-6, "2us"), (1e-9, "1ns")]
)
async def test_the_deadline_error_shows_the_timeout_as_a_flag_takes_it(timeout_s: float, shown: str) -> None:
    gate = RequestDeadline(timeout_s)
    with pytest.raises(errors.Timeout, match=f"request timeout of {shown} "):
        async with gate.admit(ALICE, LIST_PODS):
            await asyncio.sleep(0.1)


async def test_the_deadline_leaves_watches_and_quick_calls_alone() -> None:
    gate = RequestDeadline(0.05)
    async with gate.admit(ALICE, WATCH_PODS):
        await asyncio.sleep(0.1)
    async with gate.admit(ALICE, LIST_PODS):
        await asyncio.sleep(0)


async def test_a_timeout_error_of_the_handler_itself_is_not_reported_as_the_deadline() -> None:
    gate = RequestDeadline(10)
    with pytest.raises(TimeoutError) as raised:
        async with gate.admit(ALICE, LIST_PODS):
            raise TimeoutError("the store took too long")
    assert not isinstance(raised.value, errors.ApiError)


async def test_watches_past_the_limit_are_refused_per_user_and_closing_one_makes_room() -> None:
    gate = WatchLimit(2)
    async with gate.admit(ALICE, WATCH_PODS), gate.admit(ALICE, WATCH_PODS):
        assert gate.open_watches("alice") == 2
        with pytest.raises(errors.TooManyRequests) as raised:
            async with gate.admit(ALICE, WATCH_PODS):
                pass
        assert raised.value.message == (
            'too many watches for user "alice": 2 open, the limit is 2 (--max-watches-per-user); '
            "close a watch before opening another"
        )
        assert raised.value.code.name == "RESOURCE_EXHAUSTED"
        # Another user has a budget of its own, and other verbs are not counted.
        async with gate.admit(BOB, WATCH_PODS), gate.admit(ALICE, LIST_PODS):
            assert gate.open_watches("bob") == 1
    assert gate.open_watches("alice") == 0
    async with gate.admit(ALICE, WATCH_PODS):
        assert gate.open_watches("alice") == 1


async def test_a_watch_that_fails_releases_its_place() -> None:
    gate = WatchLimit(1)
    with pytest.raises(RuntimeError):
        async with gate.admit(ALICE, WATCH_PODS):
            raise RuntimeError("the stream broke")
    assert gate.open_watches("alice") == 0


async def test_masters_are_not_counted() -> None:
    gate = WatchLimit(1)
    async with gate.admit(ADMIN, WATCH_PODS), gate.admit(ADMIN, WATCH_PODS):
        assert gate.open_watches("root") == 0


def _trailer_bytes(message: str) -> int:
    """The size of ``message`` as gRPC sends it in grpc-message: percent-encoded UTF-8."""
    return len(urllib.parse.quote(message.encode(), safe=" !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~"))


def test_a_short_status_message_is_sent_as_it_is() -> None:
    assert status_message('pods "web" not found') == 'pods "web" not found'


@pytest.mark.parametrize("unit", ["x", "é", "🙂", "\x00"], ids=["ascii", "latin", "emoji", "nul"])
def test_a_huge_status_message_is_cut_to_fit_the_trailer_and_says_so(unit: str) -> None:
    message = 'pods "' + unit * 300_000 + '" not found'
    cut = status_message(message)
    assert _trailer_bytes(cut) <= MAX_STATUS_MESSAGE_BYTES
    assert cut.startswith('pods "' + unit * 10)
    assert cut.endswith("bytes of this message cut)")


def test_more_than_64_labels_are_refused_naming_the_count_and_the_limit() -> None:
    pod = builders.pod("web", "", image="busybox")
    pod.metadata.labels.update({f"l{i}": "v" for i in range(64)})
    assert not [p for p in validation.validate_object(pod) if p.startswith("metadata.labels")]
    pod.metadata.labels["one-more"] = "v"
    assert "metadata.labels: Too many: 65: must have at most 64 items" in validation.validate_object(pod)


def test_a_huge_bad_value_is_quoted_cut_in_a_field_error() -> None:
    pod = builders.pod("a" * 100_000, "", image="busybox")
    (problem,) = [p for p in validation.validate_object(pod) if p.startswith("metadata.name")]
    quoted = '"' + "a" * 256 + '..." (cut: 100000 characters in all)'
    assert problem.startswith(f"metadata.name: Invalid value: {quoted}")
    assert len(problem) < 1000


def test_a_name_longer_than_any_objects_is_refused_before_the_store() -> None:
    check_path_name("resource name", "a" * MAX_PATH_NAME_LENGTH)
    with pytest.raises(errors.Invalid) as raised:
        check_path_name("resource name", "a" * 2_000_000)
    assert raised.value.message == (
        f'resource name "{"a" * 64}..." is 2000000 characters long: no object\'s is longer than 253'
    )
