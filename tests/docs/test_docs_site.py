"""The documentation site builds with ``mkdocs build --strict`` (what ``make docs`` runs): every
link and anchor resolves, every page is in the navigation, and the API reference pages carry the
docstrings of the generated package and of acpgen."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from support import ROOT, docs


def _nav_pages(items) -> list[str]:
    found = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found += _nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_every_page_is_in_the_navigation():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True
    assert sorted(_nav_pages(config["nav"])) == sorted(p for p in docs.pages() if p != "README.md")


def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    package = (site / "reference" / "package-api" / "index.html").read_text()
    for documented in ("Serve <code>agent</code> on this process", "AgentSideConnection", "SessionState", "RequestError"):
        assert documented in package, documented
    assert not re.search(r":(class|func|meth|mod|data):", package)  # Sphinx roles: see docs/hooks.py
    api = (site / "reference" / "python-api" / "index.html").read_text()
    assert "DiagnosticError" in api and "regenerate_command" in api
    assert (site / "guides" / "writing-a-client" / "index.html").is_file()


def test_the_readme_links_into_pages_that_exist():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", docs.read("README.md"))
    local = [link for link in links if "://" not in link]
    assert local and all((ROOT / link).is_file() for link in local), [link for link in local if not (ROOT / link).is_file()]
    assert {link.removeprefix("docs/") for link in local} >= {p for p in docs.pages() if p.startswith("guides/")}
