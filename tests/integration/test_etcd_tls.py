"""etcd with client-certificate auth, end to end: real etcd members serving TLS that requires client
certificates of its own CA (`podsched certs` files), and `podsched apiserver --etcd ... --etcd-cafile
--etcd-certfile --etcd-keyfile` on them (three members: one client of three addresses checks every
certificate under one name). Without the client certificate, without TLS, or with the wrong CA the API
server exits 1 with one line that says what to give."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml

from cluster.launcher.certs import Bundle, User, write_bundle
from cluster.launcher.etcd import EtcdCluster
from cluster.launcher.process import ApiServerProcess
from store.base import StoreUnavailable
from store.factory import open_store
from tests.conftest import _run
from tests.integration.helpers import REPO, pod_manifest, run_cli

pytestmark = pytest.mark.etcd


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return write_bundle(tmp_path_factory.mktemp("pki"), users=(User("admin", "admin"),))[0]


@pytest.fixture(scope="module")
def etcd(pki: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    # Three members: a client of several addresses checks every certificate under one name.
    cluster = EtcdCluster(3, tmp_path_factory.mktemp("etcd"), name_prefix="tls-etcd", tls=pki.etcd_tls())
    _run(cluster.start())
    try:
        yield cluster
    finally:
        _run(cluster.stop())


def test_the_members_serve_https_only(etcd: EtcdCluster) -> None:
    assert all(member.client_url.startswith("https://") for member in etcd.members)
    assert all(member.peer_url.startswith("https://") for member in etcd.members)


def test_the_api_server_stores_through_etcd_with_a_client_certificate(etcd: EtcdCluster, pki: Bundle) -> None:
    server = ApiServerProcess(["--etcd", ",".join(etcd.endpoints), *pki.etcd_client_flags()])
    with server:
        assert "(store: etcd 127.0.0.1:" in server.log() and "(TLS))" in server.log()
        manifest = yaml.safe_dump(pod_manifest("p", "etcd-tls"))
        created = run_cli(server.address, "apply", "-f", "-", input=manifest)
        assert created.code == 0, created.stderr
        listed = run_cli(server.address, "get", "pods", "-n", "etcd-tls", "-o", "name")
        assert listed.stdout.split() == ["pod/p"]


async def test_the_store_does_not_open_without_a_client_certificate(etcd: EtcdCluster, pki: Bundle) -> None:
    with pytest.raises(StoreUnavailable, match=f"etcd at {','.join(etcd.endpoints)} is unavailable"):
        await open_store(etcd_endpoints=etcd.endpoints, ca_cert=pki.path("etcd/ca.crt").read_bytes())


def start_failing(etcd: EtcdCluster, flags: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "127.0.0.1:0",
         "--etcd", ",".join(etcd.endpoints), *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip


def test_an_api_server_etcd_refuses_exits_1_saying_what_to_give(etcd: EtcdCluster, pki: Bundle) -> None:
    cases = {
        "no TLS at all": ([], "(if etcd serves TLS, give --etcd-cafile, and --etcd-certfile and"),
        "no client certificate": (
            ["--etcd-cafile", str(pki.path("etcd/ca.crt"))],
            "(etcd may require a client certificate: give --etcd-certfile and --etcd-keyfile)",
        ),
        "the cluster CA instead of etcd's": (
            ["--etcd-cafile", str(pki.ca_cert), *pki.etcd_client_flags()[2:]],
            f"(etcd's certificate is not signed by the CA in --etcd-cafile {pki.ca_cert})",
        ),
        "a user's certificate, of the cluster CA": (
            ["--etcd-cafile", str(pki.path("etcd/ca.crt")), "--etcd-certfile", str(pki.user_cert("admin")),
             "--etcd-keyfile", str(pki.user_key("admin"))],
            f"(etcd refused the client certificate --etcd-certfile {pki.user_cert('admin')}",
        ),
    }
    # In parallel: each waits a few seconds for etcd before it gives up.
    started = {case: start_failing(etcd, flags) for case, (flags, _) in cases.items()}
    for case, process in started.items():
        _, stderr = process.communicate(timeout=90)
        assert process.returncode == 1, f"{case}: {stderr}"
        assert "podsched apiserver: cannot open the store (etcd 127.0.0.1:" in stderr, case
        assert cases[case][1] in stderr, f"{case}: {stderr}"
        assert "serving on" not in stderr, case
