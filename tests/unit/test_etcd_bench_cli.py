"""`podsched bench store`: argument parsing and the statistics it prints (no store involved)."""

from __future__ import annotations

import argparse

import pytest

from cluster.bench import storelimit
from cluster.cli import bench


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="podsched")
    bench.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["bench", *argv])


def test_defaults() -> None:
    args = _parse("store")

    assert (args.target, args.store, args.etcd, args.writes, args.concurrency) == (
        "store",
        None,  # all for bench store, etcd for the workloads
        None,
        storelimit.DEFAULT_WRITES,
        storelimit.DEFAULT_CONCURRENCY,
    )
    assert args.func is bench.run


def test_every_option() -> None:
    args = _parse("store", "--store", "etcd", "--etcd", "a:1, b:2", "--writes", "10", "--concurrency", "3")

    assert (args.store, args.etcd, args.writes, args.concurrency) == ("etcd", ["a:1", "b:2"], 10, 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nodes"], "invalid choice: 'nodes'"),
        (["store", "--store", "mysql"], "invalid choice: 'mysql'"),
        (["store", "--writes", "0"], "invalid count '0': expected a positive integer"),
        (["store", "--writes", "many"], "invalid count 'many': expected a positive integer"),
        (["store", "--concurrency", "-2"], "invalid count '-2': expected a positive integer"),
        (["store", "--etcd", "localhost"], "invalid etcd endpoint 'localhost': expected HOST:PORT"),
        (["store", "--etcd", ","], "--etcd needs at least one HOST:PORT"),
    ],
    ids=[
        "unknown-target",
        "unknown-store",
        "zero-writes",
        "word-writes",
        "negative-concurrency",
        "no-port",
        "empty",
    ],
)
def test_bad_arguments_are_named(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _parse(*argv)

    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_etcd_endpoints_with_only_sqlite_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.run(_parse("store", "--store", "sqlite", "--etcd", "a:1")) == 2
    assert "--etcd applies to the etcd store" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("values", "fraction", "expected"),
    [
        ([5.0], 0.5, 5.0),
        ([1.0, 2.0, 3.0, 4.0], 0.0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 1.0, 4.0),
        ([4.0, 1.0, 3.0, 2.0], 0.5, 2.5),
        ([float(i) for i in range(1, 101)], 0.99, 99.01),
        ([10.0, 20.0], 0.25, 12.5),
    ],
    ids=["single", "min", "max", "median-unsorted", "p99-of-100", "interpolated"],
)
def test_percentile_interpolates_between_ranks(values: list[float], fraction: float, expected: float) -> None:
    assert storelimit.percentile(values, fraction) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("values", "fraction", "message"),
    [([], 0.5, "no values"), ([1.0], 1.5, "within \\[0, 1\\]"), ([1.0], -0.1, "within \\[0, 1\\]")],
    ids=["empty", "above-one", "negative"],
)
def test_percentile_refuses_nonsense(values: list[float], fraction: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        storelimit.percentile(values, fraction)


def test_lag_is_delivery_minus_acknowledgement_and_never_negative() -> None:
    acknowledged = {10: 1.000, 11: 1.010, 12: 1.020, 13: 1.030}
    delivered = {10: 1.002, 11: 1.009, 12: 1.024, 13: 1.040}  # 11 arrived before its ack was seen

    stats = storelimit.lag_stats(acknowledged, delivered)

    # lags: 2 ms, 0, 4 ms, 10 ms
    assert stats.p50_s == pytest.approx(0.003)
    assert stats.p99_s == pytest.approx(0.004 + 0.006 * 0.97)


def test_a_write_never_delivered_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"1 acknowledged writes were never delivered, e\.g\. revision 11"):
        storelimit.lag_stats({10: 1.0, 11: 1.1}, {10: 1.05})


@pytest.mark.parametrize(
    ("count", "seconds", "expected"), [(1000, 2.0, 500.0), (3, 0.5, 6.0)], ids=["whole", "fraction"]
)
def test_rate(count: int, seconds: float, expected: float) -> None:
    assert storelimit.rate(count, seconds) == expected


def test_the_table_has_one_aligned_row_per_backend() -> None:
    results = [
        storelimit.StoreBenchResult("sqlite", 2000, 16, 0.5, storelimit.LagStats(0.0004, 0.0021)),
        storelimit.StoreBenchResult("etcd", 2000, 16, 2.0, storelimit.LagStats(0.012, 0.1234)),
    ]

    lines = storelimit.format_table(results).splitlines()

    assert lines[0].split() == [
        "STORE",
        "WRITES",
        "CONCURRENCY",
        "WRITES/S",
        "WATCH",
        "LAG",
        "P50",
        "WATCH",
        "LAG",
        "P99",
    ]
    assert lines[1].split() == ["sqlite", "2000", "16", "4000", "0.40", "ms", "2.10", "ms"]
    assert lines[2].split() == ["etcd", "2000", "16", "1000", "12.00", "ms", "123.40", "ms"]
    assert lines[1].index("4000") == lines[2].index("1000") == lines[0].index("WRITES/S")


def test_the_benchmark_pod_is_bind_sized() -> None:
    size = len(storelimit.bench_pod(7).SerializeToString())

    assert 1400 <= size <= 1600, size
