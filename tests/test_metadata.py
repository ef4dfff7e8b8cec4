"""LICENSE, CITATION.cff and pyproject's metadata agree with each other and the package."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import fastkappa

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def project() -> dict:
    # tomllib is in the standard library from Python 3.11; tomli before
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_license_file_is_the_license_pyproject_declares(project):
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert text.startswith("BSD 3-Clause License")
    # the three clauses, numbered, and the disclaimer
    assert re.findall(r"^(\d)\. ", text, re.M) == ["1", "2", "3"]
    assert "Neither the name of the copyright holder" in text
    assert "AS IS" in text


def test_citation_matches_the_package(project):
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "version", "license"):
        assert cff[key], key
    assert str(cff["version"]) == project["version"] == fastkappa.__version__
    assert cff["license"] == project["license"]
    for ref in cff["references"]:
        assert re.fullmatch(r"10\.\d{4,}/\S+", ref["doi"]), ref["title"]
        assert ref["authors"] and ref["year"]


def test_project_urls_are_absolute(project):
    urls = project["urls"]
    assert urls
    assert all(u.startswith("https://") for u in urls.values())
