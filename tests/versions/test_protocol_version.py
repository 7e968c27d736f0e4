"""The protocol version a package speaks comes from its schema: a ``const`` on ``ProtocolVersion``,
else the ``version`` of the release's meta.json beside it, else 1; ``--protocol-version`` (or
``[tool.acpgen] protocol-version``) overrides it, and a bad value is one line."""

from __future__ import annotations

import json
import shutil

import pytest
from support import CORPUS, mini_schema, one_error_line, tree

from acpgen.pipeline import Options, generate
from acpgen.schema.protocol import meta_path

V2 = CORPUS / "v1.7.0--v2-schema.json"


def protocol_version_of(files: dict[str, str]) -> int:
    methods = next(text for path, text in files.items() if path.endswith("/methods.py"))
    line = next(line for line in methods.splitlines() if line.startswith("PROTOCOL_VERSION = "))
    return int(line.split(" = ")[1])


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        ("schema.json", "meta.json"),
        ("schema.unstable.json", "meta.unstable.json"),
        ("v1.7.0--v2-schema.json", "v1.7.0--v2-meta.json"),
        ("acp.json", "meta.json"),
    ],
)
def test_the_meta_file_lies_beside_the_schema_named_like_it(tmp_path, name, meta):
    assert meta_path(tmp_path / name) == tmp_path / meta


def test_a_v2_release_speaks_the_version_its_meta_file_states(tmp_path):
    # its descriptions' links to the protocol's v2 pages taken out: then it states no version
    (tmp_path / "schema.json").write_text(V2.read_text().replace("agentclientprotocol.com/protocol/v2/", "example.org/"))
    alone = generate(Options(schema=tmp_path / "schema.json"), only={"methods.py"})
    assert protocol_version_of(alone.files) == 1  # no meta.json, no const, no links: v1's default
    shutil.copy(CORPUS / "v1.7.0--v2-meta.json", tmp_path / "meta.json")
    beside = generate(Options(schema=tmp_path / "schema.json"), only={"methods.py"})
    assert protocol_version_of(beside.files) == 2
    assert protocol_version_of(generate(Options(schema=V2), only={"methods.py"}).files) == 2


def test_a_const_on_protocol_version_states_it_and_the_option_overrides_both(tmp_path):
    document = mini_schema()
    document["$defs"]["ProtocolVersion"] = {"type": "integer", "const": 3}
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(document))
    (tmp_path / "meta.json").write_text(json.dumps({"version": 2}))
    assert protocol_version_of(generate(Options(schema=schema), only={"methods.py"}).files) == 3
    overridden = generate(Options(schema=schema, protocol_version=7), only={"methods.py"})
    assert protocol_version_of(overridden.files) == 7


def test_the_flag_is_in_the_header_and_check_holds_it(cli, tmp_path):
    shutil.copy(V2, tmp_path / "schema.json")
    result = cli("generate", "--schema", str(tmp_path / "schema.json"), "--out", str(tmp_path / "out"),
                 "--protocol-version", "2")
    assert result.exit_code == 0, result.stderr
    methods = (tmp_path / "out" / "acp_bindings" / "methods.py").read_text()
    assert "PROTOCOL_VERSION = 2" in methods and "--protocol-version 2`" in methods.splitlines()[1]
    assert cli("check", "--schema", str(tmp_path / "schema.json"), "--out", str(tmp_path / "out"),
               "--protocol-version", "2").exit_code == 0
    # check takes an option it is not given from the manifest's record, and names one that differs
    assert cli("check", "--schema", str(tmp_path / "schema.json"), "--out", str(tmp_path / "out")).exit_code == 0
    differs = cli("check", "--schema", str(tmp_path / "schema.json"), "--out", str(tmp_path / "out"),
                  "--protocol-version", "3")
    assert differs.exit_code != 0
    assert "--protocol-version is 3 here but the package was generated with --protocol-version 2" in differs.stderr


@pytest.mark.parametrize("value", ["x", "-1", "65536", "1.5", ""])
def test_a_bad_flag_is_one_line_and_writes_nothing(cli, write_schema, tmp_path, value):
    schema = write_schema(mini_schema())
    result = cli("generate", "--schema", str(schema), "--out", str(tmp_path / "out"), "--protocol-version", value)
    assert one_error_line(result) == (
        f"error: --protocol-version {value!r} is not a protocol version: an integer from 0 to 65535"
    )
    assert tree(tmp_path / "out") == {}


@pytest.mark.parametrize("value", ['"2"', "true", "-3", "70000"])
def test_a_bad_config_value_is_one_line(cli, tmp_path, monkeypatch, value):
    (tmp_path / "schema.json").write_text(json.dumps(mini_schema()))
    (tmp_path / "pyproject.toml").write_text(f'[tool.acpgen]\nschema = "schema.json"\nprotocol-version = {value}\n')
    monkeypatch.chdir(tmp_path)
    line = one_error_line(cli("generate"))
    assert line.startswith("error: pyproject.toml: [tool.acpgen] protocol-version must be an integer from 0 to 65535")
    assert not (tmp_path / "generated").exists()


def test_the_config_key_sets_the_version(cli, tmp_path, monkeypatch):
    (tmp_path / "schema.json").write_text(json.dumps(mini_schema()))
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nschema = "schema.json"\nprotocol-version = 2\n')
    monkeypatch.chdir(tmp_path)
    assert cli("generate").exit_code == 0
    assert "PROTOCOL_VERSION = 2" in (tmp_path / "generated" / "acp_bindings" / "methods.py").read_text()


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ("{not json", "meta.json: error: cannot read the release's meta file: "),
        ('{"version": "2"}', "meta.json: error: #/version: version '2' is not a protocol version: an integer"),
    ],
)
def test_a_bad_meta_file_is_one_line_naming_it(cli, write_schema, tmp_path, meta, message):
    schema = write_schema(mini_schema())
    (schema.parent / "meta.json").write_text(meta)
    result = cli("generate", "--schema", str(schema), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert tree(tmp_path / "out") == {}


def test_a_manifest_recorded_before_the_option_existed_still_reads(cli, write_schema, tmp_path):
    schema = write_schema(mini_schema())
    out = tmp_path / "out"
    assert cli("generate", "--schema", str(schema), "--out", str(out)).exit_code == 0
    manifest = out / "acp_bindings" / "acpgen-manifest.json"
    document = json.loads(manifest.read_text())
    del document["options"]["protocol-version"]
    manifest.write_text(json.dumps(document, indent=2))
    result = cli("check", "--schema", str(schema), "--out", str(out))
    assert result.exit_code == 1, result.stderr  # the manifest differs (it lacks the key), nothing worse
    assert "changed: " in result.stderr and "acpgen-manifest.json" in result.stderr
    assert cli("generate", "--schema", str(schema), "--out", str(out)).exit_code == 0
    assert json.loads(manifest.read_text())["options"]["protocol-version"] is None
