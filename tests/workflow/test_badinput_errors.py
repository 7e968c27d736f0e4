"""Every mistake a user can make: one line naming what is wrong and where it came from, exit 2,
nothing written. Where the value came from is a flag, a `[tool.acpgen]` key, a file and line, or
a JSON pointer."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from support import (
    BUNDLED,
    bundled_document,
    mini_schema,
    one_error_line,
    tree,
    write_package,
)

from acpgen.cli import main
from acpgen.pipeline import Options, generate

MAX_DEPTH = 64  # acpgen.schema.depth.MAX_DEPTH; a test below holds the two equal


def refused(result, root) -> str:
    """One line on stderr, exit 2, and ``root`` holds no output."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not any(p.name.endswith(".py") for p in root.rglob("*")), "nothing may be written"
    return lines[0]


@pytest.mark.parametrize(
    ("package", "why"),
    [("class.foo", "'class' is a Python keyword"), ("a.import", "'import' is a Python keyword")],
)
def test_a_package_name_with_a_keyword_is_refused(cli, tmp_path, package, why):
    line = one_error_line(cli("generate", "--package", package, "--out", tmp_path / "out"))
    assert line == f"error: --package {package!r} is not a dotted Python name: {why}"
    assert not (tmp_path / "out").exists()


def test_a_bad_package_from_pyproject_names_the_key_not_the_flag(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\npackage = "my-pkg"\n')
    monkeypatch.chdir(tmp_path)
    line = one_error_line(cli("generate"))
    assert line == ("error: pyproject.toml: [tool.acpgen] package 'my-pkg' is not a dotted Python name: each part"
                    " must be a Python identifier (letters, digits, _), joined by dots")
    assert "#" not in line, "an option is not in a schema: no JSON pointer"
    assert tree(tmp_path) == {"pyproject.toml": b'[tool.acpgen]\npackage = "my-pkg"\n'}
    # the flag wins over the file, and is named as the flag
    line = one_error_line(cli("generate", "--package", "also-bad"))
    assert line.startswith("error: --package 'also-bad' is not a dotted Python name")


def test_a_missing_templates_folder_from_pyproject_names_the_key(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\ntemplates = "mine"\n')
    monkeypatch.chdir(tmp_path)
    assert one_error_line(cli("generate")) == "error: pyproject.toml: [tool.acpgen] templates 'mine' is not a folder"


@pytest.mark.parametrize("key", ["schema", "names"])
def test_a_missing_file_from_pyproject_names_the_key(cli, tmp_path, monkeypatch, key):
    (tmp_path / "pyproject.toml").write_text(f'[tool.acpgen]\n{key} = "conf/missing.json"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    line = one_error_line(cli("generate"))
    assert line == f"error: ../pyproject.toml: [tool.acpgen] {key} 'conf/missing.json' is not a file"  # as written
    assert not (tmp_path / "sub" / "generated").exists()


@pytest.mark.parametrize("command", ["generate", "check"])
def test_an_out_from_pyproject_that_is_a_file_names_the_key(cli, tmp_path, monkeypatch, command):
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nout = "build"\n')
    (tmp_path / "build").write_text("a file\n")
    monkeypatch.chdir(tmp_path)
    assert one_error_line(cli(command)) == "error: pyproject.toml: [tool.acpgen] out build is not a folder"
    assert one_error_line(cli(command, "--out", "build")) == "error: --out build is not a folder"


@pytest.mark.parametrize(
    ("value", "why"),
    [("class", "a Python keyword"), ("__all__", "it starts with __"), ("str", "a name the generated code uses itself")],
)
def test_a_names_file_value_acpgen_cannot_use_is_the_names_files_fault(cli, tmp_path, value, why):
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"ContentBlock/text": value}))
    line = refused(cli("generate", "--names", names, "--out", tmp_path / "out"), tmp_path)
    assert line == (f"{names}: error: #/ContentBlock~1text: names file: 'ContentBlock/text' maps to {value!r},"
                    f" which is not a usable class name ({why})")


@pytest.mark.parametrize(
    "document",
    [{"name": "my-app", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}}, {}, {"$defs": {"A": {"type": "string"}}}],
    ids=["package.json", "empty", "types only"],
)
@pytest.mark.parametrize("command", ["generate", "check", "methods"])
def test_a_schema_without_methods_is_refused(cli, tmp_path, document, command):
    schema = tmp_path / "package.json"
    schema.write_text(json.dumps(document))
    args = ["--schema", schema] + (["--out", tmp_path / "out"] if command != "methods" else [])
    line = refused(cli(command, *args), tmp_path)
    assert line == f"{schema}: error: no $defs entry has an x-method annotation: this is not an ACP schema"
    assert tree(tmp_path) == {"package.json": json.dumps(document).encode()}


def test_a_schema_without_methods_among_several_versions_is_refused(cli, tmp_path):
    (tmp_path / "package.json").write_text('{"name": "my-app"}')
    result = cli("generate", "--schema", BUNDLED, "--schema", tmp_path / "package.json", "--out", tmp_path / "out")
    line = refused(result, tmp_path)
    assert line == f"{tmp_path / 'package.json'}: error: no $defs entry has an x-method annotation: this is not an ACP schema"


@pytest.mark.parametrize(("package", "top"), [("json", "json"), ("os.acp", "os"), ("asyncio._vendor", "asyncio")])
def test_a_package_named_like_a_standard_library_module_is_refused(cli, tmp_path, package, top):
    line = one_error_line(cli("generate", "--package", package, "--out", tmp_path / "out"))
    assert line == (f"error: --package {package!r} cannot be imported: {top!r} is a module of Python's standard"
                    f" library, which `import {package}` finds first; choose another top-level name")
    assert not (tmp_path / "out").exists()


def test_the_standard_library_names_refused_are_those_of_every_python_acpgen_supports():
    """The same names on 3.10 to 3.13: a package that one of them cannot import is refused on all."""
    from acpgen.model.naming import STDLIB_MODULES

    assert set(sys.stdlib_module_names) <= STDLIB_MODULES
    assert {"tomllib", "cgi", "distutils", "imp", "asyncore", "json"} <= STDLIB_MODULES  # new in 3.11; gone by 3.13
    assert "acp_bindings" not in STDLIB_MODULES


def test_an_undefined_name_in_a_users_template_names_its_file_and_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "models.py.jinja").write_text("# models\n\n{{ undefined_thing }}\n")
    line = refused(cli("generate", "--templates", "mine"), tmp_path)
    assert line == "error: mine/models.py.jinja:3: 'undefined_thing' is undefined"


def test_a_syntax_error_in_a_users_template_names_its_file_and_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "agent.py.jinja").write_text("ok\n{% for x in %}\n")
    line = refused(cli("generate", "--templates", "mine"), tmp_path)
    assert line == "error: mine/agent.py.jinja:2: Expected an expression, got 'end of statement block'"


def test_an_included_template_is_named_where_it_fails(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "pair.py.jinja").write_text("{% include 'part.jinja' %}\n")
    (tmp_path / "mine" / "part.jinja").write_text("one\ntwo {{ spec.nothing_here }}\n")
    line = refused(cli("generate", "--templates", "mine"), tmp_path)
    assert line == "error: mine/part.jinja:2: 'acpgen.model.spec.Spec object' has no attribute 'nothing_here'"


def test_a_user_template_that_renders_invalid_python_names_the_module(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "pair.py.jinja").write_text("def broken(:\n")
    line = refused(cli("generate", "--templates", "mine"), tmp_path)
    assert line.startswith("error: acp_bindings/pair.py: generated code is not valid Python:")


def test_a_schema_nested_too_deep_is_one_line_with_a_pointer(cli, tmp_path, write_schema):
    from acpgen.schema import depth

    assert depth.MAX_DEPTH == MAX_DEPTH
    doc = bundled_document()
    node: dict = {"type": "string"}
    for _ in range(300):
        node = {"allOf": [node]}
    doc["$defs"]["Deep"] = node
    schema = write_schema(doc)
    line = refused(cli("generate", "--schema", schema, "--out", tmp_path / "out"), tmp_path)
    expected_pointer = "#/$defs/Deep" + "/allOf/0" * ((MAX_DEPTH - 2) // 2)
    assert line.startswith(f"{schema}: error: {expected_pointer}: the schema nests more than {MAX_DEPTH}")
    assert "RecursionError" not in line


def test_nesting_just_under_the_limit_still_generates(cli, tmp_path, write_schema):
    doc = mini_schema()
    node: dict = {"type": "string"}
    for _ in range((MAX_DEPTH - 4) // 2):  # $defs / Deep / (allOf / 0)*
        node = {"allOf": [node]}
    doc["$defs"]["Deep"] = node
    node = {"type": "string"}
    for _ in range((MAX_DEPTH - 4) // 2):
        node = {"type": "object", "properties": {"a": node}}
    doc["$defs"]["DeepObject"] = node
    result = cli("generate", "--schema", write_schema(doc), "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    ("defs", "message"),
    [
        ({"Cyc": {"$ref": "#/$defs/Cyc"}}, "#/$defs/Cyc: $ref cycle Cyc -> Cyc never reaches a real type"),
        ({"CycA": {"$ref": "#/$defs/CycB"}, "CycB": {"$ref": "#/$defs/CycA"}},
         "#/$defs/CycA: $ref cycle CycA -> CycB -> CycA never reaches a real type"),
        ({"Cyc": {"allOf": [{"$ref": "#/$defs/Cyc"}]}}, "#/$defs/Cyc: $ref cycle Cyc -> Cyc never reaches a real type"),
        ({"Cyc": {"anyOf": [{"$ref": "#/$defs/Cyc"}, {"type": "string"}]}},
         "#/$defs/Cyc: $ref cycle Cyc -> Cyc never reaches a real type"),
        ({"Cyc": {"anyOf": [{"$ref": "#/$defs/Cyc"}, {"type": "null"}]}},
         "#/$defs/Cyc: $ref cycle Cyc -> Cyc never reaches a real type"),
        ({"Cyc": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Cyc"}}, {"type": "string"}]}},
         "#/$defs/Cyc: $ref cycle Cyc -> Cyc goes through an array or a map"),
    ],
    ids=["self", "a-b-a", "allOf", "anyOf", "nullable", "array"],
)
def test_a_ref_cycle_among_aliases_is_an_error_at_its_pointer(cli, tmp_path, write_schema, defs, message):
    doc = mini_schema()
    doc["$defs"].update(defs)
    schema = write_schema(doc)
    line = refused(cli("generate", "--schema", schema, "--out", tmp_path / "out"), tmp_path)
    assert line.startswith(f"{schema}: error: {message}")


def test_a_class_may_still_contain_itself(cli, tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["Tree"] = {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
        "next": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}}}
    doc["$defs"]["Forest"] = {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
    out = tmp_path / "out"
    assert cli("generate", "--schema", write_schema(doc), "--out", out).exit_code == 0
    probe = subprocess.run([sys.executable, "-c", ("from acp_bindings import Tree, Forest, decode; "
                            "t = decode(Tree, {'children': [{'next': None}]}); print(t.children[0].next)")],
                           check=False, cwd=out, capture_output=True, text=True)
    assert (probe.returncode, probe.stdout) == (0, "None\n"), probe.stderr


def test_check_of_a_missing_output_folder_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project folder: the hint's paths are relative to it
    result = cli("check", "--out", tmp_path / "nowhere")
    assert result.exit_code == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"acpgen check: {tmp_path / 'nowhere'} does not exist (")
    assert lines[0].endswith(" missing); run `acpgen generate --out nowhere`")  # not into generated/


def test_check_summary_prints_no_diff(cli, tmp_path, write_schema):
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    (out / "acp_bindings" / "methods.py").write_text("# edited\n")
    full = cli("check", "--schema", schema, "--out", out)
    short = cli("check", "--schema", schema, "--out", out, "--summary")
    assert full.exit_code == short.exit_code == 1
    assert "# edited" in full.stdout and short.stdout == ""
    assert short.stderr == full.stderr
    assert f"  changed: {(out / 'acp_bindings' / 'methods.py').as_posix()}" in short.stderr.splitlines()


def test_methods_reads_the_schema_from_pyproject(cli, tmp_path, monkeypatch):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "acp.json").write_text(json.dumps(mini_schema()))
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nschema = "schemas/acp.json"\n')
    (tmp_path / "deep" / "inside").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "inside")
    result = cli("methods", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [m["method"] for m in json.loads(result.stdout)] == ["ping", "log/line"]
    bundled = cli("methods", "--format", "json", "--schema", BUNDLED)  # the flag still wins
    assert len(json.loads(bundled.stdout)) > 20


def test_methods_reports_a_bad_pyproject(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nschema = 3\n')
    monkeypatch.chdir(tmp_path)
    assert one_error_line(cli("methods")) == "error: pyproject.toml: [tool.acpgen] schema must be a non-empty string, found 3"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The issue's project: schema/acp.json, out = "src", a vendored package; work in a subfolder."""
    root = tmp_path / "project"
    (root / "schema").mkdir(parents=True)
    (root / "schema" / "acp.json").write_text(json.dumps(mini_schema()))
    (root / "pyproject.toml").write_text(
        '[tool.acpgen]\nschema = "schema/acp.json"\nout = "src"\npackage = "p._vendor.acp"\nside = "agent"\n'
    )
    (root / "src" / "p").mkdir(parents=True)
    monkeypatch.chdir(root / "src" / "p")
    return root


def header_command(package_dir) -> str:
    line = (package_dir / "__init__.py").read_text().splitlines()[1]
    assert line.startswith("# Do not edit: regenerate with `") and line.endswith("`.")
    return line.removeprefix("# Do not edit: regenerate with `").removesuffix("`.")


def test_the_header_command_run_verbatim_in_the_project_remakes_the_output(cli, project, monkeypatch):
    assert cli("generate").exit_code == 0
    package = project / "src" / "p" / "_vendor" / "acp"
    command = header_command(package)
    # every option, out included, relative to the project folder (the pyproject.toml's)
    assert command == "acpgen generate --schema schema/acp.json --out src --package p._vendor.acp --side agent"
    before = tree(project)
    monkeypatch.chdir(project)
    args = command.split()[1:]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    assert tree(project) == before
    # from any folder of the project, `acpgen generate` writes the same header
    (project / "schema" / "acp.json").write_text(json.dumps({**mini_schema(), "description": "changed"}))
    for folder in (project / "src", project / "schema"):
        monkeypatch.chdir(folder)
        assert cli("generate").exit_code == 0
        assert header_command(package) == command
        assert cli("check").exit_code == 0


def test_the_header_command_without_a_project_is_relative_to_the_working_folder(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "mine.json").write_text(json.dumps(mini_schema()))
    assert cli("generate", "--schema", tmp_path / "schemas" / "mine.json").exit_code == 0
    command = header_command(tmp_path / "generated" / "acp_bindings")
    assert command == "acpgen generate --schema schemas/mine.json"
    before = tree(tmp_path)
    assert CliRunner().invoke(main, command.split()[1:]).exit_code == 0
    assert tree(tmp_path) == before


@pytest.mark.parametrize("name", ["_", "__all__", "class", "1st", "Ünïcode", "__init__"])
def test_a_params_type_whose_name_python_must_change_still_imports(tmp_path, write_schema, name):
    doc = bundled_document()
    old = "PromptRequest"
    doc = json.loads(json.dumps(doc).replace(f'"#/$defs/{old}"', json.dumps(f"#/$defs/{name}")))
    doc["$defs"][name] = doc["$defs"].pop(old)
    result = generate_and_import_all(write_schema(doc), tmp_path / "out", check=(
        "import acp_bindings.agent as agent\n"
        "(route,) = [r for r in agent.AGENT_ROUTES if r.method == 'session/prompt']\n"
        "assert isinstance(route.params_type, type) and route.params_type.__module__ == 'acp_bindings.models', route\n"
        "assert route.params_type.from_json({'sessionId': 's', 'prompt': []}).session_id == 's'\n"
    ))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("wire", ["__init__", "_request", "_notify", "__slots__", "__init_subclass__", "_agent"])
def test_a_method_whose_id_meets_the_generated_classes_internals_still_works(tmp_path, write_schema, wire):
    doc = bundled_document()
    doc = copy.deepcopy(doc)
    for node in doc["$defs"].values():
        if isinstance(node, dict) and node.get("x-method") == "session/prompt":
            node["x-method"] = wire
    result = generate_and_import_all(write_schema(doc), tmp_path / "out", check=(
        "import acp_bindings as acp\n"
        "class A(acp.Agent):\n"
        "    pass\n"
        "a = A()\n"
        "assert acp.Agent.__init__ is object.__init__ and '__slots__' not in vars(acp.Agent)\n"
        "assert acp.AgentProxy._request is acp._rpc.Proxy._request and acp.AgentProxy._notify is acp._rpc.Proxy._notify\n"
        f"assert [r.handler for r in acp.agent.AGENT_ROUTES if r.method == {wire!r}] == ['on{wire}']\n"
        # a call through the proxy reaches the handler and comes back, over an in-memory pair
        "import asyncio\n"
        "from acp_bindings import models\n"
        "async def handle(self, params):\n"
        "    return models.PromptResponse(stop_reason='end_turn')\n"
        f"setattr(A, 'on{wire}', handle)\n"
        "async def main():\n"
        "    async with acp.in_memory_pair(A(), acp.Client()) as (agent_conn, client_conn):\n"
        f"        call = getattr(client_conn.agent, 'on{wire}')\n"
        "        result = await call(models.PromptRequest(session_id='s', prompt=[]))\n"
        "        assert result.stop_reason == 'end_turn', result\n"
        "asyncio.run(main())\n"
    ))
    assert result.returncode == 0, result.stderr


def generate_and_import_all(schema, out, check: str = "") -> subprocess.CompletedProcess[str]:
    """Generate (here: the CLI's own runs are the other tests'), then import every module of the
    package in a fresh process."""
    write_package(generate(Options(schema=schema)).files, out)
    modules = sorted(p.stem for p in (out / "acp_bindings").glob("*.py") if p.stem != "__init__")
    code = "import acp_bindings\n" + "".join(f"import acp_bindings.{m}\n" for m in modules) + check + (
        "from acp_bindings import *\n"
        "for module in (acp_bindings, acp_bindings.models):\n"
        "    assert isinstance(module.__all__, list), module.__all__\n"
        "    assert all(isinstance(name, str) and hasattr(module, name) for name in module.__all__)\n"
        "    assert module.__name__.startswith('acp_bindings') and module.__spec__ is not None\n"
    )
    return subprocess.run([sys.executable, "-c", code], check=False, cwd=out, capture_output=True, text=True)
