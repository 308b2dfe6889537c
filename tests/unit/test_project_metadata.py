"""pyproject.toml's project metadata in the form current build backends read without a warning."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]


def test_the_license_is_an_spdx_expression_and_the_build_requires_a_setuptools_that_reads_it() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    license = pyproject["project"]["license"]
    # The table form ({text = ...}) is deprecated (PEP 639); pip install warns about it.
    assert isinstance(license, str), license
    assert canonicalize_license_expression(license) == license
    # A license expression excludes the license classifiers.
    assert not [c for c in pyproject["project"].get("classifiers", []) if c.startswith("License ::")]
    requires = {Requirement(text).name: Requirement(text) for text in pyproject["build-system"]["requires"]}
    # setuptools 77 is the first to read a license expression.
    assert "76.9" not in requires["setuptools"].specifier
