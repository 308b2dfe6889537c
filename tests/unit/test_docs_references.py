"""The repository is read on its own: no file points at documents kept outside it (no path leads out of
the repository, every Markdown file named is one of its own), every relative link of
the Markdown files names a file of the repository (and a heading of it, when it names one), the code cites
no issue of a tracker the reader cannot see, and the manual's count of conformance scenarios is the number
of cases."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: Generated, installed or version-control files: not the project's text.
SKIPPED_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "build"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".proto", ".cfg", ".txt", ""}
#: A relative path that climbs to a parent directory ("../x"), and a Markdown file's name.
PARENT_PATH = re.compile(r"(?<![\w.])((?:\.\./)+[\w.-]+)")
MARKDOWN_NAME = re.compile(r"[\w.-]+\.md\b")
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
#: A link to a heading: the page ("" for the same one) and the anchor.
ANCHOR_LINK = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
CONFORMANCE_CASES = REPO / "tests" / "conformance" / "cases"
#: The README and the manual under docs/.
MANUAL = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _project_files() -> list[Path]:
    files = []
    for root, dirs, names in os.walk(REPO):
        dirs[:] = [name for name in dirs if name not in SKIPPED_DIRS and not name.endswith(".egg-info")]
        files += [Path(root, name) for name in names if Path(name).suffix in TEXT_SUFFIXES]
    return files


def _leads_outside(path: Path, target: str) -> bool:
    """Whether ``target``, a relative path written in the file at ``path``, leads out of the repository
    or into a top-level directory it does not have."""
    resolved = (path.parent / target).resolve()
    if not resolved.is_relative_to(REPO):
        return True
    parts = resolved.relative_to(REPO).parts
    return bool(parts) and not (REPO / parts[0]).exists()


def outside_references(path: Path, text: str, markdown_names: set[str]) -> list[str]:
    """The lines of ``text`` (the file at ``path``) with a path that leads outside the repository, or
    naming a Markdown file the repository does not have."""
    return [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if any(_leads_outside(path, target) for target in PARENT_PATH.findall(line))
        or any(name not in markdown_names for name in MARKDOWN_NAME.findall(line))
    ]


def test_no_file_refers_to_documents_outside_the_repository() -> None:
    files = _project_files()
    markdown_names = {path.name for path in files if path.suffix == ".md"}
    this_file = Path(__file__).resolve()  # its examples below are made up
    found = [line for path in files if path != this_file
             for line in outside_references(path, path.read_text(errors="replace"), markdown_names)]
    assert not found, "references to documents outside the repository:\n" + "\n".join(found)


def test_paths_out_of_the_repository_and_unknown_documents_are_found() -> None:
    readme, guide = REPO / "README.md", REPO / "docs" / "guide.md"
    names = {"README.md", "guide.md"}
    assert outside_references(readme, "see ../elsewhere/NOTES.md", names) == [
        "README.md:1: see ../elsewhere/NOTES.md"]
    assert outside_references(guide, "one\nas ../../notes/plan says", names) == [
        "docs/guide.md:2: as ../../notes/plan says"]
    assert outside_references(guide, "read NOTES.md", names) == ["docs/guide.md:1: read NOTES.md"]
    assert outside_references(guide, "as ../elsewhere says", names) == [  # no such top-level directory
        "docs/guide.md:1: as ../elsewhere says"]
    # Inside the repository, and documents it has: nothing to report.
    assert outside_references(guide, "[home](../README.md), guide.md, ../examples/x.yaml", names) == []


def test_relative_markdown_links_name_files_of_the_repository() -> None:
    broken = []
    for path in _project_files():
        if path.suffix != ".md":
            continue
        for target in MARKDOWN_LINK.findall(path.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.exists() or not resolved.is_relative_to(REPO):
                broken.append(f"{path.relative_to(REPO)}: ({target})")
    assert not broken, "links to nothing in the repository:\n" + "\n".join(broken)


#: Where the code lives: comments, docstrings and test names there give the reason for what they say.
CODE_DIRS = ("cluster", "scheduler", "store", "tests")
#: Projects whose public trackers the code may cite to explain a fact it carries over from them.
UPSTREAM_PROJECTS = {"kubernetes", "kubernetes/kubernetes", "client-go", "kine", "k3s-io/kine", "etcd",
                     "etcd-io/etcd", "grpc", "grpc/grpc", "python", "cpython", "hypothesis", "numpy"}
#: "issue 8", "issues #12", with the word before it.
ISSUE_CITATION = re.compile(r"(\S*?)[\s(\[{\"'`]+(issues?\s+#?\d+)", re.IGNORECASE)


def uncited_issues(text: str) -> list[str]:
    """The issue numbers ``text`` cites without naming an upstream project just before them, as in
    "Kubernetes issue 137308". Any other "issue N" points at a tracker the reader of this repository
    cannot see: the code should say the reason instead."""
    return [
        citation for word, citation in ISSUE_CITATION.findall(text)
        if word.strip("([{\"'`").lower() not in UPSTREAM_PROJECTS
    ]


@pytest.mark.parametrize(("text", "found"), [
    ("a leader's stale cache (Kubernetes issue 137308) overcommitted nodes", []),
    ("stale revisions (k3s-io/kine issue 213)", []),
    ("the request gate of issue 8", ["issue 8"]),
    ("limits (Issue #12)", ["Issue #12"]),
    ('"""Hostile input\n(issues 3 and 4)', ["issues 3"]),
    ("this issue is about the queue", []),
])
def test_uncited_issues_are_found(text: str, found: list[str]) -> None:
    assert uncited_issues(text) == found


def test_the_code_cites_no_issue_of_its_own_tracker() -> None:
    this_file = Path(__file__).resolve()
    found = [
        f"{path.relative_to(REPO)}: {citation}"
        for path in _project_files()
        if path != this_file and path.relative_to(REPO).parts[0] in CODE_DIRS
        for citation in uncited_issues(path.read_text(errors="replace"))
    ]
    assert not found, ("issues cited without the upstream project they belong to (say the reason "
                       "instead):\n" + "\n".join(found))


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of ``markdown``: lower case, punctuation but ``-`` and ``_``
    dropped, spaces as ``-``, a repeated anchor numbered ``-1``, ``-2``, ...; a line in a code block is no
    heading."""
    anchors: set[str] = set()
    in_code = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        heading = None if in_code else HEADING.match(line)
        if heading is None:
            continue
        base = re.sub(r"[^\w\- ]", "", heading[1].strip().lower()).replace(" ", "-")
        anchor, count = base, 0
        while anchor in anchors:
            count += 1
            anchor = f"{base}-{count}"
        anchors.add(anchor)
    return anchors


def test_heading_anchors_are_githubs() -> None:
    markdown = "# Title\n## Several replicas: `podsched up`\n```\n# not a heading\n```\n## Title\n"
    assert heading_anchors(markdown) == {"title", "several-replicas-podsched-up", "title-1"}


def test_markdown_links_to_a_heading_name_one_that_exists() -> None:
    broken = []
    for path in _project_files():
        if path.suffix != ".md":
            continue
        for target, anchor in ANCHOR_LINK.findall(path.read_text()):
            if "://" in target:
                continue
            page = (path.parent / target).resolve() if target else path
            if page.suffix == ".md" and page.is_file() and anchor not in heading_anchors(page.read_text()):
                broken.append(f"{path.relative_to(REPO)}: ({target}#{anchor})")
    assert not broken, "links to headings that do not exist:\n" + "\n".join(broken)


def test_the_manual_counts_the_conformance_cases_there_are() -> None:
    cases = [path for path in CONFORMANCE_CASES.glob("*.yaml") if not path.name.endswith(".config.yaml")]
    claims = [
        (page.relative_to(REPO), claim)
        for page in MANUAL
        for claim in re.findall(r"`tests/conformance/` holds (\d+) scenarios", page.read_text())
    ]
    assert claims, "no page of the manual says how many conformance scenarios there are: update this test"
    for page, claim in claims:
        assert int(claim) == len(cases), (
            f"{page} says tests/conformance/ holds {claim} scenarios; {CONFORMANCE_CASES} has "
            f"{len(cases)}: correct {page}")
