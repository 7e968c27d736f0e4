"""The suite's shared outputs (``support.run_cache``) give what ``generate`` gives, and a key that
changes with everything the output depends on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from support import CORPUS
from support.run_cache import FOLDER, _key, generated_files

from acpgen.pipeline import Options, generate

OLD = CORPUS / "v0.4.7--schema.json"


def test_a_kept_output_is_what_generate_gives(tmp_path, monkeypatch):
    monkeypatch.setenv(FOLDER, str(tmp_path))
    options = Options(schema=OLD, package="kept")
    first = generated_files(options, only={"methods.py"})
    assert len(list(tmp_path.glob("*.json"))) == 1
    assert generated_files(options, only={"methods.py"}) == first == generate(options, only={"methods.py"}).files


def test_the_key_changes_with_the_options_the_files_they_name_and_black(tmp_path, monkeypatch):
    copy = tmp_path / OLD.name
    copy.write_bytes(OLD.read_bytes())
    base = _key(Options(schema=OLD), None)
    others = [
        _key(Options(schema=OLD, package="other"), None),
        _key(Options(schema=OLD, models="pydantic"), None),
        _key(Options(schema=OLD), {"models.py"}),
        _key(Options(schema=copy), None),  # the same bytes elsewhere: the header names the path
        _key(Options(), None),
    ]
    assert base == _key(Options(schema=Path(str(OLD))), None)
    assert len({base, *others}) == len(others) + 1
    (tmp_path / "v0.4.7--meta.json").write_text('{"version": 1}\n')  # the release's meta.json beside it
    assert _key(Options(schema=copy), None) != others[3]
    copy.write_bytes(OLD.read_bytes() + b"\n")
    assert _key(Options(schema=copy), None) not in others
    monkeypatch.setitem(sys.modules, "black", None)  # black cannot be imported
    assert _key(Options(schema=OLD), None) != base


def test_outside_a_run_nothing_is_kept(monkeypatch):
    options = Options(schema=OLD, package="not_kept")
    kept = Path(os.environ[FOLDER]) / f"{_key(options, {'methods.py'})}.json"  # where a run keeps it
    monkeypatch.delenv(FOLDER)
    assert generated_files(options, only={"methods.py"}) == generate(options, only={"methods.py"}).files
    assert not kept.exists()
