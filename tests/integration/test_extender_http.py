"""HTTPExtender against real HTTP(S) servers on loopback: what each verb sends (path, content type, exact
JSON), how answers map back onto the scheduler's nodes and pods, every kind of failure as an
ExtenderError, the metrics of each call, and TLS (a CA, client certificates, serverName, insecure)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiohttp import web

from cluster.api import objects_pb2
from cluster.api.convert import to_dict
from scheduler.cache.cache import snapshot_of
from scheduler.config import ExtenderConfig, ExtenderTLSConfig
from scheduler.extender.httpextender import HTTPExtender
from scheduler.extender.interface import ExtenderError, HostPriority, Victims
from scheduler.framework import NodeInfo
from scheduler.metrics import SchedulerMetrics
from tests.builders import container, node, node_info, pod

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The ``extenders`` fixture: url, optional metrics and ExtenderConfig fields -> an HTTPExtender.
MakeExtender = Callable[..., HTTPExtender]

#: How long a slow answer holds back; the test's httpTimeout is far shorter. Released at teardown.
SLOW_ANSWER_LIMIT_S = 30.0


@dataclass
class Received:
    path: str
    content_type: str
    body: Any


@dataclass
class FakeExtender:
    """Records every request and answers each path as the test says (500 for a path it did not set)."""

    url: str = ""
    answers: dict[str, Handler] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def answer_json(self, path: str, value: Any, status: int = 200) -> None:
        self.answer_raw(path, json.dumps(value), status)

    def answer_raw(self, path: str, text: str, status: int = 200) -> None:
        async def handler(request: web.Request) -> web.StreamResponse:
            return web.Response(text=text, status=status, content_type="application/json")

        self.answers[path] = handler

    def answer_slowly(self, path: str) -> None:
        async def handler(request: web.Request) -> web.StreamResponse:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), SLOW_ANSWER_LIMIT_S)
            return web.json_response({})

        self.answers[path] = handler

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.received.append(Received(request.path, request.content_type, json.loads(await request.read())))
        handler = self.answers.get(request.path)
        if handler is None:
            return web.Response(status=500, text="no answer set for this path")
        return await handler(request)


@contextlib.asynccontextmanager
async def serving(
    scheme: str = "http", ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[FakeExtender]:
    fake = FakeExtender()
    app = web.Application()
    app.router.add_post("/{path:.*}", fake.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
        await site.start()
        port = runner.addresses[0][1]
        fake.url = f"{scheme}://127.0.0.1:{port}/ext"
        yield fake
    finally:
        fake.release.set()
        await runner.cleanup()


@pytest.fixture
async def server() -> AsyncIterator[FakeExtender]:
    async with serving() as fake:
        yield fake


@pytest.fixture
async def extenders() -> AsyncIterator[MakeExtender]:
    """Builds HTTPExtenders (config fields as keywords) and closes them at teardown."""
    made: list[HTTPExtender] = []

    def make(url: str, metrics: SchedulerMetrics | None = None, **config: Any) -> HTTPExtender:
        made.append(HTTPExtender(ExtenderConfig(url_prefix=url, **config), metrics=metrics))
        return made[-1]

    yield make
    for extender in made:
        await extender.close()


def web_pod() -> objects_pb2.Pod:
    return pod(spec={"containers": [container({"example.com/gpu": "1"})]}, name="web", namespace="prod",
               uid="u-web")


def node_infos(*names: str) -> list[NodeInfo]:
    return [node_info(node(name, labels={"zone": "z1"})) for name in names]


# ------------------------------------------------------------------------------------------- filter


async def test_filter_sends_whole_nodes_and_maps_the_answer_onto_them(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url + "/", filter_verb="filter")  # kube trims the trailing "/"
    infos = node_infos("a", "b", "c")
    server.answer_json("/ext/filter", {
        "Nodes": {"metadata": {}, "items": [to_dict(infos[2].node), to_dict(infos[0].node)]},
        "NodeNames": None, "FailedNodes": {"b": "no gpu left"}, "FailedAndUnresolvableNodes": {}, "Error": "",
    })
    outcome = await extender.filter(web_pod(), infos)
    assert outcome.feasible == [infos[2], infos[0]]
    assert all(got is sent for got, sent in zip(outcome.feasible, [infos[2], infos[0]], strict=True))
    assert (outcome.failed, outcome.failed_and_unresolvable) == ({"b": "no gpu left"}, {})
    [received] = server.received
    assert (received.path, received.content_type) == ("/ext/filter", "application/json")
    assert received.body == {
        "Pod": to_dict(web_pod()),
        "Nodes": {"metadata": {}, "items": [to_dict(info.node) for info in infos]},
        "NodeNames": None,
    }


async def test_filter_sends_node_names_to_a_node_cache_capable_extender(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, filter_verb="filterVerb", node_cache_capable=True)
    infos = node_infos("a", "b", "c")
    server.answer_json("/ext/filterVerb",
                       {"nodenames": ["c", "a"], "failedAndUnresolvableNodes": {"b": "gone"}})
    outcome = await extender.filter(web_pod(), infos)
    assert (outcome.feasible, outcome.failed, outcome.failed_and_unresolvable) == (
        [infos[2], infos[0]], {}, {"b": "gone"})
    assert server.received[0].body == {"Pod": to_dict(web_pod()), "Nodes": None, "NodeNames": ["a", "b", "c"]}


@pytest.mark.parametrize(
    ("node_cache_capable", "answer", "feasible"),
    [
        (True, {"Nodes": {"items": [{"metadata": {"name": "b"}}]}, "NodeNames": None}, ["b"]),
        (False, {"Nodes": None, "NodeNames": ["a"]}, []),
        (True, {"Nodes": None, "NodeNames": None}, []),
    ],
    ids=["cache-capable-without-names-uses-nodes", "names-ignored-unless-cache-capable", "neither-no-node"],
)
async def test_filter_applies_kube_schedulers_rule_on_nodes_and_node_names(
    server: FakeExtender, extenders: MakeExtender, node_cache_capable: bool, answer: dict[str, Any],
    feasible: list[str],
) -> None:
    extender = extenders(server.url, filter_verb="filter", node_cache_capable=node_cache_capable)
    server.answer_json("/ext/filter", answer)
    outcome = await extender.filter(web_pod(), node_infos("a", "b"))
    assert [info.name for info in outcome.feasible] == feasible


async def test_filter_refuses_a_node_that_was_not_sent(server: FakeExtender, extenders: MakeExtender) -> None:
    extender = extenders(server.url, filter_verb="filter", node_cache_capable=True)
    server.answer_json("/ext/filter", {"NodeNames": ["a", "zz"]})
    with pytest.raises(ExtenderError) as caught:
        await extender.filter(web_pod(), node_infos("a", "b"))
    assert str(caught.value) == (
        f'extender {server.url} claims a filtered node "zz" which is not found in the input node list')


async def test_filter_error_field_fails_the_call(server: FakeExtender, extenders: MakeExtender) -> None:
    extender = extenders(server.url, filter_verb="filter")
    server.answer_json("/ext/filter", {"Error": "license server down", "NodeNames": ["a"]})
    with pytest.raises(ExtenderError) as caught:
        await extender.filter(web_pod(), node_infos("a"))
    assert str(caught.value) == f"extender {server.url}: filter returned an error: license server down"


# --------------------------------------------------------------------------------- prioritize, bind


async def test_prioritize_returns_the_scores_and_the_configured_weight(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, prioritize_verb="prioritize", weight=3, node_cache_capable=True)
    server.answer_json("/ext/prioritize", [{"Host": "a", "Score": 2}, {"host": "b", "score": 10}])
    priorities, weight = await extender.prioritize(web_pod(), node_infos("a", "b"))
    assert (priorities, weight) == ([HostPriority("a", 2), HostPriority("b", 10)], 3)
    [received] = server.received
    assert (received.path, received.body) == (
        "/ext/prioritize", {"Pod": to_dict(web_pod()), "Nodes": None, "NodeNames": ["a", "b"]})


async def test_bind_sends_the_binding_and_fails_on_its_error(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, bind_verb="bind")
    server.answer_json("/ext/bind", {"Error": ""})
    await extender.bind(web_pod(), "a")
    assert [(r.path, r.content_type, r.body) for r in server.received] == [(
        "/ext/bind", "application/json",
        {"PodName": "web", "PodNamespace": "prod", "PodUID": "u-web", "Node": "a"})]
    server.answer_json("/ext/bind", {"error": "node a is full"})
    with pytest.raises(ExtenderError, match=r": bind returned an error: node a is full$"):
        await extender.bind(web_pod(), "a")


# --------------------------------------------------------------------------------------- preemption


def victim(name: str, node_name: str) -> objects_pb2.Pod:
    return pod(name=name, namespace="prod", uid=f"u-{name}", node_name=node_name)


async def test_preemption_maps_uids_back_onto_the_pods_of_each_node(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, preempt_verb="preempt", node_cache_capable=True)
    snapshot = snapshot_of([node("a"), node("b")], [victim("v1", "a"), victim("v2", "a"), victim("v3", "b")])
    pods_a, pods_b = snapshot.get("a").pods, snapshot.get("b").pods
    candidates = {"a": Victims((pods_a["prod/v1"], pods_a["prod/v2"]), 1),
                  "b": Victims((pods_b["prod/v3"],), 0)}
    server.answer_json("/ext/preempt", {"NodeNameToMetaVictims": {
        "a": {"Pods": [{"UID": "u-v2"}], "NumPDBViolations": 0}}})
    result = await extender.process_preemption(web_pod(), candidates, snapshot)
    assert result == {"a": Victims((pods_a["prod/v2"],), 0)}
    assert set(candidates) == {"a", "b"} and len(candidates["a"].pods) == 2  # the input is left as it was
    assert server.received[0].body == {
        "Pod": to_dict(web_pod()),
        "NodeNameToVictims": None,
        "NodeNameToMetaVictims": {
            "a": {"Pods": [{"UID": "u-v1"}, {"UID": "u-v2"}], "NumPDBViolations": 1},
            "b": {"Pods": [{"UID": "u-v3"}], "NumPDBViolations": 0},
        },
    }


async def test_preemption_sends_whole_victims_unless_node_cache_capable(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, preempt_verb="preempt")
    snapshot = snapshot_of([node("a")], [victim("v1", "a")])
    candidate = snapshot.get("a").pods["prod/v1"]
    server.answer_json("/ext/preempt", {"NodeNameToMetaVictims": {}})
    assert await extender.process_preemption(web_pod(), {"a": Victims((candidate,), 0)}, snapshot) == {}
    assert server.received[0].body == {
        "Pod": to_dict(web_pod()),
        "NodeNameToVictims": {"a": {"Pods": [to_dict(candidate.pod)], "NumPDBViolations": 0}},
        "NodeNameToMetaVictims": None,
    }


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"a": {"Pods": [{"UID": "u-v3"}]}},
         "extender {url} claims to preempt pod (UID: u-v3) on node a, but the pod is not found on that node"),
        ({"zz": {"Pods": []}},
         "extender {url} claims to preempt pods on node \"zz\", which is not in the scheduler's snapshot"),
    ],
    ids=["pod-on-another-node", "unknown-node"],
)
async def test_preemption_refuses_victims_the_scheduler_does_not_have(
    server: FakeExtender, extenders: MakeExtender, answer: dict[str, Any], message: str
) -> None:
    extender = extenders(server.url, preempt_verb="preempt", node_cache_capable=True)
    snapshot = snapshot_of([node("a"), node("b")], [victim("v1", "a"), victim("v3", "b")])
    server.answer_json("/ext/preempt", {"NodeNameToMetaVictims": answer})
    with pytest.raises(ExtenderError) as caught:
        await extender.process_preemption(web_pod(), {"a": Victims((snapshot.get("a").pods["prod/v1"],), 0)},
                                          snapshot)
    assert str(caught.value) == message.format(url=server.url)


# ------------------------------------------------------------------------------------------ failures


async def test_a_slow_extender_times_out(server: FakeExtender, extenders: MakeExtender) -> None:
    extender = extenders(server.url, filter_verb="filter", http_timeout_seconds=0.3)
    server.answer_slowly("/ext/filter")
    with pytest.raises(ExtenderError) as caught:
        await extender.filter(web_pod(), node_infos("a"))
    assert str(caught.value) == f"extender {server.url}: filter timed out after 0.3s"


async def test_a_status_other_than_200_fails_with_kube_schedulers_message(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    extender = extenders(server.url, prioritize_verb="score", weight=1)
    server.answer_json("/ext/score", {"error": "boom"}, status=500)
    with pytest.raises(ExtenderError) as caught:
        await extender.prioritize(web_pod(), node_infos("a"))
    assert str(caught.value) == f"failed score with extender at URL {server.url}/score, code 500"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<html>oops</html>", r"filter answered with a body that is not JSON: Expecting value"),
        ("", r"filter answered with a body that is not JSON"),
        ('{"FailedNodes": ["a"]}', r"filter answered with a malformed body: FailedNodes: expected an object "
                                   r"of node name to message, got a list$"),
    ],
    ids=["html", "empty", "wrong-type"],
)
async def test_an_answer_that_does_not_parse_fails(
    server: FakeExtender, extenders: MakeExtender, body: str, message: str
) -> None:
    extender = extenders(server.url, filter_verb="filter")
    server.answer_raw("/ext/filter", body)
    with pytest.raises(ExtenderError, match=rf"^extender {server.url}: {message}"):
        await extender.filter(web_pod(), node_infos("a"))


async def test_an_unreachable_extender_fails(extenders: MakeExtender) -> None:
    async with serving() as stopped:
        url = stopped.url
    extender = extenders(url, bind_verb="bind")
    with pytest.raises(ExtenderError, match=rf"^extender {url}: bind failed: POST {url}/bind: "):
        await extender.bind(web_pod(), "a")


async def test_each_call_is_measured_and_each_failure_counted(
    server: FakeExtender, extenders: MakeExtender
) -> None:
    metrics = SchedulerMetrics()
    extender = extenders(server.url, metrics, filter_verb="filter", node_cache_capable=True)
    server.answer_json("/ext/filter", {"NodeNames": ["a"]})
    await extender.filter(web_pod(), node_infos("a"))
    server.answer_json("/ext/filter", {"Error": "no"})
    with pytest.raises(ExtenderError):
        await extender.filter(web_pod(), node_infos("a"))
    server.answer_raw("/ext/filter", "{}", status=503)
    with pytest.raises(ExtenderError):
        await extender.filter(web_pod(), node_infos("a"))
    await extender.prioritize(web_pod(), node_infos("a"))  # no prioritizeVerb: answered without a call

    def sample(name: str, verb: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"extender": server.url, "verb": verb})

    assert sample("podsched_extender_request_duration_seconds_count", "filter") == 3
    assert sample("podsched_extender_errors_total", "filter") == 2
    assert sample("podsched_extender_request_duration_seconds_count", "prioritize") is None


# ----------------------------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def server_context(ca: trustme.CA, *, hostname: str = "127.0.0.1", client_ca: trustme.CA | None = None
                   ) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(hostname).configure_cert(context)
    if client_ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        client_ca.configure_trust(context)
    return context


def client_certificate(ca: trustme.CA) -> dict[str, bytes]:
    issued = ca.issue_cert("podsched-scheduler")
    return {"cert_data": issued.cert_chain_pems[0].bytes(), "key_data": issued.private_key_pem.bytes()}


async def bind_over(url: str, extenders: MakeExtender, tls: ExtenderTLSConfig | None, **config: Any) -> None:
    await extenders(url, bind_verb="bind", tls_config=tls, **config).bind(web_pod(), "a")


async def test_https_with_a_ca(ca: trustme.CA, extenders: MakeExtender) -> None:
    async with serving("https", server_context(ca)) as fake:
        fake.answer_json("/ext/bind", {})
        await bind_over(fake.url, extenders, ExtenderTLSConfig(ca_data=ca.cert_pem.bytes()))
        assert [r.path for r in fake.received] == ["/ext/bind"]


async def test_https_with_a_ca_file_and_a_client_certificate(
    ca: trustme.CA, extenders: MakeExtender, tmp_path: Path
) -> None:
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    issued = ca.issue_cert("podsched-scheduler")
    issued.cert_chain_pems[0].write_to_path(str(cert_file))
    issued.private_key_pem.write_to_path(str(key_file))
    async with serving("https", server_context(ca, client_ca=ca)) as fake:
        fake.answer_json("/ext/bind", {})
        await bind_over(fake.url, extenders, ExtenderTLSConfig(
            ca_file=str(ca_file), cert_file=str(cert_file), key_file=str(key_file)))
        await bind_over(fake.url, extenders,
                        ExtenderTLSConfig(ca_data=ca.cert_pem.bytes(), **client_certificate(ca)))
        assert len(fake.received) == 2


async def test_mutual_tls_refuses_a_client_without_a_certificate(
    ca: trustme.CA, extenders: MakeExtender
) -> None:
    async with serving("https", server_context(ca, client_ca=ca)) as fake:
        fake.answer_json("/ext/bind", {})
        with pytest.raises(ExtenderError, match=rf"^extender {fake.url}: bind failed: "):
            await bind_over(fake.url, extenders, ExtenderTLSConfig(ca_data=ca.cert_pem.bytes()))
        assert fake.received == []


async def test_a_server_certificate_from_another_ca_is_refused(
    ca: trustme.CA, extenders: MakeExtender
) -> None:
    other_ca = trustme.CA()
    async with serving("https", server_context(ca)) as fake:
        with pytest.raises(ExtenderError, match="certificate verify failed"):
            await bind_over(fake.url, extenders, ExtenderTLSConfig(ca_data=other_ca.cert_pem.bytes()))
        assert fake.received == []


async def test_server_name_is_the_name_checked(ca: trustme.CA, extenders: MakeExtender) -> None:
    async with serving("https", server_context(ca, hostname="extender.example")) as fake:
        fake.answer_json("/ext/bind", {})
        with pytest.raises(ExtenderError, match="certificate verify failed"):
            await bind_over(fake.url, extenders, ExtenderTLSConfig(ca_data=ca.cert_pem.bytes()))
        await bind_over(fake.url, extenders,
                        ExtenderTLSConfig(ca_data=ca.cert_pem.bytes(), server_name="extender.example"))
        assert len(fake.received) == 1


@pytest.mark.parametrize(
    ("tls", "enable_https"),
    [(None, True), (ExtenderTLSConfig(insecure=True), False)],
    ids=["enable-https-without-a-ca", "insecure"],
)
async def test_https_without_verification(
    ca: trustme.CA, extenders: MakeExtender, tls: ExtenderTLSConfig | None, enable_https: bool
) -> None:
    """kube-scheduler: enableHTTPS with no CA does not verify the server (and neither does insecure)."""
    async with serving("https", server_context(ca)) as fake:
        fake.answer_json("/ext/bind", {})
        await bind_over(fake.url, extenders, tls, enable_https=enable_https)
        assert len(fake.received) == 1


async def test_https_without_tls_settings_verifies_against_the_system_cas(
    ca: trustme.CA, extenders: MakeExtender
) -> None:
    """No tlsConfig and no enableHTTPS: an https URL is verified as any client would, against the
    system's CAs (which do not know the test's CA)."""
    async with serving("https", server_context(ca)) as fake:
        with pytest.raises(ExtenderError, match="certificate verify failed"):
            await bind_over(fake.url, extenders, None)
        assert fake.received == []
