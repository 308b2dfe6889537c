"""`podsched up` gives each API server the Kubernetes HTTP API beside gRPC (the first on --http-listen, by
default the port after --listen's; the others on free ports) and writes a kubeconfig for the first's: the
command lines it builds and the kubeconfig's content, without starting a process."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from cluster.cli.main import main
from cluster.launcher.certs import Bundle, write_bundle
from cluster.launcher.localcluster import LocalCluster, UpConfig, UpConfigError
from cluster.launcher.process import ApiServerProcess

STORE = ["--data-dir", "/var/lib/podsched"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    written, _ = write_bundle(tmp_path_factory.mktemp("pki"))
    return written


def flag(command: list[str], name: str) -> str:
    assert command.count(name) == 1, f"{name} given {command.count(name)} times in {command}"
    return command[command.index(name) + 1]


def port_of(address: str) -> int:
    return int(address.rpartition(":")[2])


@pytest.mark.parametrize(("config", "first"), [
    (UpConfig(), "127.0.0.1:7444"),
    (UpConfig(host="0.0.0.0", port=6443), "0.0.0.0:6444"),
    (UpConfig(port=0), "127.0.0.1:0"),
    (UpConfig(http_listen="127.0.0.2:8443"), "127.0.0.2:8443"),
    (UpConfig(host="[::1]", port=7443), "[::1]:7444"),
])  # fmt: skip
def test_the_first_api_server_serves_http_beside_grpc(config: UpConfig, first: str) -> None:
    assert config.apiserver_http_listen(1) == first


@pytest.mark.parametrize("config", [UpConfig(), UpConfig(http_listen="127.0.0.2:8443")])
def test_the_others_serve_http_on_free_ports_of_the_same_host(config: UpConfig) -> None:
    host = config.apiserver_http_listen(1).rpartition(":")[0]
    assert config.apiserver_http_listen(2) == f"{host}:0"


def test_each_api_server_is_started_with_its_http_address() -> None:
    up = LocalCluster(UpConfig(port=7443), report=lambda line: None)
    first, second = up.apiserver_process(1, STORE), up.apiserver_process(2, STORE)
    assert flag(first.command(), "--listen") == "127.0.0.1:7443"
    assert flag(first.command(), "--http-listen") == first.http_address == "127.0.0.1:7444"
    # A free port, chosen once: a restart serves the same address.
    assert flag(second.command(), "--listen") == "127.0.0.1:0"
    assert port_of(flag(second.command(), "--http-listen")) > 0
    assert second.command() == second.command()
    assert first.command()[:3] == ["-m", "cluster.cli", "apiserver"]
    assert first.command()[-len(first.extra_args):] == first.extra_args


def test_with_tls_the_http_api_serves_the_same_certificate_and_authentication(bundle: Bundle) -> None:
    up = LocalCluster(UpConfig(tls=True), report=lambda line: None)
    up.bundle = bundle
    command = up.apiserver_process(1, STORE).command()
    assert flag(command, "--http-listen") == "127.0.0.1:7444"
    for name, value in zip(bundle.apiserver_flags()[::2], bundle.apiserver_flags()[1::2], strict=True):
        assert flag(command, name) == value


def test_a_process_without_http_listen_serves_grpc_alone() -> None:
    process = ApiServerProcess(STORE, port=7443)
    assert process.http_address is None
    assert "--http-listen" not in process.command()


def test_the_kubeconfig_is_plaintext_without_tls() -> None:
    up = LocalCluster(UpConfig(), report=lambda line: None)
    up.apiservers["apiserver-1"] = up.apiserver_process(1, STORE)
    config = up.admin_kubeconfig()
    assert config["clusters"] == [{"name": "podsched", "cluster": {"server": "http://127.0.0.1:7444"}}]
    assert config["users"] == [{"name": "podsched", "user": {}}]
    assert config["current-context"] == "podsched"


def test_the_kubeconfig_is_the_admin_users_with_tls(
    bundle: Bundle, kubernetes_module: ModuleType, tmp_path: Path
) -> None:
    up = LocalCluster(UpConfig(tls=True, port=0), report=lambda line: None)
    up.bundle = bundle
    up.apiservers["apiserver-1"] = up.apiserver_process(1, STORE)
    up._data_dir = tmp_path  # as start() sets it
    # What `up` does once the API servers serve.
    path = up._write_kubeconfig()
    assert path == tmp_path / "kubeconfig"
    assert path.stat().st_mode & 0o777 == 0o600
    configuration = kubernetes_module.client.Configuration()
    kubernetes_module.config.load_kube_config(config_file=str(path), client_configuration=configuration)
    assert configuration.host == f"https://{up.apiservers['apiserver-1'].http_address}"
    assert configuration.ssl_ca_cert == str(bundle.ca_cert)
    assert configuration.cert_file == str(bundle.user_cert("admin"))
    assert configuration.key_file == str(bundle.user_key("admin"))


@pytest.mark.parametrize(("config", "message"), [
    (dict(http_listen="8443"), '--http-listen: invalid address "8443"'),
    (dict(http_listen="127.0.0.1:7443"), "--http-listen: 127.0.0.1:7443 is --listen's address too"),
    (dict(port=65535), "--listen: port 65535 leaves no port beside it for the HTTP API"),
])  # fmt: skip
def test_an_http_address_that_cannot_work_is_refused(config: dict[str, object], message: str) -> None:
    with pytest.raises(UpConfigError, match=message):
        UpConfig(**config)


def test_up_takes_the_http_address_from_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["up", "--http-listen", "localhost"]) == 2
    assert '--http-listen: invalid address "localhost"' in capsys.readouterr().err
