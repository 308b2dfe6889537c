"""docker-compose.yml and the Dockerfile are coherent with the code (no Docker engine runs here, so this is
what keeps them from rotting): every podsched service's command and healthcheck parse with the real
`podsched` parser; every etcd endpoint and API server address names a service listening on that port;
the etcd members form exactly one cluster; the schedulers elect a leader and are restarted; the chaos
service is opt-in and can reach the Docker socket; the nodes fit the load; the image contains what
`pip install .` needs. TLS and authentication run everywhere, with the files a one-shot `podsched certs`
service writes: every file named is one that command writes, the servers' own loaders and the clients'
accept them, and the API servers authenticate (without it they would serve loopback only, out of the
other containers' reach)."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from cluster.api import objects_pb2
from cluster.api.fencing import LeaseRef
from cluster.api.manifest import load_paths
from cluster.api.quantity import parse_quantity
from cluster.apiserver.server import ApiServerOptions
from cluster.cli.main import build_parser
from cluster.cli.scheduler import leader_election_settings
from cluster.client import ClientCredentials
from cluster.launcher.certs import write_bundle
from cluster.launcher.etcd import MAX_TXN_OPS
from cluster.ui.hosts import HostCheck
from scheduler.config import LeaderElectionConfig, load_config

REPO = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
#: The project image, as docker-compose.yml tags it.
IMAGE = "podsched:dev"
#: What a command without --server talks to (cluster.cli.common): only right inside the API server's
#: own container, never in compose.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")

PODSCHED = sorted(name for name, service in SERVICES.items() if service.get("image") == IMAGE)
ETCD = sorted(name for name, service in SERVICES.items() if Path(service["command"][0]).name == "etcd")


def parse(argv: list[str], where: str) -> argparse.Namespace:
    """``argv`` parsed by the real `podsched` parser; the test fails naming ``where`` and argparse's
    complaint when it does not parse."""
    complaint = io.StringIO()
    try:
        with contextlib.redirect_stderr(complaint):
            return build_parser().parse_args(argv)
    except SystemExit:
        # argparse prints its usage, then the line that says what is wrong.
        problem = complaint.getvalue().strip().splitlines()[-1]
        pytest.fail(f"{where}: `podsched {' '.join(argv)}` does not parse: {problem}")


def command(name: str) -> argparse.Namespace:
    argv = SERVICES[name]["command"]
    assert isinstance(argv, list), f"service {name}: write the command as a list (exec form)"
    return parse(argv, f"service {name}")


def by_role(role: str) -> list[str]:
    """The podsched services running ``podsched ROLE ...`` (read from the argv, so that collection never
    depends on the parser: a command that does not parse fails its own test)."""
    return [name for name in PODSCHED if SERVICES[name]["command"][0] == role]


def etcd_flags(name: str) -> dict[str, str]:
    flags = {}
    for arg in SERVICES[name]["command"][1:]:
        flag, sep, value = arg.partition("=")
        assert sep, f"service {name}: write etcd flags as --flag=value, got {arg!r}"
        flags[flag] = value
    return flags


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def url_host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None, url
    return parts.hostname, parts.port


def apiserver_ports() -> dict[str, int]:
    """Each API server service and the port it listens on, on every interface."""
    ports = {}
    for name in by_role("apiserver"):
        host, port = host_port(command(name).listen)
        assert host == "0.0.0.0", f"service {name}: --listen {host}:{port} is unreachable from elsewhere"
        ports[name] = port
    return ports


def apiserver_http_ports() -> dict[str, int]:
    """Each API server service and the port it serves the Kubernetes HTTP API on, on every interface."""
    ports = {}
    for name in by_role("apiserver"):
        assert command(name).http_listen, f"service {name}: no --http-listen, kubectl cannot reach it"
        host, port = host_port(command(name).http_listen)
        assert host == "0.0.0.0", f"service {name}: --http-listen {host}:{port} is unreachable from elsewhere"
        ports[name] = port
    return ports


def server_list(name: str) -> list[str]:
    """The API servers a client service talks to: --server, else $PODSCHED_SERVER."""
    args = command(name)
    assert hasattr(args, "server"), f"service {name}: `podsched {args.command}` takes no --server"
    servers = args.server or (SERVICES[name].get("environment") or {}).get("PODSCHED_SERVER")
    assert servers, f"service {name}: no --server and no PODSCHED_SERVER: it would talk to 127.0.0.1:7443"
    return [server.strip() for server in servers.split(",")]


#: The services that talk to the API servers.
CLIENTS = sorted(set(PODSCHED) - set(by_role("apiserver")) - set(by_role("certs")))


# -------------------------------------------------------------------------------------------- commands


@pytest.mark.parametrize("name", PODSCHED)
def test_every_podsched_command_parses(name: str) -> None:
    args = command(name)
    assert callable(args.func)


def test_the_topology_is_complete() -> None:
    assert len(ETCD) == 3
    assert len(by_role("apiserver")) >= 1
    assert by_role("load"), "no load generator"
    assert by_role("chaos"), "no chaos service"
    assert len(by_role("certs")) == 1, "one service writes the certificates"
    assert set(SERVICES) == set(PODSCHED) | set(ETCD), "a service that is neither podsched nor etcd"


@pytest.mark.parametrize("name", PODSCHED)
def test_podsched_services_share_one_built_image(name: str) -> None:
    assert SERVICES[name]["build"] == "."
    assert (REPO / "Dockerfile").is_file()


# ----------------------------------------------------------------------------------------------- etcd


def test_the_etcd_members_form_one_cluster() -> None:
    peer_urls = {name: etcd_flags(name)["--initial-advertise-peer-urls"] for name in ETCD}
    tokens = {etcd_flags(name)["--initial-cluster-token"] for name in ETCD}
    assert len(tokens) == 1, f"members disagree on --initial-cluster-token: {tokens}"
    for name in ETCD:
        flags = etcd_flags(name)
        assert flags["--name"] == name
        assert flags["--initial-cluster-state"] == "new"
        members = dict(member.split("=", 1) for member in flags["--initial-cluster"].split(","))
        assert members == peer_urls, f"service {name}: --initial-cluster lists {members}, not the members"
        assert url_host_port(peer_urls[name]) == (name, url_host_port(flags["--listen-peer-urls"])[1])
        assert url_host_port(flags["--listen-peer-urls"])[0] == "0.0.0.0"


@pytest.mark.parametrize("name", ETCD)
def test_an_etcd_member_advertises_where_it_listens(name: str) -> None:
    flags = etcd_flags(name)
    listen_host, listen_port = url_host_port(flags["--listen-client-urls"])
    assert listen_host == "0.0.0.0"
    assert url_host_port(flags["--advertise-client-urls"]) == (name, listen_port)


@pytest.mark.parametrize("name", ETCD)
def test_an_etcd_member_takes_a_transaction_as_large_as_the_largest_group_bind(name: str) -> None:
    # etcd's default (128 operations) refuses the one transaction of a gang of more than about 60 pods.
    assert int(etcd_flags(name).get("--max-txn-ops", "128")) >= MAX_TXN_OPS


@pytest.mark.parametrize("name", ETCD)
def test_an_etcd_member_keeps_its_data_in_its_own_named_volume(name: str) -> None:
    data_dir = etcd_flags(name)["--data-dir"]
    mounts = [volume.split(":") for volume in SERVICES[name]["volumes"]]
    volume = next(source for source, target, *_ in mounts if target == data_dir)
    assert volume in COMPOSE["volumes"], f"service {name}: volume {volume} is not declared"
    others = {source for other in ETCD if other != name for source, *_ in
              (volume.split(":") for volume in SERVICES[other]["volumes"])}
    assert volume not in others, f"service {name} shares its data volume"


@pytest.mark.parametrize("name", ETCD)
def test_an_etcd_healthcheck_asks_its_own_member(name: str) -> None:
    check = SERVICES[name]["healthcheck"]["test"]
    assert check[0] == "CMD" and Path(check[1]).name == "etcdctl" and check[-2:] == ["endpoint", "health"]
    endpoint = next(arg.partition("=")[2] for arg in check if arg.startswith("--endpoints="))
    client_port = url_host_port(etcd_flags(name)["--listen-client-urls"])[1]
    assert url_host_port(endpoint) == ("127.0.0.1", client_port)


# ------------------------------------------------------------------------------------------ addresses


@pytest.mark.parametrize("name", by_role("apiserver"))
def test_an_api_server_uses_every_etcd_member(name: str) -> None:
    endpoints = [host_port(endpoint) for endpoint in command(name).etcd.split(",")]
    client_ports = {member: url_host_port(etcd_flags(member)["--listen-client-urls"])[1] for member in ETCD}
    assert sorted(host for host, _ in endpoints) == ETCD, f"service {name}: --etcd must list every member"
    for host, port in endpoints:
        assert port == client_ports[host], f"{name}: {host} listens on {client_ports[host]}, not {port}"


@pytest.mark.parametrize("name", by_role("apiserver"))
def test_an_api_server_enforces_leader_fencing(name: str) -> None:
    """Every scheduler here is podsched's own, so the servers enforce leadership."""
    assert command(name).enforce_leader_fencing, f"service {name}: --enforce-leader-fencing is not set"


@pytest.mark.parametrize("name", CLIENTS)
def test_every_client_talks_to_api_servers_where_they_listen(name: str) -> None:
    listening = apiserver_ports()
    for server in server_list(name):
        host, port = host_port(server)
        assert host not in LOOPBACK_HOSTS, f"service {name}: {server} is its own container"
        assert host in listening, f"service {name}: {server} is not an API server service"
        assert port == listening[host], f"service {name}: {host} listens on {listening[host]}, not {port}"


@pytest.mark.parametrize("name", by_role("apiserver"))
def test_an_api_server_healthcheck_is_podsched_healthcheck_on_its_port(name: str) -> None:
    check = SERVICES[name]["healthcheck"]["test"]
    assert check[:2] == ["CMD", "podsched"], f"service {name}: the healthcheck must run podsched"
    args = parse(check[2:], f"service {name} healthcheck")
    assert args.command == "healthcheck"
    host, port = host_port(args.server)
    assert (host, port) == ("127.0.0.1", apiserver_ports()[name])


def test_the_published_ports_are_the_api_servers_own() -> None:
    published = []
    for name, port in apiserver_ports().items():
        own = {port, apiserver_http_ports()[name]}
        for mapping in SERVICES[name].get("ports", []):
            host_side, _, container_side = mapping.rpartition(":")
            assert int(container_side) in own, f"{name} publishes {container_side}, listens on {sorted(own)}"
            published.append(host_side)
    assert len(published) == len(set(published)), f"two services publish one host port: {published}"


@pytest.mark.parametrize("name", by_role("apiserver"))
def test_an_api_server_publishes_the_http_api_beside_grpc(name: str) -> None:
    grpc_port, http_port = apiserver_ports()[name], apiserver_http_ports()[name]
    assert http_port != grpc_port, f"service {name}: gRPC and the HTTP API on one port"
    container_ports = sorted(int(mapping.rpartition(":")[2]) for mapping in SERVICES[name].get("ports", []))
    assert container_ports == sorted((grpc_port, http_port)), f"service {name} publishes {container_ports}"


# ------------------------------------------------------------------------------------------ ordering


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_dependencies_exist_and_their_conditions_can_be_met(name: str) -> None:
    for target, rule in (SERVICES[name].get("depends_on") or {}).items():
        assert target in SERVICES, f"service {name} depends on a missing service {target}"
        condition = rule["condition"]
        if condition == "service_healthy":
            assert "healthcheck" in SERVICES[target], f"{name} waits for {target} to be healthy: no check"
        elif condition == "service_completed_successfully":
            assert SERVICES[target].get("restart", "no") == "no", f"{target} never completes: it restarts"
        else:
            assert condition == "service_started", f"service {name}: unknown condition {condition}"


def test_api_servers_wait_for_etcd_and_clients_for_the_api() -> None:
    for name in by_role("apiserver"):
        assert {member: {"condition": "service_healthy"} for member in ETCD} == SERVICES[name]["depends_on"]
    for name in by_role("scheduler") + by_role("apply"):
        waits = SERVICES[name]["depends_on"]
        assert all(waits.get(api) == {"condition": "service_healthy"} for api in apiserver_ports()), name


# --------------------------------------------------------------------------------------- schedulers


def test_three_scheduler_replicas() -> None:
    replicas = sum(SERVICES[name].get("deploy", {}).get("replicas", 1) for name in by_role("scheduler"))
    assert replicas == 3


def leader_election(name: str) -> LeaderElectionConfig:
    """A scheduler service's leader election as `podsched scheduler` settles it (its config file's
    section, then the flags), refused as the command would refuse it (exit 2)."""
    args = command(name)
    configured = load_config(args.config).leader_election
    try:
        return leader_election_settings(configured, args)
    except ValueError as exc:
        pytest.fail(f"service {name}: {exc}")


@pytest.mark.parametrize("name", by_role("scheduler"))
def test_every_api_server_takes_the_fences_of_the_schedulers_lease(name: str) -> None:
    """An enforcing server refuses a fence of any other Lease: tuning the schedulers' lease means tuning
    the servers' --fenced-lease with it."""
    settings = leader_election(name)
    lease = LeaseRef(settings.resource_namespace, settings.resource_name)
    for server in by_role("apiserver"):
        assert lease in command(server).fenced_leases, f"service {server}: --fenced-lease {lease} is not set"


@pytest.mark.parametrize("name", by_role("scheduler"))
def test_schedulers_elect_a_leader_and_are_restarted(name: str) -> None:
    args = command(name)
    assert args.leader_elect is True, f"service {name}: pass --leader-elect=true (explicitly)"
    assert leader_election(name).leader_elect
    assert SERVICES[name]["restart"] == "always", f"service {name}: a deposed leader exits 1, must come back"
    assert sorted(host for host, _ in map(host_port, server_list(name))) == sorted(apiserver_ports()), (
        f"service {name}: list every API server, so that losing one does not cost the lease"
    )
    host, _ = host_port(args.metrics_addr)
    assert host == "0.0.0.0"


# --------------------------------------------------------------------------------------- nodes, load


def test_the_nodes_manifest_is_mounted_and_fits_the_load() -> None:
    (nodes,) = by_role("apply")
    mounts = {target: source for source, target, *_ in (v.split(":") for v in SERVICES[nodes]["volumes"])}
    files = []
    for path in command(nodes).filename:
        directory, _, filename = path.rpartition("/")
        assert directory in mounts, f"service {nodes}: {path} is not in a mounted directory"
        files.append(str(REPO / mounts[directory] / filename))
    nodes_objects = [manifest.obj for manifest in load_paths(files, strict=True)]
    assert nodes_objects and all(isinstance(node, objects_pb2.Node) for node in nodes_objects)
    cpu = sum(parse_quantity(node.status.allocatable["cpu"]) for node in nodes_objects)
    pods = sum(parse_quantity(node.status.allocatable["pods"]) for node in nodes_objects)
    for name in by_role("load"):
        load = command(name)
        assert load.count is not None, f"service {name}: an endless load fills any cluster"
        assert load.count * parse_quantity(load.cpu) <= cpu, f"service {name}: the nodes cannot fit the load"
        assert load.count <= pods
        assert SERVICES[name]["depends_on"][nodes] == {"condition": "service_completed_successfully"}


# ------------------------------------------------------------------------------------------ web view


def test_the_web_view_watches_every_api_server_and_is_published_on_loopback_only() -> None:
    (name,) = by_role("ui")
    service = SERVICES[name]
    host, port = command(name).listen
    assert host == "0.0.0.0", f"service {name}: --listen {host}:{port} is unreachable from the host"
    assert sorted(host for host, _ in map(host_port, server_list(name))) == sorted(apiserver_ports())
    (mapping,) = service["ports"]
    host_ip, host_port_, container_port = mapping.split(":")
    assert host_ip == "127.0.0.1", f"service {name}: the web view is published beyond this machine"
    assert int(container_port) == port
    published = [mapping.rpartition(":")[0]
                 for other in apiserver_ports() for mapping in SERVICES[other].get("ports", [])]
    assert host_port_ not in published, f"service {name}: host port {host_port_} is an API server's"
    waits = service["depends_on"]
    assert all(waits.get(api) == {"condition": "service_healthy"} for api in apiserver_ports())
    # A browser on the host names the published port's loopback address; the container's own address
    # is all the view knows of itself, so it must be told those names (any other is refused).
    check = HostCheck(host, command(name).allowed_hosts)
    for name_ in ("localhost", "127.0.0.1"):
        assert check.refusal(f"{name_}:{host_port_}", ("172.18.0.5", port)) is None, (
            f"service {name}: a browser at http://{name_}:{host_port_}/ is refused")
    # The page's files reach the image: `pip install .` installs them as package data.
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "static/*" in project["tool"]["setuptools"]["package-data"]["cluster.ui"]
    assert (REPO / "cluster" / "ui" / "static" / "index.html").is_file()


# --------------------------------------------------------------------------------------------- chaos


def test_chaos_is_opt_in_and_kills_the_schedulers_leader() -> None:
    (name,) = by_role("chaos")
    service = SERVICES[name]
    args = command(name)
    assert service["profiles"] == ["chaos"]
    assert [other for other in SERVICES if other != name and "profiles" in SERVICES[other]] == []
    assert args.chaos_action == "kill-leader"
    mounts = {target: source for source, target, *_ in (v.split(":") for v in service["volumes"])}
    assert mounts.get(args.docker_socket) == "/var/run/docker.sock", "the Docker socket is not mounted"
    assert service["user"] == "root", "the host's Docker socket is not readable by the image's user"
    for scheduler in by_role("scheduler"):
        settings = leader_election(scheduler)
        lease = (settings.resource_namespace, settings.resource_name)
        assert (args.lease.namespace, args.lease.name) == lease, f"chaos and {scheduler} differ on the lease"


# -------------------------------------------------------------------------------------------- image


def test_the_dockerfile_builds_the_project_as_a_non_root_podsched_entrypoint() -> None:
    lines = [line.strip() for line in (REPO / "Dockerfile").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    copied = {source for line in lines if line.startswith("COPY ") for source in line.split()[1:-1]}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {path.name for path in REPO.iterdir() if (path / "__init__.py").is_file()}
    wanted = {name for name in packages if any(re.fullmatch(p.replace("*", ".*"), name) for p in patterns)}
    assert wanted <= copied, f"the image misses packages: {wanted - copied}"
    assert {"pyproject.toml", project["project"]["readme"]} <= copied
    assert any(re.fullmatch(r"RUN pip install \.( .*)?", line) for line in lines)
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0"), "the image runs as root"
    assert 'ENTRYPOINT ["podsched"]' in lines
    assert project["project"]["scripts"]["podsched"] == "cluster.cli.main:main"


# ---------------------------------------------------------------------------------- TLS and identities

#: Where the certs service writes `podsched certs` files, and the volume that carries them.
PKI_DIR, PKI_VOLUME = "/pki", "pki"
#: The user each client service acts as: the role its job needs (podsched certs names users after roles).
USERS = {"scheduler": "scheduler", "nodes": "admin", "load": "client", "ui": "readonly", "chaos": "readonly"}


def pki_paths(value: Any) -> set[str]:
    """Every /pki/... path named anywhere in ``value`` (commands, environment, healthchecks)."""
    return set(re.findall(rf"{PKI_DIR}/[\w./-]+", yaml.safe_dump(value)))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the certs service writes, written by the real code into a local directory."""
    (certs,) = by_role("certs")
    args = command(certs)
    directory = tmp_path_factory.mktemp("pki")
    write_bundle(directory, hosts=args.hosts, days=args.days, users=args.users)
    return directory


def local(pki: Path, path: str) -> str:
    return str(pki / Path(path).relative_to(PKI_DIR))


def test_the_certs_service_writes_the_shared_volume_once_with_every_server_name() -> None:
    (name,) = by_role("certs")
    args = command(name)
    assert args.if_absent, "certs must succeed again at the next start"
    assert str(args.dir) == PKI_DIR
    assert f"{PKI_VOLUME}:{PKI_DIR}" in SERVICES[name]["volumes"]
    assert SERVICES[name].get("restart", "no") == "no"
    assert PKI_VOLUME in COMPOSE["volumes"]
    assert set(apiserver_ports()) | set(ETCD) <= set(args.hosts), "a server's name is not in the certificates"


@pytest.mark.parametrize("name", sorted(set(SERVICES) - set(by_role("certs"))))
def test_a_service_naming_pki_files_mounts_them_read_only_after_certs_ran(name: str) -> None:
    if not pki_paths(SERVICES[name]):
        pytest.fail(f"service {name} runs without TLS")
    assert f"{PKI_VOLUME}:{PKI_DIR}:ro" in SERVICES[name]["volumes"], name

    def waits_for_certs(service: str) -> bool:
        rules = SERVICES[service].get("depends_on") or {}
        if any(rules.get(certs) == {"condition": "service_completed_successfully"}
               for certs in by_role("certs")):
            return True
        # A dependency starts only once its own conditions hold, whatever condition waits for it.
        return any(waits_for_certs(other) for other in rules)

    assert waits_for_certs(name), f"service {name} may start before the certificates exist"


def test_every_file_named_is_one_podsched_certs_writes(pki: Path) -> None:
    named = pki_paths(SERVICES)
    assert named
    missing = sorted(path for path in named if not Path(local(pki, path)).is_file())
    assert not missing, f"podsched certs writes no {missing}"


@pytest.mark.parametrize("name", ETCD)
def test_etcd_serves_https_and_requires_client_certificates_of_its_ca(name: str) -> None:
    flags = etcd_flags(name)
    for url_flag in ("--listen-client-urls", "--advertise-client-urls", "--listen-peer-urls",
                     "--initial-advertise-peer-urls"):
        assert flags[url_flag].startswith("https://"), f"{name}: {url_flag}={flags[url_flag]}"
    members = dict(member.split("=", 1) for member in flags["--initial-cluster"].split(","))
    assert all(url.startswith("https://") for url in members.values()), f"{name}: {members}"
    assert flags["--client-cert-auth"] == flags["--peer-client-cert-auth"] == "true"
    assert flags["--trusted-ca-file"] == flags["--peer-trusted-ca-file"] == "/pki/etcd/ca.crt"
    check = SERVICES[name]["healthcheck"]["test"]
    assert "--cacert=/pki/etcd/ca.crt" in check and any(arg.startswith("--cert=") for arg in check)


@pytest.mark.parametrize("name", by_role("apiserver"))
def test_api_servers_authenticate_serve_mutual_tls_and_reach_etcd_with_a_certificate(
    name: str, pki: Path
) -> None:
    args = command(name)

    def in_pki(path: str | None) -> str | None:
        return None if path is None else local(pki, path)

    # The server's own loader accepts the files certs wrote: the paths and their pairing are right.
    options = ApiServerOptions(
        listen=args.listen, tls_cert_file=in_pki(args.tls_cert_file),
        tls_private_key_file=in_pki(args.tls_private_key_file),
        client_ca_file=in_pki(args.client_ca_file), token_auth_file=in_pki(args.token_auth_file),
    )
    assert options.security.authenticating, (
        f"service {name}: without --token-auth-file or --client-ca-file it serves loopback only"
    )
    assert options.security.client_certificates and options.security.tokens
    assert args.etcd_cafile == "/pki/etcd/ca.crt" and args.etcd_certfile and args.etcd_keyfile
    check = parse(SERVICES[name]["healthcheck"]["test"][2:], f"service {name} healthcheck")
    assert check.certificate_authority == args.client_ca_file and check.client_certificate


def test_every_client_has_a_user() -> None:
    assert sorted(USERS) == CLIENTS


@pytest.mark.parametrize("name", sorted(USERS))
def test_each_client_presents_the_certificate_of_the_user_its_job_needs(name: str, pki: Path) -> None:
    env = SERVICES[name]["environment"]
    user = USERS[name]
    assert env["PODSCHED_CLIENT_CERT"] == f"{PKI_DIR}/users/{user}.crt"
    credentials = ClientCredentials.from_env_and_flags(environ={
        key: local(pki, value) if value.startswith(PKI_DIR) else value for key, value in env.items()
    })
    assert credentials.tls and credentials.client_cert_pem


def test_the_image_has_a_pki_directory_its_user_owns() -> None:
    text = (REPO / "Dockerfile").read_text()
    assert f"mkdir {PKI_DIR} && chown podsched:podsched {PKI_DIR}" in text
    assert text.index(f"mkdir {PKI_DIR}") < text.index("USER podsched")
