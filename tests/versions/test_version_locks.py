"""Each protocol version's names lock, read from the manifest of a package of one version or of
several, of this acpgen or of an earlier one (which records no versions)."""

from __future__ import annotations

import shutil

from support import CORPUS

from acpgen.output.manifest import Manifest, manifest_for, parse_manifest
from acpgen.output.recipe import Recipe
from acpgen.versioned import previous_package, root_version, schema_version


def manifest(names: dict[str, str], files: tuple[str, ...] = (), options: Recipe | None = None, **versions) -> Manifest:
    recorded = manifest_for(dict.fromkeys(files, ""), dict.fromkeys(files, ""), "0" * 64, names, options, **versions)
    return parse_manifest(recorded.to_text())  # as read back from the disk


def test_a_package_of_one_version_locks_that_version_and_records_it():
    read = manifest({"defs/Foo": "Foo", "variants/U/a": "A"}, ("acp/models.py",), versions=(2,), root_version=2)
    assert (read.versions, read.root_version) == ((2,), 2)
    previous = previous_package(read, CORPUS, "acp", None)
    assert (previous.locks, previous.root) == ({2: {"defs/Foo": "Foo", "variants/U/a": "A"}}, 2)


def test_a_package_of_several_locks_each_version_by_its_folder():
    names = {"v1/defs/Foo": "Foo", "v1/variants/U/a": "Cancelled", "v2/defs/Foo": "Foo2"}
    read = manifest(names, ("acp/v1/models.py", "acp/v2/models.py"), versions=(1, 2), root_version=1)
    previous = previous_package(read, CORPUS, "acp", None)
    assert previous.locks == {1: {"defs/Foo": "Foo", "variants/U/a": "Cancelled"}, 2: {"defs/Foo": "Foo2"}}
    assert previous.root == 1
    # an earlier acpgen's: no versions recorded, and no version's API at its root
    old = manifest(names, ("acp/v1/models.py", "acp/v2/models.py"))
    assert previous_package(old, CORPUS, "acp", None) == type(previous)(previous.locks, None)


def test_an_earlier_single_version_manifest_is_of_its_recorded_option_else_of_its_schema_copy(tmp_path):
    names = {"defs/Foo": "Foo"}
    given = manifest(names, ("acp/models.py",), Recipe(package="acp", protocol_version=3))
    assert previous_package(given, tmp_path, "acp", None).locks == {3: names}
    # the copy of the spec's v1.7.0 v2 schema, whose version its meta.json beside the recorded schema gives
    (tmp_path / "acp").mkdir()
    shutil.copy(CORPUS / "v1.7.0--v2-schema.json", tmp_path / "acp" / "acpgen-schema.json")
    shutil.copy(CORPUS / "v1.7.0--v2-schema.json", tmp_path / "v1.7.0--v2-schema.json")
    shutil.copy(CORPUS / "v1.7.0--v2-meta.json", tmp_path / "v1.7.0--v2-meta.json")
    stated = manifest(names, ("acp/models.py",), Recipe(package="acp"))
    previous = previous_package(stated, tmp_path, "acp", tmp_path / "v1.7.0--v2-schema.json")
    assert (previous.locks, previous.root) == ({2: names}, 2)
    # the bundled schema's copy: version 1
    (tmp_path / "acp" / "acpgen-schema.json").write_text((CORPUS / "v0.12.2--schema.unstable.json").read_text())
    assert previous_package(stated, tmp_path, "acp", None).locks == {1: names}
    # no copy to read: no lock (the package is named by the rules)
    assert previous_package(stated, tmp_path / "nothing", "acp", None).locks == {}


def test_the_root_keeps_its_version_while_configured():
    assert root_version([1, 2], None) == 1
    assert root_version([1, 2], 2) == 2  # a package of v2 that v1 joins keeps v2 at its root
    assert root_version([2, 3], 1) == 2  # its version removed: the lowest left
    assert schema_version(None, None) == 1 and schema_version(None, 4) == 4
    assert schema_version(CORPUS / "v1.7.0--v2-schema.json", None) == 2
    assert schema_version(CORPUS / "no-such-schema.json", None) is None
