"""The README and "Generating and vendoring" tell which schema acpgen bundles (the release and
stability ``acpgen/schema/SOURCE.json`` records, as ``acpgen generate --help`` names them) and
what a move to v1.7.0's stable schema does to its unstable methods: the methods each page says
go and stay are the ones the two method tables say.
"""

from __future__ import annotations

import fnmatch
import json
import re

import pytest
from click.testing import CliRunner
from support import BUNDLED, CORPUS, docs

from acpgen.cli import checking, diffing, generating, main, validating  # noqa: F401  (each registers its commands)
from acpgen.model.method_table import build_method_table
from acpgen.schema.loader import load_schema

SOURCE = json.loads((BUNDLED.parent / "SOURCE.json").read_text())
STABLE_V1_7 = CORPUS / "v1.7.0--v1-schema.json"
PAGES = {"README.md": "The bundled schema", "guides/generating.md": "Which schema"}


def _methods(path) -> dict[str, bool]:
    """Wire name -> whether it is unstable."""
    methods, _ = build_method_table(load_schema(path))
    return {m.wire_name: m.unstable for m in methods}


def _names(text: str) -> set[str]:
    return set(re.findall(r"`([\w$]+(?:/[\w*]+)?)`", text))


def _expand(patterns: set[str], names: set[str]) -> set[str]:
    found = set()
    for pattern in patterns:
        matched = {n for n in names if fnmatch.fnmatchcase(n, pattern)}
        assert matched, f"{pattern} names no method"
        found |= matched
    return found


def test_the_bundled_schema_is_the_release_file_source_json_records():
    assert SOURCE["release_tag"] == "v0.12.2" and SOURCE["path_in_release"] == "schema/schema.unstable.json"
    assert BUNDLED.read_bytes() == (CORPUS / "v0.12.2--schema.unstable.json").read_bytes()


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_page_names_the_bundled_release_its_stability_and_how_to_choose_another(page):
    text = docs.section(page, PAGES[page])
    assert SOURCE["release_tag"] in text and f"`{SOURCE['path_in_release']}`" in text
    assert re.search(r"\bunstable\b", text) and "--stable-only" in text
    assert "acpgen diff --out OUT" in text and "--schema" in text and "v1.7.0" in text


@pytest.mark.parametrize("command", [["generate", "--help"], ["diff", "--help"], ["check", "--help"]])
def test_the_command_line_names_the_bundled_release_and_stability(command):
    """What the pages say is what ``--help`` says of the default schema: its release, unstable."""
    done = CliRunner().invoke(main, command, terminal_width=200)
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    if command[0] == "diff":  # diff compares what it is given: it names the bundled one, no more
        assert "bundled" in text
    else:
        assert f"the bundled one (ACP {SOURCE['release_tag']}, unstable)" in text


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_methods_each_page_says_a_move_to_v1_7_0_stable_takes_away_and_keeps_are_the_tables(page):
    bundled, stable = _methods(BUNDLED), _methods(STABLE_V1_7)
    assert not any(stable.values())  # a stable schema marks nothing unstable
    unstable = {name for name, flag in bundled.items() if flag}
    text = " ".join(docs.section(page, PAGES[page]).split())
    gone = re.search(r"(`session/fork`.*?) (?:are gone|which the bundled schema has as unstable)", text)
    kept = re.search(r"(`logout`.*?) (?:are stable|as stable)", text)
    assert gone and kept, text
    assert _expand(_names(gone.group(1)), unstable) == unstable - set(stable)
    assert _expand(_names(kept.group(1)), unstable) == unstable & set(stable)
