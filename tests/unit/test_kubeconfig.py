"""`podsched kubeconfig` and the kubeconfig it writes: the document kubectl and the official Python client
read (one cluster, user and context; https with TLS files, paths or embedded data), the file's mode, and
each kind of bad input refused with an error naming it, nothing written."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from cluster.cli.main import main
from cluster.client import ClientCredentials
from cluster.client.kubeconfig import KubeconfigError, kubeconfig, server_url
from cluster.launcher.certs import Bundle, write_bundle

TOKEN = "0123456789abcdef"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    written, _ = write_bundle(tmp_path_factory.mktemp("pki"))
    return written


@pytest.fixture(autouse=True)
def no_client_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("PODSCHED_TOKEN", "PODSCHED_CA_FILE", "PODSCHED_CLIENT_CERT", "PODSCHED_CLIENT_KEY"):
        monkeypatch.delenv(variable, raising=False)


def run(*argv: str) -> int:
    return main(["kubeconfig", *argv])


def written(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


def only(document: dict[str, Any], section: str) -> dict[str, Any]:
    (entry,) = document[section]
    assert entry["name"] == document["current-context"]
    return dict(entry[section.removesuffix("s")])


# ------------------------------------------------------------------------------------------ the document


def test_a_token_over_plaintext_is_one_cluster_user_and_context() -> None:
    assert kubeconfig("127.0.0.1:8080", ClientCredentials(token=TOKEN)) == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "podsched", "cluster": {"server": "http://127.0.0.1:8080"}}],
        "users": [{"name": "podsched", "user": {"token": TOKEN}}],
        "contexts": [{"name": "podsched", "context": {"cluster": "podsched", "user": "podsched"}}],
        "current-context": "podsched",
        "preferences": {},
    }


def test_tls_files_make_an_https_server_and_are_named_by_absolute_path(bundle: Bundle) -> None:
    document = kubeconfig("localhost:6443", bundle.user_credentials("admin"), name="dev")
    assert document["current-context"] == "dev"
    assert only(document, "clusters") == {"server": "https://localhost:6443",
                                          "certificate-authority": str(bundle.ca_cert)}
    assert only(document, "users") == {"client-certificate": str(bundle.user_cert("admin")),
                                       "client-key": str(bundle.user_key("admin"))}


def test_embedded_files_hold_what_the_files_hold(bundle: Bundle) -> None:
    document = kubeconfig("localhost:6443", bundle.user_credentials("admin"), embed=True)
    cluster, user = only(document, "clusters"), only(document, "users")
    assert base64.b64decode(cluster["certificate-authority-data"]) == bundle.ca_cert.read_bytes()
    assert base64.b64decode(user["client-certificate-data"]) == bundle.user_cert("admin").read_bytes()
    assert base64.b64decode(user["client-key-data"]) == bundle.user_key("admin").read_bytes()
    assert "certificate-authority" not in cluster and "client-key" not in user


def test_the_tls_server_name_is_the_clusters(bundle: Bundle) -> None:
    credentials = ClientCredentials(ca_file=str(bundle.ca_cert), tls_server_name="apiserver-1")
    assert only(kubeconfig("10.0.0.5:6443", credentials), "clusters")["tls-server-name"] == "apiserver-1"


@pytest.mark.parametrize(("server", "url"), [
    ("[::1]:6443", "http://[::1]:6443"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("https://example.test:443/", "https://example.test:443"),
])  # fmt: skip
def test_the_server_url(server: str, url: str) -> None:
    assert server_url(server, ClientCredentials()) == url


@pytest.mark.parametrize(("server", "problem"), [
    ("", "expected host:port"),
    ("localhost", "expected host:port"),
    ("localhost:http", "expected host:port"),
    ("a:6443,b:6443", "one server, not a list"),
    ("ftp://a:6443", "https:// or http://"),
    ("https://a", "expected https://host:port"),
    ("https://a:6443/api", "expected https://host:port"),
    ("https://a:99999", "expected https://host:port"),
])  # fmt: skip
def test_a_server_that_is_no_address_is_refused(server: str, problem: str) -> None:
    with pytest.raises(KubeconfigError, match=problem):
        server_url(server, ClientCredentials())


def test_an_http_url_with_tls_files_is_refused(bundle: Bundle) -> None:
    with pytest.raises(KubeconfigError, match="need an https:// server"):
        server_url("http://127.0.0.1:8080", ClientCredentials(ca_file=str(bundle.ca_cert)))


# ------------------------------------------------------------------------------------------- the command


def test_the_file_is_written_for_its_owner_alone(tmp_path: Path, bundle: Bundle) -> None:
    output = tmp_path / "kube" / "config"
    output.parent.mkdir()
    output.write_text("old")
    output.chmod(0o644)
    assert run("--server", "127.0.0.1:6443", "--token", TOKEN, "--certificate-authority",
               str(bundle.ca_cert), "--output", str(output)) == 0
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    assert only(written(output), "users") == {"token": TOKEN}
    assert only(written(output), "clusters")["server"] == "https://127.0.0.1:6443"


def test_a_dash_writes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--server", "127.0.0.1:8080", "--token", TOKEN, "-o", "-") == 0
    expected = kubeconfig("127.0.0.1:8080", ClientCredentials(token=TOKEN))
    assert yaml.safe_load(capsys.readouterr().out) == expected


def test_the_token_file_gives_the_token(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"{TOKEN}\n")
    output = tmp_path / "kubeconfig"
    assert run("--server", "127.0.0.1:8080", "--token-file", str(tmp_path / "token"), "-o", str(output)) == 0
    assert only(written(output), "users") == {"token": TOKEN}


def test_the_environment_gives_what_the_flags_do_not(
    tmp_path: Path, bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The variables `podsched up --tls` and `podsched certs` print.
    for name, value in bundle.user_env("admin").items():
        monkeypatch.setenv(name, value)
    output = tmp_path / "kubeconfig"
    assert run("--server", "127.0.0.1:6443", "-o", str(output)) == 0
    assert only(written(output), "users")["client-certificate"] == str(bundle.user_cert("admin"))


def bad_inputs(tmp: Path, bundle: Bundle) -> dict[str, tuple[list[str], int, str]]:
    """name -> (flags besides --server and --output, exit code, what the error says)."""
    (tmp / "empty").write_text("\n  \n")
    (tmp / "two-words").write_text("two words\n")
    (tmp / "not-pem").write_text("hello\n")
    (tmp / "binary").write_bytes(b"\xff\xfe\x00")
    ca, cert, key = str(bundle.ca_cert), str(bundle.user_cert("admin")), str(bundle.user_key("admin"))
    return {
        "missing CA file": (["--certificate-authority", str(tmp / "nope.crt")], 1,
                            f"unable to read --certificate-authority {tmp / 'nope.crt'}: No such file"),
        "CA file without a certificate": (["--certificate-authority", str(tmp / "not-pem")], 1,
                                          "no PEM certificate in the file"),
        "missing token file": (["--token-file", str(tmp / "nope")], 1,
                               f"unable to read --token-file {tmp / 'nope'}: No such file"),
        "empty token file": (["--token-file", str(tmp / "empty")], 1,
                             f"--token-file {tmp / 'empty'} is empty"),
        "token file that is not text": (["--token-file", str(tmp / "binary")], 1, "not a text file"),
        "token-auth file for a token file": (["--token-file", str(bundle.token_file)], 1,
                                             "not the API server's token,user,uid,groups lines"),
        "token file with spaces": (["--token-file", str(tmp / "two-words")], 1,
                                   f"--token-file {tmp / 'two-words'}: the token must be printable ASCII"),
        "token with spaces": (["--token", "two words"], 1, "--token: the token must be printable ASCII"),
        "token and token file": (["--token", TOKEN, "--token-file", str(tmp / "empty")], 2,
                                 "give one of them"),
        "client certificate without its key": (["--client-certificate", cert], 1,
                                               "--client-certificate needs --client-key"),
        "key of another certificate": (["--client-certificate", cert, "--client-key",
                                        str(bundle.user_key("readonly"))], 1, "is not the key of"),
        "key file without a key": (["--client-certificate", cert, "--client-key", ca], 1,
                                   "no PEM private key in the file"),
        "http server with a CA": (["--certificate-authority", ca, "--server", "http://127.0.0.1:8080"], 2,
                                  "need an https:// server"),
        "server list": (["--server", "a:1,b:2"], 2, "one server, not a list"),
        "server without a port": (["--server", "localhost"], 2, "expected host:port"),
        "context with a space": (["--token", TOKEN, "--context", "my cluster"], 2, "without spaces"),
        "output that is a directory": (["--token", TOKEN, "--output", str(tmp)], 1,
                                       f"cannot write --output {tmp}"),
        "client certificate with its key and no such CA": (
            ["--client-certificate", cert, "--client-key", key, "--certificate-authority", str(tmp / "x")],
            1, "unable to read --certificate-authority"),
    }  # fmt: skip


BAD_INPUTS = sorted(bad_inputs(Path("/"), Bundle(Path("/"))))


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_bad_input_is_refused_naming_it_and_nothing_is_written(
    name: str, tmp_path: Path, bundle: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    flags, code, message = bad_inputs(tmp_path, bundle)[name]
    output = tmp_path / "kubeconfig"
    argv = ["--server", "127.0.0.1:6443", "--output", str(output), *flags]
    assert run(*argv) == code
    assert message in capsys.readouterr().err
    assert not output.exists()


# ------------------------------------------------------------------------------------ the real clients


def test_the_python_client_loads_a_token_and_a_ca_path(
    tmp_path: Path, bundle: Bundle, kubernetes_module: ModuleType
) -> None:
    output = tmp_path / "kubeconfig"
    assert run("--server", "127.0.0.1:6443", "--token", TOKEN, "--certificate-authority", str(bundle.ca_cert),
               "-o", str(output)) == 0
    configuration = kubernetes_module.client.Configuration()
    kubernetes_module.config.load_kube_config(config_file=str(output), client_configuration=configuration)
    assert configuration.host == "https://127.0.0.1:6443"
    # What the client sends: the Authorization header.
    token = configuration.auth_settings()["BearerToken"]
    assert (token["key"], token["value"]) == ("authorization", f"Bearer {TOKEN}")
    assert configuration.ssl_ca_cert == str(bundle.ca_cert)
    assert configuration.verify_ssl


def test_the_python_client_loads_embedded_client_certificates(
    tmp_path: Path, bundle: Bundle, kubernetes_module: ModuleType
) -> None:
    output = tmp_path / "kubeconfig"
    assert run("--server", "https://localhost:6443", "--embed-certs", "--tls-server-name", "localhost",
               *bundle.user_flags("admin"), "-o", str(output)) == 0
    configuration = kubernetes_module.client.Configuration()
    kubernetes_module.config.load_kube_config(config_file=str(output), client_configuration=configuration)
    assert configuration.host == "https://localhost:6443"
    assert configuration.tls_server_name == "localhost"
    # The client writes embedded data to files of its own.
    assert Path(configuration.ssl_ca_cert).read_bytes() == bundle.ca_cert.read_bytes()
    assert Path(configuration.cert_file).read_bytes() == bundle.user_cert("admin").read_bytes()
    assert Path(configuration.key_file).read_bytes() == bundle.user_key("admin").read_bytes()


def test_kubectl_reads_it(tmp_path: Path, bundle: Bundle, kubectl: Path) -> None:
    output = tmp_path / "kubeconfig"
    assert run("--server", "127.0.0.1:6443", *bundle.user_flags("admin"), "-o", str(output)) == 0
    view = subprocess.run(
        [str(kubectl), "config", "view", "--kubeconfig", str(output), "--minify", "-o", "json"],
        capture_output=True, text=True, timeout=30, check=True,
    )
    shown = json.loads(view.stdout)
    assert shown["current-context"] == "podsched"
    assert shown["clusters"][0]["cluster"] == {"server": "https://127.0.0.1:6443",
                                               "certificate-authority": str(bundle.ca_cert)}
    assert shown["users"][0]["user"] == {"client-certificate": str(bundle.user_cert("admin")),
                                         "client-key": str(bundle.user_key("admin"))}
