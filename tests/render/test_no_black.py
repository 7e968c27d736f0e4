"""Built-in output never needs black: generated where ``import black`` fails (as on a plain
``pip install .``), every release gives the bytes it gives where black is installed, and black
leaves them unchanged. ``make corpus-noblack`` does the same for every release of the corpus."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import BUNDLED, CORPUS, DATA, mini_schema
from support.blackstyle import unchanged_by_black
from support.noblack import differences, without_black

from acpgen.output import formatting
from acpgen.output.formatting import INSTALL_BLACK, format_python
from acpgen.pipeline import Options, generate
from acpgen.render.longlines import overlong_line
from acpgen.render.modules import Source, module_names

SDK = sorted((DATA / "sdk-schemas").glob("*.json"))
SPREAD = [
    CORPUS / "v0.0.33--schema.json",  # the oldest; a union black lays out on one line in parentheses
    CORPUS / "v0.11.0--schema.json",
    CORPUS / "v0.13.0--schema.unstable.json",
    CORPUS / "v1.7.0--v1-schema.unstable.json",
]
#: Run acpgen in a fresh process in which ``import black`` fails, as where black is not installed.
WITHOUT_BLACK = "import sys; sys.modules['black'] = None; from acpgen.cli import main; main()"


@pytest.fixture(scope="module")
def blocked():
    return without_black([*SDK, *SPREAD])


@pytest.mark.parametrize("schema", [*SDK, *SPREAD], ids=lambda p: p.parent.name[:3] + "-" + p.name)
def test_a_release_generates_the_same_bytes_without_black(schema, blocked):
    # the three newest SDK schemas were refused without black: a `+` of two operands ending in a bracket
    assert differences(schema, blocked[str(schema)]) == []


@pytest.mark.parametrize("schema", [SDK[-1], SPREAD[0]], ids=lambda p: p.name)
def test_black_leaves_every_module_of_a_release_unchanged(schema):
    # not the runtime: its modules are the same text in every package but for the header, and
    # test_black_style holds the bundled package's to black
    runtime = module_names(source=Source.RUNTIME)
    files = generate(Options(schema=schema)).files
    for path, text in files.items():
        name = path.rsplit("/", 1)[1]
        if path.endswith(".py") and name not in runtime and not (name == "models.py" and schema == SDK[-1]):
            assert unchanged_by_black(text, path) == []  # the bundled models.py: test_models_static


def long_method_names(length: int = 80) -> dict:
    """The bundled schema with every method's name (but the three the runtime itself speaks)
    lengthened to ``length`` characters: long handler names, wire names and result types in
    every line the side modules write for a method."""
    doc = json.loads(BUNDLED.read_text())
    for definition in doc["$defs"].values():
        method = definition.get("x-method")
        if method and method not in ("$/cancel_request", "initialize", "session/update"):
            definition["x-method"] = (method + "_lengthened" * 10)[:length]
    return doc


#: As ``WITHOUT_BLACK``, with acpgen's layout of the lines templates write whole turned off: the
#: stand-in for a line acpgen cannot lay out itself (the built-in templates have none left).
WITHOUT_BLACK_OR_RELAYOUT = (
    "import sys; sys.modules['black'] = None; import acpgen.render.longlines as p; p.relayout = lambda text: text;"
    " from acpgen.cli import main; main()"
)


def test_a_line_acpgen_cannot_lay_out_is_named_without_black(tmp_path, write_schema):
    doc = mini_schema()
    long_name = "Ping" + "Really" * 16 + "Request"  # over 100 characters
    doc["$defs"][long_name] = doc["$defs"].pop("PingRequest")
    schema = write_schema(doc)
    run = subprocess.run([sys.executable, "-c", WITHOUT_BLACK_OR_RELAYOUT, "generate", "--schema", str(schema), "--out", "out"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 2
    [message] = run.stderr.splitlines()
    assert message.startswith("error: acp_bindings/models.py:")
    where, _, rest = message[len("error: "):].partition(": ")
    number = int(where.rsplit(":", 1)[1])
    excerpt = rest.split("`")[1]
    assert excerpt.endswith("...") and f"class {long_name}(Model):".startswith(excerpt[:-3]), excerpt
    assert rest.endswith(f"itself (it is left to black), and black is not installed: {INSTALL_BLACK}")
    assert number > 1 and not (tmp_path / "out").exists()
    # with the layout on, the same schema needs no black
    run = subprocess.run([sys.executable, "-c", WITHOUT_BLACK, "generate", "--schema", str(schema), "--out", "out"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


def test_a_users_template_without_black_names_the_template(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "pair.py.jinja").write_text("x = 1\n")
    run = subprocess.run([sys.executable, "-c", WITHOUT_BLACK, "generate", "--templates", "mine", "--out", "out"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 2
    message = (
        "error: acp_bindings/pair.py: this module reads your template mine/pair.py.jinja (its layout is left"
        f" to black), and black is not installed: {INSTALL_BLACK}"
    )
    assert run.stderr.splitlines() == [message]
    assert not (tmp_path / "out").exists()


def test_a_line_too_long_is_left_to_black_only_when_black_could_split_it():
    call = "    y = g(" + "b" * 100 + ")"
    assert overlong_line(f"x = 1\n{call}\n") == (2, call)
    assert overlong_line("x = 1\n    y = f'{a}" + "b" * 100 + "'\n") is None  # a string: black leaves it
    assert overlong_line('"""A docstring\n' + "(" * 120 + '\n"""\nz = 1\n') is None
    assert overlong_line("# " + "(" * 120 + "\n") is None
    assert overlong_line("    " + "name_" * 30 + "\n") is None


#: ``$def``s and fields :func:`long_names` lengthens, and the field's class.
LONG_DEFS = ("SetSessionModeRequest", "SetSessionModeResponse", "SessionId", "ContentBlock", "StopReason",
             "PermissionOptionKind", "RequestPermissionOutcome", "ToolCallContent", "SessionConfigOption", "AuthMethod",
             "McpServer", "Annotations", "Usage")
LONG_FIELDS = {"ToolCallUpdate": "rawOutput", "CreateTerminalRequest": "outputByteLimit", "PromptResponse": "stopReason",
               "Annotations": "lastModified", "NewSessionRequest": "mcpServers", "Usage": "totalTokens"}


def long_names(length: int = 80) -> dict:
    """:func:`long_method_names`, with a handful of ``$def``s (and every ref to them) and fields
    lengthened to ``length`` characters too."""
    doc = long_method_names(length)
    for owner, prop in LONG_FIELDS.items():
        node, new = doc["$defs"][owner], (prop + "Lengthened" * 10)[:length]
        node["properties"] = {new if k == prop else k: v for k, v in node["properties"].items()}
        node["required"] = [new if k == prop else k for k in node.get("required", [])]
    text = json.dumps(doc)
    for name in LONG_DEFS:
        text = text.replace(f'"#/$defs/{name}"', f'"#/$defs/{(name + "Lengthened" * 10)[:length]}"')
    doc = json.loads(text)
    doc["$defs"] = {((k + "Lengthened" * 10)[:length] if k in LONG_DEFS else k): v for k, v in doc["$defs"].items()}
    return doc


def test_names_of_80_characters_need_no_black(write_schema):
    # $def, field and method names of 80 characters: every module is laid out without black, to the
    # bytes black leaves as they are (models.py went to black; agent.py was left unlike black's;
    # client.py needed black for a long method's result)
    schema = write_schema(long_names())
    assert differences(schema, without_black([schema])[str(schema)]) == []
    files = generate(Options(schema=schema)).files
    for path, text in files.items():
        if path.endswith(".py") and path.rsplit("/", 1)[1] not in module_names(source=Source.RUNTIME):
            assert unchanged_by_black(text, path, named=lambda chunk: "engthened" in chunk) == []
    # the lines that needed black before: a request's result decoded from a long method's reply
    assert (
        "        result: PromptResponse = _CODEC.decode(\n"
        "            PromptResponse,\n"
        "            await self._request(\n"
        '                "session/prompt_lengthened_lengthened_lengthened_lengthened_lengthened_lengthened",\n'
        "                value,\n"
        "            ),\n"
        "        )\n"
    ) in files["acp_bindings/client.py"]
    codec, agent = files["acp_bindings/_models_codec.py"], files["acp_bindings/agent.py"]
    long_type = ("Annotations" + "Lengthened" * 10)[:80]
    assert (  # an annotated parameter too long: the annotation in parentheses
        "        output_byte_limit_lengthened_lengthened_lengthened_lengthened_lengthened_lengthened_lengt: (\n"
        "            int | None\n"
        "        ) = None,\n"
    ) in agent
    assert (  # a def split at its bracket, a parameter a line
        f"def _d_{long_type}(\n    d: Any,\n) -> {long_type}:\n"
    ) in codec
    last_modified = "last_modified_lengthened_lengthened_lengthened_lengthened_lengthened_lengthened_lengthen"
    assert (  # a condition too long in parentheses; a value too long assigned to a subscript, in parentheses
        f"    if (\n        self.{last_modified}\n        is not None\n    ):\n"
        f'        out["{("lastModified" + "Lengthened" * 10)[:80]}"] = (\n'
        f"            self.{last_modified}\n        )\n"
    ) in codec


def _long(word: str, length: int) -> str:
    return (word + "AndMoreWordsToMakeItLonger" * 5)[:length]


#: The shapes of a field: each decoder and encoder the models template writes (a scalar, a
#: nullable one, a number, a list of objects, an optional object, an alias, an enum, a tagged
#: union, a map of objects, of strings, a list of strings, an untagged union, a default, a
#: nullable list of a union, any JSON).
FIELD_SHAPES = (
    {"type": "string"},
    {"type": ["string", "null"]},
    {"type": "integer", "format": "uint64", "minimum": 0},
    {"type": "number"},
    {"type": "array", "items": {"$ref": "#/$defs/ITEM"}},
    {"anyOf": [{"$ref": "#/$defs/ITEM"}, {"type": "null"}]},
    {"$ref": "#/$defs/SessionId"},
    {"$ref": "#/$defs/KIND"},
    {"$ref": "#/$defs/UNION"},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/ITEM"}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "array", "items": {"type": "string"}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "boolean", "default": False},
    {"type": ["array", "null"], "items": {"$ref": "#/$defs/UNION"}},
    {},
)


def long_field_names(length: int = 100) -> dict:
    """The mini schema with a ``$def`` of ``length`` characters whose fields, of 40 to 100
    characters, required or not, have every shape of :data:`FIELD_SHAPES`; its own item, enum and
    tagged union have names of ``length`` characters too, and the ping's params and result hold it."""
    names = {key: _long(word, length) for key, word in
             (("BIG", "RemoteProjectWorkspaceConfiguration"), ("ITEM", "WorkspaceDirectoryEntry"),
              ("KIND", "WorkspaceDirectoryKind"), ("UNION", "WorkspaceDirectorySource"))}
    local, remote = _long("localPath", 70), _long("remoteUrl", 90)
    defs = {
        "ITEM": {"type": "object", "properties": {_long("path", 60): {"type": "string"}}, "required": [_long("path", 60)]},
        "KIND": {"type": "string", "enum": ["local_directory_of_the_project", "remote"]},
        "UNION": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "local"}, local: {"type": "string"}}, "required": ["kind", local]},
            {"type": "object", "properties": {"kind": {"const": "remote"}, remote: {"type": "string"}}, "required": ["kind"]},
        ], "discriminator": {"propertyName": "kind"}},
        "BIG": {"type": "object", "properties": {}, "required": []},
    }
    for number, shape in enumerate(FIELD_SHAPES):
        for size in (40, 65, 82, 100):
            field = _long(f"remoteProjectWorkspace{number}", size)
            defs["BIG"]["properties"][field] = shape
            if size in (65, 100):
                defs["BIG"]["required"].append(field)
    text = json.dumps(defs)
    for key, name in names.items():
        text = text.replace(f'"#/$defs/{key}"', f'"#/$defs/{name}"')
    doc = mini_schema()
    doc["$defs"].update({names[key]: value for key, value in json.loads(text).items()})
    doc["$defs"]["PingRequest"]["properties"][_long("workspaceConfiguration", 100)] = {"$ref": f"#/$defs/{names['BIG']}"}
    doc["$defs"]["PingResponse"]["properties"][_long("workspaceConfiguration", 90)] = {
        "anyOf": [{"$ref": f"#/$defs/{names['BIG']}"}, {"type": "null"}]}
    return doc


@pytest.mark.parametrize("length", [100, 79, 57])
def test_names_up_to_100_characters_need_no_black(write_schema, monkeypatch, length):
    # a def of up to 100 characters with fields of 40 to 100 of every shape: the encoders'
    # string-building lines (`out += ',"key":' + ...`), their dict entries and the decoders were
    # left to black, which a plain install does not have
    schema = write_schema(long_field_names(length))
    files = generate(Options(schema=schema)).files
    with monkeypatch.context() as blocked:
        blocked.setattr(formatting, "_black", _no_black)
        assert generate(Options(schema=schema)).files == files
    for path, text in files.items():
        if path.endswith(".py") and path.rsplit("/", 1)[1] not in module_names(source=Source.RUNTIME):
            assert format_python(text, path) == text, path


def _no_black() -> None:
    raise ImportError("black is blocked")
