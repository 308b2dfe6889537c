"""`podsched replay --topology-constraints both` on the shipped rack-gang sample (examples/replay/rack-gangs):
six nodes in three racks, a batch pod holding most of one node of each rack until second 600, and three
gangs constrained to one rack. ``train-a`` (four pods of 3 CPUs) fits no rack while the batch pods run,
only the cluster as a whole: without the constraint it is placed on arrival, across racks; with it, it
waits whole for a rack with room. One process replays the trace both ways; the tests read its JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.helpers import REPO, parse_table, run_cli

SAMPLE = REPO / "examples" / "replay" / "rack-gangs"
KEPT, DROPPED = "default", "default without topology"
#: When the batch pods end and free a rack for train-a.
BATCH_ENDS_S = 600.0


@dataclass(frozen=True)
class Replayed:
    table: dict[str, dict[str, str]]
    runs: dict[str, dict[str, Any]]
    info: dict[str, Any]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Replayed:
    out = tmp_path_factory.mktemp("rack-gangs") / "replay.json"
    done = run_cli("127.0.0.1:1", "replay", "--nodes", str(SAMPLE / "nodes.csv"), "--pods",
                   str(SAMPLE / "pods.csv"), "--topology-constraints", "both", "--json", str(out),
                   timeout=300)
    assert done.code == 0, done.stderr
    document = json.loads(out.read_text())
    return Replayed({row["FIGURE"]: row for row in parse_table(done.stdout)},
                    {run["config"]: run for run in document["runs"]}, document["trace"])


def _group(run: dict[str, Any], name: str) -> dict[str, Any]:
    return next(group for group in run["groups"] if group["name"] == f"default/{name}")


def _bound_at(run: dict[str, Any], prefix: str) -> list[float]:
    return [pod["bound_at"] for pod in run["pods"] if pod["name"].startswith(f"default/{prefix}")]


def test_both_ways_side_by_side_with_the_group_figures(replayed: Replayed) -> None:
    assert list(replayed.runs) == [KEPT, DROPPED]
    assert replayed.info["topology_constraints"] == "both"
    for label in ("gangs placed", "gangs never placed", "constrained groups placed in one domain",
                  "constrained groups placed split"):
        assert set(replayed.table[label]) == {"FIGURE", KEPT, DROPPED}
    for run in replayed.runs.values():
        assert [(g["name"], g["min_count"], g["topology_key"], g["pods"]) for g in run["groups"]] == [
            ("default/train-a", 4, "topology.kubernetes.io/rack", 4),
            ("default/train-b", 2, "topology.kubernetes.io/rack", 2),
            ("default/web", 0, "", 3),
            ("default/train-c", 4, "topology.kubernetes.io/rack", 4)]
        assert run["summary"]["gangs"] == 3 and run["summary"]["constrained_groups"] == 3


def test_without_the_constraints_the_gang_is_placed_on_arrival_across_racks(replayed: Replayed) -> None:
    dropped = replayed.runs[DROPPED]
    assert _bound_at(dropped, "train-a") == [10.0] * 4
    train_a = _group(dropped, "train-a")
    assert train_a["placed"] is True and train_a["in_one_domain"] is False, train_a
    assert len(train_a["domains"]) >= 2
    assert dropped["summary"]["gangs_placed"] == 3 and dropped["summary"]["constrained_split"] >= 1
    assert replayed.table["constrained groups placed split"][DROPPED] != "0"


def test_with_the_constraints_every_gang_is_placed_inside_one_rack(replayed: Replayed) -> None:
    kept = replayed.runs[KEPT]
    for name in ("train-a", "train-b", "train-c"):
        group = _group(kept, name)
        assert group["placed"] is True and group["in_one_domain"] is True, group
    assert kept["summary"]["gangs_placed"] == 3 and kept["summary"]["gangs_never_placed"] == 0
    assert kept["summary"]["constrained_in_one_domain"] == 3 and kept["summary"]["constrained_split"] == 0
    assert replayed.table["constrained groups placed split"][KEPT] == "0"


def test_with_the_constraints_the_gang_waits_whole_for_a_rack_with_room(replayed: Replayed) -> None:
    bound = _bound_at(replayed.runs[KEPT], "train-a")
    assert len(bound) == 4 and len(set(bound)) == 1, bound
    assert bound[0] >= BATCH_ENDS_S, bound


def test_topology_constraints_make_no_sense_with_fill() -> None:
    done = run_cli("127.0.0.1:1", "replay", "--nodes", str(SAMPLE / "nodes.csv"), "--pods",
                   str(SAMPLE / "pods.csv"), "--fill", "1.0", "--topology-constraints", "drop", timeout=60)
    assert done.code == 2
    assert "--topology-constraints has no meaning with --fill" in done.stderr
