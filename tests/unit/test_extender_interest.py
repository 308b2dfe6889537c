"""HTTPExtender without the network: which pods it is asked about (managedResources), the answers of
verbs it does not have (given locally, without a call), and TLS settings refused at construction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trustme

from cluster.api import objects_pb2
from scheduler.config import ExtenderConfig, ExtenderManagedResource, ExtenderTLSConfig
from scheduler.extender.httpextender import HTTPExtender
from scheduler.extender.interface import ExtenderError, HostPriority
from tests.builders import node, node_info, pod

# Nothing listens here: a test that made a call would fail with a connection error.
UNUSED_URL = "http://127.0.0.1:9/extender"


def extender(*managed: str, **config: Any) -> HTTPExtender:
    return HTTPExtender(ExtenderConfig(
        url_prefix=config.pop("url_prefix", UNUSED_URL),
        managed_resources=tuple(ExtenderManagedResource(name) for name in managed),
        **config,
    ))


def with_resources(where: str, kind: str, resources: dict[str, str]) -> objects_pb2.Pod:
    return pod(spec={where: [{"name": "c", "resources": {kind: resources}}]})


@pytest.mark.parametrize(
    ("managed", "pod_", "interested"),
    [
        ((), pod(), True),
        ((), with_resources("containers", "requests", {"example.com/gpu": "1"}), True),
        (("example.com/gpu",), pod(), False),
        (("example.com/gpu",), with_resources("containers", "requests", {"example.com/gpu": "1"}), True),
        (("example.com/gpu",), with_resources("containers", "limits", {"example.com/gpu": "1"}), True),
        (("example.com/gpu",), with_resources("initContainers", "requests", {"example.com/gpu": "1"}), True),
        (("example.com/gpu",), with_resources("initContainers", "limits", {"example.com/gpu": "1"}), True),
        (("example.com/gpu",),
         with_resources("containers", "requests", {"cpu": "1", "example.com/fpga": "1"}), False),
        (("example.com/fpga", "example.com/gpu"),
         pod(spec={"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}},
                             {"name": "b", "resources": {"limits": {"example.com/gpu": "2"}}}]}), True),
    ],
    ids=[
        "no-managed-resources-every-pod", "no-managed-resources-resource-pod", "managed-not-requested",
        "container-request", "container-limit", "init-container-request", "init-container-limit",
        "other-resources-only", "second-container-limit",
    ],
)
def test_is_interested(managed: tuple[str, ...], pod_: objects_pb2.Pod, interested: bool) -> None:
    assert extender(*managed).is_interested(pod_) is interested


def test_capabilities_follow_the_configured_verbs() -> None:
    none = extender()
    every = extender(filter_verb="filter", prioritize_verb="prioritize", preempt_verb="preempt",
                     bind_verb="bind", weight=2, ignorable=True)
    assert (none.name, none.is_filter, none.is_prioritizer, none.supports_preemption, none.is_binder,
            none.ignorable) == (UNUSED_URL, False, False, False, False, False)
    assert (every.is_filter, every.is_prioritizer, every.supports_preemption, every.is_binder,
            every.ignorable) == (True, True, True, True, True)


async def test_verbs_that_are_not_configured_are_answered_without_a_call() -> None:
    """kube-scheduler: no filterVerb keeps every node, no prioritizeVerb scores every node 0 with
    weight 0; preempting or binding with an extender that cannot is an error."""
    plain = extender()
    nodes = [node_info(node("a")), node_info(node("b"))]
    outcome = await plain.filter(pod(), nodes)
    assert (outcome.feasible, outcome.failed, outcome.failed_and_unresolvable) == (nodes, {}, {})
    assert await plain.prioritize(pod(), nodes) == ([HostPriority("a", 0), HostPriority("b", 0)], 0)
    with pytest.raises(ExtenderError, match="without a preemptVerb"):
        await plain.process_preemption(pod(), {}, None)  # type: ignore[arg-type]  # never consulted
    with pytest.raises(ExtenderError, match="without a bindVerb"):
        await plain.bind(pod(), "a")
    await plain.close()


# ---------------------------------------------------------------------------------------- bad TLS


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def https_extender(tls: ExtenderTLSConfig) -> HTTPExtender:
    return extender(url_prefix="https://127.0.0.1:9/extender", tls_config=tls)


def test_a_missing_ca_file_is_refused_at_construction(tmp_path: Path) -> None:
    missing = tmp_path / "missing-ca.pem"
    with pytest.raises(ValueError, match=r"extender https://127\.0\.0\.1:9/extender: tlsConfig\.caFile "
                                         rf"{missing}: cannot load a CA"):
        https_extender(ExtenderTLSConfig(ca_file=str(missing)))


def test_ca_data_that_is_not_pem_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match=r"tlsConfig\.caData: not a PEM certificate"):
        https_extender(ExtenderTLSConfig(ca_data=b"not a certificate"))


def test_a_client_key_that_does_not_match_is_refused_at_construction(ca: trustme.CA, tmp_path: Path) -> None:
    client, other = ca.issue_cert("client"), ca.issue_cert("other")
    key_file = tmp_path / "key.pem"
    other.private_key_pem.write_to_path(str(key_file))
    with pytest.raises(ValueError, match=rf"cannot load the client certificate from certData and keyFile "
                                         rf"{key_file}"):
        https_extender(ExtenderTLSConfig(
            ca_data=ca.cert_pem.bytes(), cert_data=client.cert_chain_pems[0].bytes(), key_file=str(key_file)))


def test_a_client_certificate_without_a_key_is_refused_at_construction(ca: trustme.CA) -> None:
    with pytest.raises(ValueError, match=r"no key \(keyFile or keyData\)"):
        https_extender(ExtenderTLSConfig(cert_data=ca.issue_cert("client").cert_chain_pems[0].bytes()))


def test_a_ca_with_insecure_is_refused_at_construction(ca: trustme.CA) -> None:
    """client-go refuses a root certificate with the insecure flag: one of them is a mistake."""
    with pytest.raises(ValueError, match="with insecure is not allowed"):
        https_extender(ExtenderTLSConfig(insecure=True, ca_data=ca.cert_pem.bytes()))
