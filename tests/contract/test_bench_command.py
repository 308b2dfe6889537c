"""`podsched bench store` for real, on small numbers: both backends, an existing etcd and a local one."""

from __future__ import annotations

import argparse

import pytest

from cluster.cli import bench

pytestmark = pytest.mark.etcd


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="podsched")
    bench.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["bench", "store", "--writes", "60", "--concurrency", "4", *argv])
    return args.func(args)


def _rows(output: str) -> dict[str, list[str]]:
    lines = output.strip().splitlines()
    assert lines[0].split()[:4] == ["STORE", "WRITES", "CONCURRENCY", "WRITES/S"]
    return {line.split()[0]: line.split() for line in lines[1:]}


def test_bench_measures_both_backends(etcd_endpoints: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--etcd", ",".join(etcd_endpoints)) == 0

    rows = _rows(capsys.readouterr().out)
    assert sorted(rows) == ["etcd", "sqlite"]
    for row in rows.values():
        assert row[1:3] == ["60", "4"]
        assert float(row[3]) > 0
        assert row[5] == row[7] == "ms" and 0 <= float(row[4]) <= float(row[6])


def test_bench_starts_and_stops_a_local_etcd(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--store", "etcd") == 0

    assert list(_rows(capsys.readouterr().out)) == ["etcd"]


def test_bench_reports_an_unreachable_etcd(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--store", "etcd", "--etcd", "127.0.0.1:1") == 1

    assert "podsched bench: etcd at 127.0.0.1:1 is unavailable" in capsys.readouterr().err
