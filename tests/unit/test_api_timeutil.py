import time
from datetime import UTC, datetime

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api.timeutil import age, from_seconds, human_duration, is_set, now, to_datetime

DURATIONS = [
    (-3, "<invalid>"),
    (-1.5, "0s"),
    (0, "0s"),
    (45, "45s"),
    (119, "119s"),
    (120, "2m"),
    (185, "3m5s"),
    (599, "9m59s"),
    (600, "10m"),
    (12 * 60 + 30, "12m"),
    (179 * 60, "179m"),
    (3 * 3600, "3h"),
    (5 * 3600 + 3 * 60, "5h3m"),
    (8 * 3600 + 59 * 60, "8h"),
    (47 * 3600, "47h"),
    (2 * 86400 + 3 * 3600, "2d3h"),
    (3 * 86400, "3d"),
    (8 * 86400, "8d"),
    (400 * 86400, "400d"),
    (2 * 365 * 86400, "2y"),
    (3 * 365 * 86400 + 2 * 86400, "3y2d"),
    (10 * 365 * 86400 + 100 * 86400, "10y"),
]


@pytest.mark.parametrize(("seconds", "text"), DURATIONS, ids=[t for _, t in DURATIONS])
def test_human_duration_prints_like_kubectl(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_now_is_whole_seconds_of_the_wall_clock() -> None:
    before = int(time.time())
    ts = now()
    assert ts.nanos == 0
    assert before <= ts.seconds <= time.time()


def test_age_against_an_explicit_now() -> None:
    created = from_seconds(1_000_000)
    assert age(created, Timestamp(seconds=1_000_185)) == "3m5s"
    assert age(created, datetime.fromtimestamp(1_000_000 + 5 * 3600 + 180, tz=UTC)) == "5h3m"


def test_age_defaults_to_the_wall_clock() -> None:
    assert age(from_seconds(time.time() - 45)) in {"45s", "46s"}


def test_age_of_an_unset_timestamp_is_unknown() -> None:
    assert not is_set(Timestamp())
    assert age(Timestamp()) == "<unknown>"


def test_to_datetime_is_aware_utc() -> None:
    dt = to_datetime(Timestamp(seconds=86400))
    assert dt == datetime(1970, 1, 2, tzinfo=UTC)
    assert dt.tzinfo is UTC
