"""The live view's page (cluster/ui/static) in headless Chromium, against the fixture server's stream."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser.fixture_server import FixtureServer
from tests.browser.viewmodel import (
    candidate,
    change,
    device,
    event,
    large_view_model,
    leadership,
    node,
    pod,
    summary,
    view_model,
)
from tests.browser.waits import wait_for, wait_text, waiting

PENDING_MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."
EXPLANATION = "node-1: Insufficient cpu (requested 64000m, free 7000m)\nnode-2: Insufficient cpu"


def small_state() -> dict[str, Any]:
    pods = [
        pod("default/web-1", "node-1", priority=1000),
        pod("default/web-2", "node-2"),
        pod("batch/low-1", "node-1", priority=-10),
        pod("default/big", priority=500, reason="Unschedulable", message=PENDING_MESSAGE),
    ]
    nodes = [
        node("node-1", ["default/web-1", "batch/low-1"], gpus=4),
        node("node-2", ["default/web-2"], taints=["dedicated=gpu:NoSchedule"]),
        node("node-3", [], unschedulable=True, ready=False),
    ]
    nodes[2]["readiness"] = "Unknown"  # no Ready condition: not counted ready, but no alarm either
    lead = leadership("sched-a", 1, [change("sched-a", "", 1, None)], ["sched-a", "sched-b"])
    pdb = {
        "key": "default/web-pdb",
        "minAvailable": "1",
        "maxUnavailable": None,
        "currentHealthy": 2,
        "desiredHealthy": 1,
        "expectedPods": 2,
        "disruptionsAllowed": 1,
    }
    group = {
        "key": "default/train",
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "minCount": 4,
        "members": 4,
        "scheduled": 1,
        "running": 1,
        "phase": "Scheduling",
        "message": "1/4 pods placeable, minCount 4",
        "scheduledCondition": "False",
    }
    events = [
        event("default/web-1.1", "Scheduled", "Pod default/web-1", "Successfully assigned to node-1"),
        event(
            "default/old.2",
            "Preempted",
            "Pod default/old",
            "Preempted by default/web-1 on node node-1",
            "Warning",
        ),
    ]
    return view_model(nodes, pods, lead=lead, pdbs=[pdb], groups=[group], events=events)


def open_page(
    browser: WebDriver,
    server: FixtureServer,
    state: dict[str, Any],
    details: dict[str, dict[str, Any]] | None = None,
) -> None:
    server.reset(state, details)
    browser.get(server.url)
    wait_text(browser, "#status", "live")


def test_the_page_goes_live_and_shows_the_snapshot(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    open_page(browser, fixture_server, small_state())

    assert {e.get_attribute("data-node") for e in browser.find_elements(By.CSS_SELECTOR, "[data-node]")} == {
        "node-1",
        "node-2",
        "node-3",
    }
    chips = browser.find_elements(By.CSS_SELECTOR, '[data-node="node-1"] [data-pod]')
    assert {c.get_attribute("data-pod") for c in chips} == {"default/web-1", "batch/low-1"}
    assert all(c.tag_name == "button" for c in chips)
    assert "GPU" in browser.find_element(By.CSS_SELECTOR, '[data-node="node-1"]').text
    badges = {name: browser.find_element(By.CSS_SELECTOR, f'[data-node="{name}"] .badges').text.split("\n")[0]
              for name in ("node-1", "node-3")}
    assert badges == {"node-1": "Ready", "node-3": "Unknown"}
    assert browser.find_element(By.ID, "sum-nodes").text == "2/3"
    assert browser.find_element(By.ID, "sum-pods").text == "3/4"
    assert browser.find_element(By.ID, "sum-extended").text.startswith("2 / 4")
    assert browser.find_element(By.ID, "leader-holder").text == "sched-a"
    assert (
        "1 disruptions allowed" in browser.find_element(By.CSS_SELECTOR, '[data-pdb="default/web-pdb"]').text
    )
    assert "1/4 scheduled" in browser.find_element(By.CSS_SELECTOR, '[data-podgroup="default/train"]').text
    assert "Preempted by default/web-1" in browser.find_element(By.ID, "preemptions").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#events li")) == 2
    screenshot("overview")


def test_a_delta_adds_nodes_and_pods_without_a_reload(
    browser: WebDriver, fixture_server: FixtureServer
) -> None:
    state = small_state()
    open_page(browser, fixture_server, state)
    browser.execute_script("window.sameDocument = true")

    new_pod = pod("default/api-1", "node-4", priority=2000000000)
    new_node = node("node-4", ["default/api-1"])
    nodes = {**state["nodes"], "node-4": new_node}
    pods = {**state["pods"], "default/api-1": new_pod}
    fixture_server.push(
        {
            "revision": 2,
            "nodes": {"upsert": {"node-4": new_node}},
            "pods": {"upsert": {"default/api-1": new_pod}},
            "summary": summary(nodes, pods),
        }
    )

    wait_for(browser, '[data-node="node-4"] [data-pod="default/api-1"]')
    wait_text(browser, "#sum-nodes", "3/4")
    assert browser.execute_script("return window.sameDocument") is True

    fixture_server.push({"revision": 3, "nodes": {"remove": ["node-3"]}, "summary": summary(nodes, pods)})
    waiting(browser, 20).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, '[data-node="node-3"]'),
        "node-3 stayed on the page after its removal",
    )


def test_nodes_show_their_devices_and_who_holds_them(
    browser: WebDriver, fixture_server: FixtureServer
) -> None:
    state = small_state()
    trainer = device("gpu-0", "node-1", ("default/trainer-gpu-x7k2p", None, "default/web-1"))
    shared = device("gpu-0", "node-2", ("default/infer-a-gpu-q9z4r", "s-1", "default/web-2"),
                    ("default/infer-b-gpu-m2n8v", "s-2", "default/web-2"), shared=True)
    state["nodes"]["node-1"]["devices"] = [trainer, device("gpu-1", "node-1")]
    state["nodes"]["node-2"]["devices"] = [shared]
    open_page(browser, fixture_server, state)

    tags = {tag.get_attribute("data-device"): tag
            for tag in browser.find_elements(By.CSS_SELECTOR, "[data-device]")}
    assert set(tags) == {"gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-1",
                         "gpu.example.com/node-2/gpu-0"}
    held, free, sharing = (tags[f"gpu.example.com/{key}"]
                           for key in ("node-1/gpu-0", "node-1/gpu-1", "node-2/gpu-0"))
    # A shared device counts its consumers.
    assert (held.text, free.text, sharing.text) == ("gpu-0", "gpu-1", "gpu-0 (2)")
    assert held.get_attribute("title") == (
        "gpu.example.com/node-1/gpu-0\ndefault/trainer-gpu-x7k2p for default/web-1")
    assert free.get_attribute("title") == "gpu.example.com/node-1/gpu-1\nfree"
    assert sharing.get_attribute("title").split("\n") == [
        "gpu.example.com/node-2/gpu-0 (shared)",
        "default/infer-a-gpu-q9z4r (share s-1) for default/web-2",
        "default/infer-b-gpu-m2n8v (share s-2) for default/web-2",
    ]
    # The tags sit in their node's card, and a claim released frees its device without a reload.
    assert browser.find_element(By.CSS_SELECTOR, '[data-node="node-1"] [data-device$="/gpu-1"]') == free
    node_1 = {**state["nodes"]["node-1"], "devices": [device("gpu-0", "node-1"), device("gpu-1", "node-1")]}
    fixture_server.push({"revision": 2, "nodes": {"upsert": {"node-1": node_1}}, "summary": state["summary"]})
    waiting(browser, 20).until(
        lambda d: d.find_element(By.CSS_SELECTOR, '[data-device="gpu.example.com/node-1/gpu-0"]')
        .get_attribute("title").endswith("\nfree"),
        "node-1's gpu-0 still held after its claim was released",
    )


def test_pdbs_podgroups_and_preemptions_follow_the_deltas(
    browser: WebDriver, fixture_server: FixtureServer
) -> None:
    state = small_state()
    bare = view_model(list(state["nodes"].values()), list(state["pods"].values()))
    open_page(browser, fixture_server, bare)
    assert not browser.find_elements(By.CSS_SELECTOR, "#pdbs li, #podgroups li, #preemptions li, #events li")
    assert browser.find_element(By.ID, "preemptions-empty").is_displayed()

    group = {**state["podGroups"]["default/train"], "scheduled": 4, "running": 4, "phase": "Running",
             "message": "bound 4 pods of the group", "scheduledCondition": "True"}
    preempted = event(
        "default/web-2.7", "Preempted", "Pod default/web-2", "Preempted by default/big", "Warning"
    )
    fixture_server.push(
        {
            "revision": 2,
            "pdbs": {"upsert": state["pdbs"]},
            "podGroups": {"upsert": {"default/train": group}},
            "events": [preempted],
            "summary": summary(state["nodes"], state["pods"], preemptions=1),
        }
    )

    wait_text(browser, '#podgroups [data-podgroup="default/train"]', "4/4 scheduled")
    # Bound: the condition's message is a success, drawn in the success colour, not in the reasons' red.
    row = browser.find_element(By.CSS_SELECTOR, '#podgroups [data-podgroup="default/train"]')
    message = row.find_element(By.XPATH, ".//*[text()='bound 4 pods of the group']")
    assert colour(browser, message) == colour(browser, browser.find_element(By.CSS_SELECTOR, "#status"))
    assert colour(browser, message) != colour(browser, browser.find_element(
        By.CSS_SELECTOR, '#pending [data-pending="default/big"] .reason'))
    wait_text(browser, "#preemptions li", "Preempted by default/big")
    assert browser.find_element(By.CSS_SELECTOR, '#pdbs [data-pdb="default/web-pdb"]').is_displayed()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#events li")) == 1
    assert browser.find_element(By.ID, "sum-preemptions").text == "1"
    assert not browser.find_element(By.ID, "preemptions-empty").is_displayed()

    fixture_server.push({"revision": 3, "pdbs": {"remove": ["default/web-pdb"]}, "summary": state["summary"]})
    waiting(browser, 20).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, "#pdbs li"), "the removed PDB stayed on the page"
    )
    assert browser.find_element(By.ID, "pdbs-empty").is_displayed()


def test_a_pending_pod_shows_the_schedulers_reason(browser: WebDriver, fixture_server: FixtureServer) -> None:
    state = small_state()
    open_page(browser, fixture_server, state)
    wait_text(browser, '#pending [data-pending="default/big"]', PENDING_MESSAGE)

    message = (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient memory."
    )
    stuck = pod("default/stuck", reason="Unschedulable", message=message)
    fixture_server.push(
        {
            "revision": 2,
            "pods": {"upsert": {"default/stuck": stuck}},
            "summary": summary(state["nodes"], {**state["pods"], "default/stuck": stuck}),
        }
    )

    wait_text(browser, '#pending [data-pending="default/stuck"]', message)
    assert browser.find_element(By.ID, "sum-pending").text == "2"


def grid_order(browser: WebDriver) -> list[str]:
    """The node cards in the DOM, in their places in the grid."""
    cards = browser.find_elements(By.CSS_SELECTOR, "[data-node]")
    placed = sorted((int(c.get_attribute("data-index") or 0), c.get_attribute("data-node") or "")
                    for c in cards)
    return [name for _, name in placed]


def test_nodes_that_need_a_look_or_hold_pods_come_before_empty_ones(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    names = [f"node-{i:02d}" for i in range(1, 41)]
    nodes = {name: node(name) for name in names}
    nodes["node-33"] = node("node-33", ["default/web-1"])
    nodes["node-36"] = node("node-36", ready=False)
    waiting_pod = {**pod("default/big", priority=500, reason="Unschedulable", message=PENDING_MESSAGE),
                   "nominatedNode": "node-39"}
    pods = [pod("default/web-1", "node-33"), waiting_pod]
    state = view_model(list(nodes.values()), pods)
    open_page(browser, fixture_server, state)
    # NotReady, and the nominated node of a pending pod, then the node with pods, then the empty ones.
    assert grid_order(browser)[:5] == ["node-36", "node-39", "node-33", "node-01", "node-02"]
    screenshot("node-order")

    # The pending pod is bound where it was nominated: its node now holds a pod, no longer waits for one.
    bound = pod("default/big", "node-39", priority=500)
    nodes["node-39"] = node("node-39", ["default/big"])
    fixture_server.push({"revision": 2, "nodes": {"upsert": {"node-39": nodes["node-39"]}},
                         "pods": {"upsert": {"default/big": bound}},
                         "summary": summary(nodes, {"default/web-1": pods[0], "default/big": bound})})
    waiting(browser, 20).until(lambda d: grid_order(d)[:4] == ["node-36", "node-33", "node-39", "node-01"],
                               "node-39 did not move among the nodes with pods")
    # A node emptied goes back among the empty ones, by name.
    nodes["node-33"] = node("node-33")
    fixture_server.push({"revision": 3, "nodes": {"upsert": {"node-33": nodes["node-33"]}},
                         "summary": summary(nodes, {"default/big": bound})})
    waiting(browser, 20).until(lambda d: grid_order(d)[:3] == ["node-36", "node-39", "node-01"],
                               "node-33 stayed before the empty nodes")


def test_long_lists_are_capped(browser: WebDriver, fixture_server: FixtureServer) -> None:
    crowded = [f"default/crowd-{i:02d}" for i in range(60)]
    waiting = [pod(f"default/wait-{i:03d}", message="0/1 nodes are available") for i in range(250)]
    state = view_model([node("node-1", crowded)], [*(pod(k, "node-1") for k in crowded), *waiting])
    open_page(browser, fixture_server, state)

    assert len(browser.find_elements(By.CSS_SELECTOR, '[data-node="node-1"] [data-pod]')) == 40
    assert "+20 more" in browser.find_element(By.CSS_SELECTOR, '[data-node="node-1"]').text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#pending [data-pending]")) == 200
    assert browser.find_element(By.ID, "pending-more").text == "and 50 more"
    assert not browser.find_element(By.ID, "sum-extended").is_displayed()  # no GPUs, no GPU total

    # An event seen again (its count went up) replaces its row.
    first = event("default/wait-000.1", "FailedScheduling", "Pod default/wait-000", "0/1 nodes", "Warning")
    fixture_server.push({"revision": 2, "events": [first], "summary": state["summary"]})
    wait_text(browser, "#events", "0/1 nodes")
    fixture_server.push({"revision": 3, "events": [{**first, "count": 3}], "summary": state["summary"]})
    wait_text(browser, "#events", "\u00d73")  # the count badge
    assert len(browser.find_elements(By.CSS_SELECTOR, "#events li")) == 1


def test_a_leadership_change_updates_the_holder_and_the_timeline(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    open_page(browser, fixture_server, small_state())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#leader-timeline li")) == 1
    assert replica_states(browser) == {"sched-a": "leader", "sched-b": "standby"}

    timeline = [change("sched-a", "", 1, None), change("sched-b", "sched-a", 2, 2.7)]
    state = small_state()
    fixture_server.push(
        {
            "revision": 2,
            "leadership": leadership("sched-b", 2, timeline, ["sched-a", "sched-b"]),
            "summary": state["summary"],
        }
    )

    wait_text(browser, "#leader-holder", "sched-b")
    assert browser.find_element(By.ID, "leader-token").text == "2"
    rows = browser.find_elements(By.CSS_SELECTOR, "#leader-timeline li")
    assert len(rows) == 2
    assert "2.7s leaderless" in rows[0].text
    screenshot("failover")

    fixture_server.push(
        {
            "revision": 3,
            "leadership": leadership("", 2, timeline, ["sched-a", "sched-b"]),
            "summary": state["summary"],
        }
    )
    wait_text(browser, "#leader-holder", "none")

    # A holder killed without releasing the lease: only the time since its last renewal bounds the gap.
    timeline = [*timeline, change("sched-c", "sched-b", 3, None, 3.4)]
    fixture_server.push(
        {
            "revision": 4,
            "leadership": leadership(
                "sched-c", 3, timeline, ["sched-c", "sched-d"],
                [candidate("sched-b", live=False), candidate("sched-c"), candidate("sched-d")],
            ),
            "summary": state["summary"],
        }
    )
    wait_text(browser, "#leader-holder", "sched-c")
    assert "≤ 3.4s leaderless" in browser.find_elements(By.CSS_SELECTOR, "#leader-timeline li")[0].text
    # The killed holder's candidate went unrenewed: stale.
    assert replica_states(browser) == {"sched-c": "leader", "sched-d": "standby", "sched-b": "stale"}
    stale = browser.find_element(By.CSS_SELECTOR, '#leader-replicas [data-replica="sched-b"]')
    assert stale.find_element(By.CSS_SELECTOR, ".replica-badge").text == "stale"


def test_replicas_that_stopped_renewing_say_so_at_once(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    state = small_state()
    open_page(browser, fixture_server, state)
    assert not browser.find_elements(By.CSS_SELECTOR, "#leader-replicas .not-renewing")

    # SIGKILLed: the holder's lease and a standby's candidate are no longer renewed, though the lease has
    # not expired and the candidate is not stale yet.
    silent_since = (datetime.now(UTC) - timedelta(seconds=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    lead = leadership(
        "scheduler-1_pid41_ab12cd34", 1, [change("scheduler-1_pid41_ab12cd34", "", 1, None)],
        ["scheduler-1_pid41_ab12cd34", "scheduler-2_pid42_cd34ef56", "scheduler-3_pid43_ef56ab12"],
        [candidate("scheduler-1_pid41_ab12cd34"),
         candidate("scheduler-2_pid42_cd34ef56", renewing=False, renew_time=silent_since),
         candidate("scheduler-3_pid43_ef56ab12")],
        holder_renewing=False, renew_time=silent_since,
    )
    fixture_server.push({"revision": 2, "leadership": lead, "summary": state["summary"]})
    wait_text(browser, '#leader-replicas [data-replica="scheduler-1_pid41_ab12cd34"]', "not renewing since")

    rows = {row.get_attribute("data-replica"): row
            for row in browser.find_elements(By.CSS_SELECTOR, "#leader-replicas [data-replica]")}
    assert {name: row.get_attribute("data-renewing") for name, row in rows.items()} == {
        "scheduler-1_pid41_ab12cd34": "false", "scheduler-2_pid42_cd34ef56": "false",
        "scheduler-3_pid43_ef56ab12": "true",
    }
    assert replica_states(browser)["scheduler-1_pid41_ab12cd34"] == "leader"
    assert replica_states(browser)["scheduler-2_pid42_cd34ef56"] == "standby"
    for name in ("scheduler-1_pid41_ab12cd34", "scheduler-2_pid42_cd34ef56"):
        badge = rows[name].find_element(By.CSS_SELECTOR, ".not-renewing").text
        assert re.fullmatch(r"not renewing since (\d+)s", badge), badge
        assert 35 <= int(badge.split()[-1][:-1]) <= 120, badge
    assert not rows["scheduler-3_pid43_ef56ab12"].find_elements(By.CSS_SELECTOR, ".not-renewing")
    screenshot("not-renewing")


def colour(browser: WebDriver, element: Any) -> str:
    return str(browser.execute_script("return getComputedStyle(arguments[0]).color", element))


def replica_states(browser: WebDriver) -> dict[str, str | None]:
    return {row.get_attribute("data-replica") or "": row.get_attribute("data-state")
            for row in browser.find_elements(By.CSS_SELECTOR, "#leader-replicas [data-replica]")}


def test_clicking_a_pod_shows_its_scheduling_explanation(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    details = {
        "default/big": {
            "labels": {"app": "big"},
            "explanation": EXPLANATION,
            "events": [
                event("default/big.1", "FailedScheduling", "Pod default/big", PENDING_MESSAGE, "Warning")
            ],
        },
        "default/web-1": {"labels": {"app": "web"}, "explanation": "bound to node-1 by sched-a"},
    }
    open_page(browser, fixture_server, small_state(), details)

    browser.find_element(By.CSS_SELECTOR, '[data-pod="default/web-1"]').click()
    wait_text(browser, "#pod-explanation", "bound to node-1 by sched-a")
    panel = browser.find_element(By.ID, "pod-details")
    assert panel.is_displayed()
    assert "app=web" in panel.text

    browser.find_element(By.CSS_SELECTOR, '[data-pending="default/big"]').click()
    wait_text(browser, "#pod-explanation", "Insufficient cpu (requested 64000m, free 7000m)")
    assert "FailedScheduling" in panel.text
    screenshot("details")

    # Open details follow the pod: a delta that changes it fetches them again.
    fixture_server.set_details(
        "default/big", {"explanation": "node-4: would fit after preempting batch/low-1"}
    )
    big = pod("default/big", priority=500, reason="Unschedulable", message="nominated")
    fixture_server.push(
        {"revision": 2, "pods": {"upsert": {"default/big": big}}, "summary": small_state()["summary"]}
    )
    wait_text(browser, "#pod-explanation", "would fit after preempting batch/low-1")

    browser.find_element(By.ID, "details-close").click()
    assert not panel.is_displayed()


def test_the_stream_lost_shows_reconnecting_then_live_with_a_fresh_snapshot(
    browser: WebDriver, fixture_server: FixtureServer
) -> None:
    state = small_state()
    open_page(browser, fixture_server, state)

    fixture_server.drop_streams(refuse=True)
    wait_text(browser, "#status", "reconnecting")
    # What changed while the page was away arrives with the next snapshot.
    fixture_server.push(
        {
            "revision": 9,
            "nodes": {"upsert": {"node-9": node("node-9")}},
            "summary": summary({**state["nodes"], "node-9": node("node-9")}, state["pods"]),
        }
    )
    fixture_server.accept_streams()

    wait_text(browser, "#status", "live")
    wait_for(browser, '[data-node="node-9"]')


def test_an_api_server_the_view_cannot_reach_is_said_and_then_cleared(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    state = small_state()
    open_page(browser, fixture_server, state)
    badge = browser.find_element(By.ID, "api-server")
    assert not badge.is_displayed()

    gone = {"reachable": False, "since": "2026-11-27T05:01:02Z", "error": "connection refused"}
    fixture_server.push({"revision": 2, "apiServer": gone, "summary": state["summary"]})
    waiting(browser, 20).until(lambda d: d.find_element(By.ID, "api-server").is_displayed(),
                               "the page never said the API server is unreachable")
    assert badge.text.startswith("API server unreachable since")
    assert badge.get_attribute("title") == "connection refused"
    # The page's own stream is still live: the two are different things.
    assert browser.find_element(By.ID, "status").text == "live"
    screenshot("api-server-unreachable")

    back = {"reachable": True, "since": "2026-11-27T05:01:09Z", "error": ""}
    fixture_server.push({"revision": 3, "apiServer": back, "summary": state["summary"]})
    waiting(browser, 20).until(lambda d: not d.find_element(By.ID, "api-server").is_displayed(),
                               "the page kept saying the API server is unreachable")


def test_five_thousand_nodes_keep_the_dom_small_and_the_page_responsive(
    browser: WebDriver, fixture_server: FixtureServer, screenshot: Callable[[str], Path]
) -> None:
    open_page(browser, fixture_server, large_view_model(5000, 10000))
    wait_for(browser, '[data-node="node-00000"]')

    cards = len(browser.find_elements(By.CSS_SELECTOR, "[data-node]"))
    assert 0 < cards < 500
    assert browser.execute_script("return 1 + 1") == 2
    assert browser.find_element(By.ID, "sum-nodes").text == "5000/5000"
    screenshot("5000-nodes")

    # Scrolled to the end, the last nodes are in the DOM and the first ones are not.
    browser.execute_script("const s = document.getElementById('nodes'); s.scrollTop = s.scrollHeight")
    wait_for(browser, '[data-node="node-04999"]')
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-node="node-00000"]')
    assert len(browser.find_elements(By.CSS_SELECTOR, "[data-node]")) < 500

    # The filter brings any node into view, by name or by label.
    browser.execute_script("const s = document.getElementById('nodes'); s.scrollTop = 0")
    search = browser.find_element(By.ID, "node-filter")
    search.send_keys("node-02500")
    wait_for(browser, '[data-node="node-02500"] [data-pod]')
    assert len(browser.find_elements(By.CSS_SELECTOR, "[data-node]")) == 1
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys("zone-2")
    wait_text(browser, "#node-count", "1666 of 5000")

    # A delta on a 10000-pod state is still applied.
    fixture_server.push(
        {"revision": 2, "nodes": {"upsert": {"node-02": node("node-02", labels={"zone": "zone-2"})}}}
    )
    wait_text(browser, "#node-count", "1667 of 5001")
    assert browser.execute_script("return 1 + 1") == 2
