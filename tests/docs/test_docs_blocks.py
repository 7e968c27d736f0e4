"""Every code block of the README and the documentation site is run by some test (the guard), and
the blocks of the pages no other test reads are run here: each as written, in a folder of its own.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from support import BUNDLED, ROOT, TESTS, docs
from support.interpreters import interpreters
from support.runtime import child_env

from acpgen.cli import checking, diffing, generating, main, validating  # noqa: F401  (each registers its commands)

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

BIN = Path(sys.executable).parent
(SYNOPSIS,) = docs.blocks("reference/cli.md", "", "The command line")
(INSPECT_USAGE, INSPECT_OUTPUT) = docs.blocks("guides/debugging.md", "", "Debugging a connection")
(VENDORING,) = docs.blocks("guides/generating.md", "sh", "Generating and vendoring")
RECIPE = "Vendor into your project: a recipe"
(RECIPE_INSTALL, RECIPE_RUN) = docs.blocks("guides/generating.md", "sh", RECIPE)
(RECIPE_CONFIG,) = docs.blocks("guides/generating.md", "toml", RECIPE)
(TWO_VERSIONS,) = docs.blocks("guides/protocol-versions.md", "sh")
(OVER_TCP,) = docs.blocks("guides/remote-transports.md", "python", "Remote transports")
(CONFIGURATION,) = docs.blocks("reference/configuration.md", "toml")


def run_shell(block: docs.Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A shell block as written, with this environment's ``python`` and ``acpgen`` on the PATH."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", "-e", "-c", block.text], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


# -- the guard --------------------------------------------------------------------------------


def _test_modules_reading_docs() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if re.search(r"\bsupport import [^\n]*\bdocs\b", p.read_text()))


def test_every_block_of_the_docs_is_run_by_a_test(monkeypatch):
    for path in _test_modules_reading_docs():  # each claims its blocks when imported
        monkeypatch.syspath_prepend(str(path.parent))  # as pytest imports it: beside its siblings
        spec = importlib.util.spec_from_file_location(f"_docs_claims_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    unclaimed = [
        f"{'' if b.page == 'README.md' else 'docs/'}{b.page}:{b.line} ({b.language or 'no language'}, under {b.section!r})"
        for page in docs.pages() for b in docs.all_blocks(page) if (b.page, b.line) not in docs.CLAIMED
    ]
    assert unclaimed == []


def test_the_guard_sees_a_block_no_test_runs(tmp_path, monkeypatch):
    """The guard can fail: a page with one more block than its tests claim has one unclaimed."""
    page = tmp_path / "docs" / "extra.md"
    page.parent.mkdir()
    page.write_text("# Extra\n\n```sh\necho claimed\n```\n\n```python\nprint('nobody runs me')\n```\n")
    monkeypatch.setattr(docs, "DOCS", tmp_path / "docs")
    monkeypatch.setattr(docs, "CLAIMED", set())
    docs.blocks("extra.md", "sh")
    assert [(b.line, b.language) for b in docs.all_blocks("extra.md") if ("extra.md", b.line) not in docs.CLAIMED] == [
        (7, "python")
    ]


# -- the pages' blocks ------------------------------------------------------------------------


def _flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)) - {"--help"}


def _options(command: str) -> set[str]:
    params = main.commands[command].params
    return {o for p in params for o in [*p.opts, *p.secondary_opts] if o.startswith("--")} - {"--help"}


def test_the_synopsis_names_every_option_of_every_command():
    lines = SYNOPSIS.text.splitlines()
    by_command: dict[str, str] = {}
    current = ""
    for line in lines:
        words = line.split()
        if line.startswith("acpgen "):
            current = words[1]
            by_command[current] = line
        else:
            by_command[current] += line
    assert by_command.pop("--version") == "acpgen --version"
    assert sorted(by_command) == sorted(main.commands)
    for name, text in by_command.items():
        options = _options(name)
        if name == "check":  # "the same options as generate, without --force and --renew-names"
            assert options == (_options("generate") - {"--force", "--renew-names"}) | (_flags(text) - {"--force", "--renew-names"})
        else:
            assert _flags(text) == options, name


def test_the_inspector_usage_and_output_are_what_it_takes_and_prints():
    done = subprocess.run([sys.executable, "-m", "acp_bindings.inspect", "--help"], env=child_env(),
                          capture_output=True, text=True, check=True)
    assert _flags(INSPECT_USAGE.text) == _flags(done.stdout)
    from acp_bindings import inspect

    checker = inspect.make_checker()
    C, A = "client-to-agent", "agent-to-client"
    messages = [
        (C, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        (A, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        (C, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}),
        (A, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"content": {"type": "text", "text": "hi"}}}}),
        (A, {"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/w/a"}}),
    ]
    printed = [f"inspect: {p.format()}" for d, m in messages for p in checker.check(d, m).problems]
    shown = INSPECT_OUTPUT.text.splitlines()
    assert len(printed) == len(shown) == 2
    assert printed[0].startswith(shown[0].removesuffix(" ...)")) and printed[1] == shown[1]


def test_the_vendoring_commands_generate_import_and_check(tmp_path):
    done = run_shell(VENDORING, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Agent\n"
    assert (tmp_path / "src" / "myproject" / "_vendor" / "acp" / "acpgen-manifest.json").is_file()


def test_the_vendoring_recipe_installs_from_a_url_and_generates_checks_and_imports_a_pydantic_agent(tmp_path):
    """The recipe from a project of its own: its install lines name acpgen with the ``pydantic``
    extra at a URL (this clone's, as ``file://``; not installed: no index here), and its
    commands, with this environment as the project's ``.venv``, generate the configured package
    into ``src``, import it and check it."""
    python, first, second = RECIPE_INSTALL.text.splitlines()
    assert python == "python -m venv .venv" and first.startswith(".venv/bin/python -m pip install ")
    wanted = Requirement(shlex.split(first.replace("$ACPGEN", ROOT.as_uri()))[-1])
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert (wanted.name, wanted.url, wanted.extras) == ("acpgen", ROOT.as_uri(), {"pydantic"}) and "pydantic" in extras
    assert Requirement(shlex.split(second)[-1]).name == "pydantic"
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "myproject"\nversion = "0.1"\n\n{RECIPE_CONFIG.text}')
    (tmp_path / "src" / "myproject").mkdir(parents=True)
    (tmp_path / "src" / "myproject" / "__init__.py").write_text("")
    (tmp_path / ".venv").symlink_to(BIN.parent)
    done = run_shell(RECIPE_RUN, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n" and "acpgen check: src/myproject/_acp is up to date" in done.stderr
    manifest = json.loads((tmp_path / "src" / "myproject" / "_acp" / "acpgen-manifest.json").read_text())
    assert (manifest["options"]["models"], manifest["options"]["side"]) == ("pydantic", "agent"), manifest["options"]


def test_one_package_of_two_versions_serves_a_client_of_each(tmp_path):
    (tmp_path / "tests").symlink_to(TESTS)  # the commands name the repository's test data
    done = run_shell(TWO_VERSIONS, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "(1, 2)"
    assert lines.count('{"stopReason":"end_turn"}') == 2 and lines[-1] == '{"stopReason":"end_turn"}'
    updates = [json.loads(line)["update"] for line in lines[1:-1] if line.startswith('{"sessionId"')]
    assert {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"} in updates  # the v2 turn
    versions = sorted(p.name for p in (tmp_path / "versions" / "acp").glob("v[0-9]*") if p.is_dir())
    assert versions == ["v1", "v2"]  # beside the private runtime they share


def test_the_tcp_example_serves_an_agent_over_a_socket_and_ends_quietly(tmp_path):
    """Under this Python, 3.12 (whose ``Server.wait_closed`` waits for the connections; before
    3.13, a handler task cancelled when the loop ends was logged with a traceback) and the newest:
    nothing on stderr."""
    (tmp_path / "over_tcp.py").write_text(OVER_TCP.text)
    found = interpreters()
    assert (3, 12) in found, f"no Python 3.12 found: {sorted(found)}"
    for python in dict.fromkeys([sys.executable, found[(3, 12)], found[max(found)]]):
        done = subprocess.run([python, "over_tcp.py"], cwd=tmp_path, env=child_env(), capture_output=True,
                              text=True, timeout=60, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), python


def test_the_configuration_example_needs_no_flags(tmp_path):
    (tmp_path / "schema").mkdir()
    shutil.copy(BUNDLED, tmp_path / "schema" / "acp.json")
    (tmp_path / "pyproject.toml").write_text(CONFIGURATION.text)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for command in ("generate", "check"):
        done = subprocess.run([str(BIN / "acpgen"), command], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    package = tmp_path / "src" / "myproject" / "_vendor" / "acp"
    manifest = json.loads((package / "acpgen-manifest.json").read_text())
    assert "myproject/_vendor/acp/agent.py" in manifest["files"]
    methods = (package / "methods.py").read_text()
    assert "unstable=True" not in methods and "unstable=False" in methods  # stable-only = true
