"""The web view as a person uses it: `podsched up --ui` as real processes (API server, three scheduler
replicas electing a leader, the UI), the page in headless Chromium, pods applied with the CLI, and the
leader SIGKILLed while the page watches."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser.waits import wait_for, wait_text, waiting
from tests.integration.helpers import EXAMPLES, pod_manifest, run_cli
from tests.integration.upprocess import LEADER, TIMINGS, Up

# The failover's bound is a wall-clock one: `make test` runs this module in its serial phase.
pytestmark = pytest.mark.timing

LEASE_DURATION_S = float(TIMINGS[TIMINGS.index("--leader-elect-lease-duration") + 1].rstrip("s"))
#: What a person watching may expect: the new holder on the page within the lease duration and a second.
HOLDER_ON_PAGE_BOUND_S = LEASE_DURATION_S + 1.0


class LiveCluster:
    def __init__(self, up: Up, url: str, server: str) -> None:
        self.up = up
        self.url = url
        self.server = server

    def apply(self, tmp_path: Path, documents: list[dict]) -> None:
        manifest = tmp_path / f"{documents[0]['metadata']['name']}.yaml"
        manifest.write_text(yaml.safe_dump_all(documents))
        done = run_cli(self.server, "apply", "-f", str(manifest))
        assert done.code == 0, done


@pytest.fixture(scope="module")
def cluster() -> Iterator[LiveCluster]:
    up = Up("--replicas", "3", "--nodes", "3", "--listen", "127.0.0.1:0",
            "--ui", "--ui-listen", "127.0.0.1:0", *TIMINGS)
    try:
        url = up.wait_for(r"ui: (http://\S+)")[1]
        server = up.wait_for(r"export PODSCHED_SERVER=(\S+)")[1]
        up.wait_for(LEADER)
        yield LiveCluster(up, url, server)
    finally:
        code, err = up.stop(signal.SIGINT)
        assert code == 0, f"up exited {code}:\n{up.out}\n{err}"


def _pod(name: str, cpu: str) -> dict:
    manifest = pod_manifest(name, "default")
    manifest["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": "64Mi"}}
    return manifest


def test_nodes_and_pods_appear_as_they_are_applied_and_a_pending_pod_says_why(
    cluster: LiveCluster, browser: WebDriver, tmp_path: Path, screenshot: Callable[[str], Path]
) -> None:
    browser.get(cluster.url)
    wait_text(browser, "#status", "live")
    for name in ("node-1", "node-2", "node-3"):
        wait_for(browser, f'[data-node="{name}"]')

    cluster.apply(tmp_path, [_pod(f"web-{i}", "500m") for i in range(4)])
    for i in range(4):
        chip = wait_for(browser, f'[data-node] [data-pod="default/web-{i}"]')
        assert chip.is_displayed()

    # 100 cpu fits none of the 8-cpu nodes: the page shows the scheduler's reason.
    cluster.apply(tmp_path, [_pod("too-big", "100")])
    pending = '[data-pending="default/too-big"]'
    wait_text(browser, pending, "Insufficient cpu")
    assert "0/3 nodes are available" in browser.find_element(By.CSS_SELECTOR, pending).text

    # Its details carry the explanation describe prints.
    browser.find_element(By.CSS_SELECTOR, pending).click()
    wait_text(browser, "#pod-explanation", "Insufficient cpu")
    assert "node-1" in browser.find_element(By.ID, "pod-explanation").text
    screenshot("pending-details")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)


def test_devices_of_the_dra_example_show_the_pods_holding_them(
    cluster: LiveCluster, browser: WebDriver
) -> None:
    """examples/dra's class, slices and whole-GPU pods applied to `podsched up`'s own nodes: the cards of
    node-1 and node-2 show their GPUs, node-1's held by the trainers' claims."""
    example = EXAMPLES / "dra"
    done = run_cli(cluster.server, "apply", *(arg for name in ("deviceclass", "resourceslices", "whole-gpu")
                                              for arg in ("-f", str(example / f"{name}.yaml"))))
    assert done.code == 0, done
    browser.get(cluster.url)
    wait_text(browser, "#status", "live")
    held = '[data-node="node-1"] [data-device^="gpu.example.com/node-1/gpu-"]'
    waiting(browser, 30).until(
        lambda d: sorted(tag.get_attribute("data-holders") for tag in d.find_elements(By.CSS_SELECTOR, held))
        == ["default/trainer-0", "default/trainer-1"],
        "node-1's GPUs not shown held by the two trainers",
    )
    shared = wait_for(browser, '[data-node="node-2"] [data-device="gpu.example.com/node-2/gpu-0"]')
    assert (shared.text, shared.get_attribute("data-holders")) == ("gpu-0", "")
    assert shared.get_attribute("title").split("\n") == ["gpu.example.com/node-2/gpu-0 (shared)", "free"]


def test_the_holder_changes_on_the_page_within_the_lease_duration_and_a_second_after_sigkill(
    cluster: LiveCluster, browser: WebDriver, screenshot: Callable[[str], Path]
) -> None:
    browser.get(cluster.url)
    wait_text(browser, "#status", "live")
    holder = wait_for(browser, "#leader-holder").text
    leaders = re.findall(LEADER, cluster.up.out)
    identity = leaders[-1][0]
    assert holder == identity, (holder, cluster.up.out)
    pid = int(re.findall(rf"pid (\d+), identity {re.escape(identity)}", cluster.up.out)[-1])
    # Every replica keeps its LeaseCandidate: the standbys, which never led, are on the page too.
    waiting(browser, 30).until(
        lambda d: len(_replica_states(d)) == 3, "the page never listed the three replicas"
    )
    states = _replica_states(browser)
    assert states[identity] == "leader", states
    assert sorted(states.values()) == ["leader", "standby", "standby"], states
    # `podsched up` names each replica, with its pid, in its identity.
    assert all(re.fullmatch(r"scheduler-[1-3]_pid\d+_[0-9a-f]{8}", name) for name in states), states
    assert f"_pid{pid}_" in identity, identity
    timeline_before = len(_timeline(browser))
    screenshot("before-kill")

    lines_before = len(cluster.up.lines)
    os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    waiting(browser, 30).until(
        lambda d: d.find_element(By.ID, "leader-holder").text not in (identity, "none", ""),
        "the page never showed a new holder",
    )
    took = time.monotonic() - killed_at
    new_holder, token = browser.execute_script(
        "return ['leader-holder', 'leader-token'].map(id => document.getElementById(id).innerText);"
    )
    rows = _timeline(browser)
    screenshot("after-kill")

    # The page agrees with what `podsched up` saw, and counts the change in its timeline.
    seen = cluster.up.wait_for(LEADER, after=lines_before)
    assert new_holder == seen[1]
    assert int(token) == int(seen[3])
    assert len(rows) == timeline_before + 1
    assert new_holder in rows[0] and "leaderless" in rows[0]
    assert took <= HOLDER_ON_PAGE_BOUND_S, f"the page showed the new holder {took:.2f}s after the SIGKILL"
    # The killed replica's candidate is no longer renewed: the page says since when.
    killed = f'#leader-replicas [data-replica="{identity}"]'
    wait_text(browser, f'{killed}[data-renewing="false"]', "not renewing since", timeout=3 * LEASE_DURATION_S)


def _replica_states(browser: WebDriver) -> dict[str, str | None]:
    # One script reads every row at once: the page re-renders the list as leases renew, so rows
    # found first and read one by one afterwards can be gone by then.
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#leader-replicas [data-replica]'))"
        ".map(row => [row.dataset.replica, row.dataset.state ?? null]);"
    )
    return {replica: state for replica, state in rows}


def _timeline(browser: WebDriver) -> list[str]:
    """The leadership timeline's rows, newest first, read in one script for the same reason."""
    return list(browser.execute_script(
        "return Array.from(document.querySelectorAll('#leader-timeline li')).map(row => row.innerText);"
    ))
