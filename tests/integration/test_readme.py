"""The command blocks of the README and of docs/security.md, run as written.

Sections are found by heading text (each section's own text, not its subsections'), so the documents may
be reorganised around them. Every ```sh block of the README's "Using it" and of docs/security.md's
"Running securely" runs command by command in bash, from a working directory laid out as the repository
root (its top-level entries linked in, ``.venv`` the venv running this test), with ``podsched`` on PATH
only once the README's own ``. .venv/bin/activate`` has run and no PODSCHED_* variable set. ``.``,
``source`` and ``export`` change the environment of the commands after them, as in a shell. A command
ending in ``&`` runs in the background until the block is done, then is stopped, the last started first;
it must not have ended before. Every other command must exit 0 and, where the text promises something,
show it: pods bound once the scheduler runs, the label selector finding only nodes that carry the label,
the watch printing the pods until Ctrl-C, the refusal docs/security.md quotes. The README's "From
Python" program runs too, as a script with the venv's python while the servers run, and must print its
pod created and then bound. The commands use the documented defaults, 127.0.0.1:7443 for the API server
and 127.0.0.1:10259 for the scheduler's metrics; no other test listens on those ports. A command that
names an address off this machine fails the test before anything runs.

The quick start block is `make demo` and `make test`: each command of it must be one this module knows
to be covered (the demo by test_demo.py, `make test` by being the run these tests are part of), so a
command added to that block fails here until it is covered.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from cluster.cli.common import DEFAULT_SERVER
from cluster.cli.scheduler import DEFAULT_METRICS_ADDRESS
from tests.integration.helpers import REPO, parse_table

README = REPO / "README.md"
SECURITY = REPO / "docs" / "security.md"
MAKEFILE = REPO / "Makefile"
#: Repository entries the working directory does not link: the venv is linked on its own, the rest is
#: version control, build output or state a run of the README would make.
NOT_LINKED = {".git", ".venv", "data", "pki", "build"}
#: A command that hangs this long is broken.
COMMAND_TIMEOUT_S = 60.0
#: How long the pods may take to be bound, and the watch to print them.
WAIT_S = 60.0
#: How long a background server may take to stop once told to.
STOP_TIMEOUT_S = 20.0

#: host:port in a command: a flag's value, or one of a comma-separated list.
ADDRESS = re.compile(r"(?:^|[\s=,])(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d+)\b")
FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


# ------------------------------------------------------------------------------------- the Markdown


def section(markdown: str, title: str, source: str = "README.md") -> str:
    """The text under the first heading that starts with ``title``, down to the next heading (its
    subsections are theirs: the reference sections show commands that need files of your
    own); a line in a code block is never a heading."""
    lines = markdown.splitlines()
    in_code = False
    start = None
    for number, line in enumerate(lines):
        if FENCE.match(line):
            in_code = not in_code
            continue
        heading = None if in_code else HEADING.match(line)
        if heading is None:
            continue
        if start is not None:
            return "\n".join(lines[start:number])
        if heading[2].startswith(title):
            start = number + 1
    assert start is not None, f"{source} has no section titled {title!r}"
    return "\n".join(lines[start:])


def sh_blocks(text: str) -> list[str]:
    """The contents of the ```sh blocks of ``text``."""
    return re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The contents of the ```python blocks of ``text``."""
    return re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Command:
    #: As written, continuation lines joined.
    text: str
    #: The words bash sees, without comments and without a trailing ``&``.
    words: tuple[str, ...]
    background: bool

    @property
    def line(self) -> str:
        return " ".join(self.words)


def commands(block: str) -> list[Command]:
    joined = re.sub(r"\\\n\s*", " ", block)
    found = []
    for text in joined.splitlines():
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
        if not words:
            continue  # blank or a comment
        background = words[-1] == "&"
        if background:
            words.pop()
        assert "&" not in words and "&&" not in words, f"one command per line, please: {text}"
        found.append(Command(text.strip(), tuple(words), background))
    return found


def off_this_machine(text: str) -> list[str]:
    """The addresses a command names that are neither loopback nor "every interface" (to listen on)."""
    far = []
    for match in ADDRESS.finditer(text):
        host = match[1].strip("[]")
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                far.append(match[0].strip(" =,"))
            continue
        if not (ip.is_loopback or ip.is_unspecified):
            far.append(match[0].strip(" =,"))
    return far


def readme_commands(title: str, document: Path = README) -> list[Command]:
    source = str(document.relative_to(REPO))
    blocks = sh_blocks(section(document.read_text(), title, source))
    assert blocks, f"{source}'s {title!r} section has no ```sh block"
    found = [command for block in blocks for command in commands(block)]
    # Checked before anything runs: this test sends nothing off the machine.
    for command in found:
        far = off_this_machine(command.line)
        assert not far, (f"{command.text}: names {', '.join(far)}, off this machine: a runnable block must "
                         "run on one machine as written (say it in prose instead)")
    return found


# --------------------------------------------------------------------------------------- the shell


@dataclass
class Shell:
    """Runs README commands one by one as a user's shell would, keeping what ``.``, ``source`` and
    ``export`` change in the environment for the commands after them."""

    cwd: Path
    env: dict[str, str]
    background: list[tuple[Command, subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def run(self, command: Command, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command.text], cwd=self.cwd, env=self.env, text=True,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)

    def source(self, command: Command) -> None:
        """Run a command that changes the shell's environment and keep the environment it leaves."""
        done = subprocess.run(["bash", "-c", f"{command.text}\nenv -0"], cwd=self.cwd, env=self.env,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT_S)
        assert done.returncode == 0, f"{command.text}: exit {done.returncode}\n{done.stderr.decode()}"
        pairs = (entry.split("=", 1) for entry in done.stdout.decode().split("\0") if "=" in entry)
        self.env = dict(pairs)

    def start(self, command: Command) -> None:
        log = self.cwd / f"background-{len(self.background) + 1}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(["bash", "-c", f"exec {shlex.join(command.words)}"], cwd=self.cwd,
                                       env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                       start_new_session=True)
        self.background.append((command, process, log))

    def watch(self, command: Command, until: Callable[[str], bool]) -> tuple[int, str]:
        """Run a command that runs until stopped, until its output satisfies ``until`` (or WAIT_S
        passes), then press Ctrl-C: its exit code and output."""
        log = self.cwd / "watch.log"
        with log.open("wb") as out:
            process = subprocess.Popen(["bash", "-c", command.text], cwd=self.cwd, env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                       start_new_session=True)
        try:
            deadline = time.monotonic() + WAIT_S
            while not until(log.read_text()) and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert process.poll() is None, f"{command.text}: ended by itself:\n{log.read_text()}"
            os.killpg(process.pid, signal.SIGINT)
            return process.wait(timeout=STOP_TIMEOUT_S), log.read_text()
        finally:
            _kill_group(process)

    def stop_background(self) -> list[str]:
        """Stop every background command, the last started first (a scheduler before the API server it
        talks to), with SIGTERM to its process group and SIGKILL if it lingers; the output of those that
        had already ended, which they should not have."""
        died = []
        for command, process, log in reversed(self.background):
            if process.poll() is not None:
                died.append(f"{command.text}: exited {process.returncode}:\n{log.read_text()}")
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            finally:
                _kill_group(process)
        return died


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _port_is_free(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError:
            return False
    return True


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    """A shell in a directory laid out as the repository root, with the README's ports free."""
    taken = [address for address in (DEFAULT_SERVER, DEFAULT_METRICS_ADDRESS) if not _port_is_free(address)]
    assert not taken, (f"the README's commands listen on {', '.join(taken)}, which something else on this "
                       "machine holds: stop it and run again")
    venv = Path(sys.prefix)
    assert (venv / "bin" / "activate").exists() and (venv / "bin" / "podsched").exists(), (
        f"this test runs the README's commands with the venv running it, and {venv} is not one with podsched "
        "installed: run it as make test does (.venv/bin/pytest)")
    root = tmp_path / "repo"
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in NOT_LINKED and not entry.name.endswith("_cache"):
            (root / entry.name).symlink_to(entry)
    (root / ".venv").symlink_to(venv)
    # A fresh machine: podsched is not on PATH until the README activates the venv, and no variable
    # points the commands elsewhere.
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PODSCHED_") and name not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(entry for entry in path if entry and not Path(entry, "podsched").exists())
    # The API server keeps its data under $HOME when not given --data-dir.
    env["HOME"] = str(tmp_path / "home")
    started = Shell(root, env)
    try:
        yield started
    finally:
        started.stop_background()


# ------------------------------------------------------------------------------ what each one shows


def _option(words: tuple[str, ...], *names: str) -> str | None:
    for i, word in enumerate(words):
        if word in names and i + 1 < len(words):
            return words[i + 1]
        for name in names:
            if name.startswith("--") and word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def _manifest_pods(words: tuple[str, ...], cwd: Path) -> set[str]:
    """The names of the pods in the files and directories an apply names."""
    names = set()
    for i, word in enumerate(words):
        if word not in ("-f", "--filename") or i + 1 >= len(words):
            continue
        target = cwd / words[i + 1]
        files = sorted(target.glob("*.yaml")) if target.is_dir() else [target]
        for file in files:
            names |= {doc["metadata"]["name"] for doc in yaml.safe_load_all(file.read_text())
                      if doc and doc.get("kind") == "Pod"}
    return names


@dataclass
class Session:
    """Runs a README block: what its commands have built so far, and what each of them must show."""

    shell: Shell
    pods: set[str] = field(default_factory=set)
    scheduler_started: bool = False

    def run_all(self, commands: list[Command]) -> None:
        for command in commands:
            if command.words[0] in (".", "source", "export"):
                self.shell.source(command)
            elif command.background:
                self.shell.start(command)
                self.scheduler_started |= command.words[:2] == ("podsched", "scheduler")
            else:
                self.check(command)
        assert self.pods, "the block applies no pods"

    def run_python(self, title: str) -> None:
        """The Python block of the README's section ``title``, saved as a program and run with the venv's
        python while the servers run: it creates its pod, prints it, and prints the pod's changes until
        the scheduler has bound it."""
        (block,) = python_blocks(section(README.read_text(), title))
        far = off_this_machine(block)
        assert not far, f"the {title!r} program names {', '.join(far)}, off this machine"
        (self.shell.cwd / "snippet.py").write_text(block)
        done = self.shell.run(Command("python snippet.py", ("python", "snippet.py"), False), timeout=WAIT_S)
        assert done.returncode == 0, f"the {title!r} program: exit {done.returncode}\n{done.stderr}"
        lines = done.stdout.splitlines()
        created = re.fullmatch(r"created (\S+)", lines[0]) if lines else None
        assert created, done.stdout
        assert re.fullmatch(rf"MODIFIED {re.escape(created[1])} \S+", lines[-1]), done.stdout

    def stop(self) -> None:
        """Stop the background commands, which must still be running."""
        died = self.shell.stop_background()
        assert not died, "background commands ended before they were stopped:\n" + "\n".join(died)

    def check(self, command: Command) -> None:
        words = command.words
        if words[:2] == ("podsched", "get") and ("-w" in words or "--watch" in words):
            self._watch(command)
            return
        if words[:3] == ("podsched", "get", "pods") and _option(words, "-o", "--output") == "wide":
            self._bound(command)
            return
        done = self.shell.run(command)
        assert done.returncode == 0, f"{command.text}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        if words[:2] == ("podsched", "apply"):
            applied = _manifest_pods(words, self.shell.cwd)
            for name in applied:
                assert f"pod/{name} created" in done.stdout, done.stdout
            self.pods |= applied
        elif words[:3] == ("podsched", "get", "nodes") and (selector := _option(words, "-l", "--selector")):
            self._selected_nodes(command, selector, done.stdout)
        elif words[:3] == ("podsched", "describe", "pod"):
            self._described(command, done.stdout)
        elif words[:3] == ("podsched", "delete", "pod"):
            names = itertools.takewhile(lambda word: not word.startswith("-"), words[3:])
            assert done.stdout == "".join(f'pod "{name}" deleted\n' for name in names), done.stdout

    def _bound(self, command: Command) -> None:
        """`get pods -o wide` shows every pod of the manifests on a node once the scheduler runs."""
        assert self.scheduler_started, "the README lists pods with their NODE before starting a scheduler"
        deadline = time.monotonic() + WAIT_S
        while True:
            done = self.shell.run(command)
            assert done.returncode == 0, f"{command.text}: exit {done.returncode}\n{done.stderr}"
            rows = {row["NAME"]: row for row in parse_table(done.stdout)}
            assert rows and "NOMINATED NODE" in next(iter(rows.values())), done.stdout
            if self.pods <= set(rows) and all(rows[name]["NODE"] != "<none>" for name in self.pods):
                return
            assert time.monotonic() < deadline, f"pods not bound within {WAIT_S:g}s:\n{done.stdout}"
            time.sleep(0.5)

    def _selected_nodes(self, command: Command, selector: str, out: str) -> None:
        listed = yaml.safe_load(out) or {}
        items = listed["items"] if "items" in listed else [listed] if listed else []
        assert items, f"{command.text}: no node has {selector}"
        key, _, value = selector.partition("=")
        for item in items:
            assert item["metadata"]["labels"].get(key) == value, item["metadata"]

    def _described(self, command: Command, out: str) -> None:
        node = re.search(r"^Node:\s+(\S+)", out, re.MULTILINE)
        assert node and node[1] != "<none>", out
        events = out[out.index("\nEvents:"):]
        assert re.search(r"Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned", events), out

    def _watch(self, command: Command) -> None:
        """The watch prints the pods and keeps running; Ctrl-C ends it cleanly."""
        code, out = self.shell.watch(command, lambda out: all(re.search(rf"^{name}\s", out, re.MULTILINE)
                                                              for name in self.pods))
        assert code == 0, f"{command.text}: exit {code} after Ctrl-C\n{out}"
        for name in self.pods:
            assert re.search(rf"^{name}\s", out, re.MULTILINE), out


# ----------------------------------------------------------------------------------------- the tests


def test_using_it_runs_as_written(shell: Shell) -> None:
    session = Session(shell)
    session.run_all(readme_commands("Using it"))
    session.run_python("From Python")
    session.stop()


def test_running_securely_runs_as_written(shell: Shell) -> None:
    # The section goes on from "Using it": the venv active, the servers of that section stopped.
    for command in readme_commands("Using it"):
        if command.words[0] in (".", "source"):
            shell.source(command)
    session = Session(shell)
    session.run_all(readme_commands("Running securely", SECURITY))
    # The refusal the section shows next: the client user applying the nodes.
    shown = re.search(r"^```\n(Error from server \(Forbidden\).*?)^```", section(SECURITY.read_text(),
                      "Running securely", "docs/security.md"), re.MULTILINE | re.DOTALL)
    assert shown, "docs/security.md no longer shows the client user's refusal"
    # Shown for a cluster without the nodes ("error when creating"): the admin removes them first.
    nodes = "examples/manifests/nodes.yaml"
    names = [doc["metadata"]["name"] for doc in yaml.safe_load_all((shell.cwd / nodes).read_text()) if doc]
    admin = "--client-certificate pki/users/admin.crt --client-key pki/users/admin.key"
    deleted = shell.run(Command(f"podsched delete nodes {' '.join(names)} {admin}", (), False))
    assert deleted.returncode == 0, deleted
    refused = shell.run(Command(f"podsched apply -f {nodes} --client-certificate pki/users/client.crt "
                                "--client-key pki/users/client.key", (), False))
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", shown[1]), refused
    session.stop()


def _recipe(target: str) -> list[str]:
    """The commands of a Makefile target."""
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", MAKEFILE.read_text(), re.MULTILINE)
    assert match, f"the Makefile has no {target} target"
    return [line.strip() for line in match[1].splitlines()]


def _demo_is_run_by_test_demo() -> None:
    assert _recipe("demo") == ["$(VENV)/bin/podsched demo"]
    test_demo = (REPO / "tests" / "integration" / "test_demo.py").read_text()
    assert '[sys.executable, "-m", "cluster.cli", "demo"]' in test_demo


def _test_is_this_run() -> None:
    # The timing tests alone, then the rest: together every test, this module among them.
    marks = [re.search(r"-m (\"[^\"]*\"|\S+)", line) for line in _recipe("test") if "pytest" in line]
    assert sorted(mark[1] for mark in marks if mark) == ['"not timing"', "timing"]


#: Each command of the quick start block and what shows that it works.
QUICK_START_COVERAGE: dict[str, Callable[[], None]] = {
    "make demo": _demo_is_run_by_test_demo,
    "make test": _test_is_this_run,
}


def test_every_quick_start_command_is_covered() -> None:
    lines = [command.line for command in readme_commands("Quick start")]
    assert lines == list(QUICK_START_COVERAGE), (
        f"the quick start block is {lines}; this module covers {list(QUICK_START_COVERAGE)}: run a new "
        "command here, or name the test that runs it")
    for covered in QUICK_START_COVERAGE.values():
        covered()


def test_sections_are_found_by_heading_outside_code_blocks() -> None:
    markdown = ("# Title\n\n## Using it (now)\n\n```sh\n# a comment, not a heading\nls &   # listing\n"
                "echo a \\\n    b\n```\n\n### Sub\n\n```sh\npwd\n```\n\n## Next\n\n```sh\nfalse\n```\n")
    used = section(markdown, "Using it")
    assert [(c.line, c.background) for b in sh_blocks(used) for c in commands(b)] == [
        ("ls", True), ("echo a b", False)]
    assert sh_blocks(section(markdown, "Sub")) == ["pwd\n"]
    with pytest.raises(AssertionError, match="no section titled 'Missing'"):
        section(markdown, "Missing")


@pytest.mark.parametrize(("text", "far"), [
    ("podsched apiserver --data-dir ./data &", []),
    ("podsched apiserver --listen 0.0.0.0:7443 --server 127.0.0.1:7443,[::1]:7444,localhost:1", []),
    ("podsched apiserver --etcd 10.0.0.1:2379,10.0.0.2:2379", ["10.0.0.1:2379", "10.0.0.2:2379"]),
    ("podsched get pods --server=apiserver.example.com:7443", ["apiserver.example.com:7443"]),
])
def test_addresses_off_this_machine_are_found(text: str, far: list[str]) -> None:
    assert off_this_machine(text) == far
