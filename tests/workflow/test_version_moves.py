"""The moves between protocol versions, played in a project of one's own: nothing renamed, no import
broken until its version goes, ``check`` failing before each regeneration and passing after.

A project configures ``[tool.acpgen]`` (``out = "src"``, ``package = "myagent.acp"``, maybe a side
and a flavour) and moves its ``schema`` along :data:`PATH`: the bundled schema, a v1 file, a v1 + v2
pair, the pair's unstable schemas (stable -> unstable), the v2 one alone. At the first step a user
module is written against the package (``from myagent.acp import Agent, builders, models,
run_agent``: an agent that completes a prompt turn with the package's stub client over stdio). At
every step, :func:`move` reconfigures, checks (it must fail), generates, checks (it must pass) and
returns what it ran and found (a :class:`Moved`): the names the step renamed of entities both
packages have (each version's part of the names lock against the same version's), and whether the
user module still ran. Its version (1) stays at the root until the step that removes it.

The default suite plays a combination-covering part (:data:`DEFAULT`: each pair once, each flavour,
each side) over a short path each, with acpgen in process; ``make transitions``
(``ACPGEN_TRANSITIONS=1``) plays every pair under both flavours and both sides over the whole path,
running acpgen as a separate process as a plain install runs it (where black cannot be imported;
the pydantic flavour's extra has black), and prints the table of moves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import CORPUS, DATA
from support.versions import env_for

from acpgen.cli import main
from acpgen.schema.protocol import meta_path

SDK = DATA / "sdk-schemas"
#: Each pair: its v1 and v2 schemas, stable then unstable. The TypeScript SDK's have no meta file:
#: the project puts one beside its v2 schemas.
PAIRS = {
    "sdk": (SDK / "v1-schema.json", SDK / "v2-schema.json", SDK / "v1-schema.unstable.json",
            SDK / "v2-schema.unstable.json"),
    "spec v1.7.0": (CORPUS / "v1.7.0--v1-schema.json", CORPUS / "v1.7.0--v2-schema.json",
                    CORPUS / "v1.7.0--v1-schema.unstable.json", CORPUS / "v1.7.0--v2-schema.unstable.json"),
}
#: The path: each step's name and its ``schema`` (None: the bundled one; a list: one per version), by
#: the index of the pair's file (0, 1: v1, v2 stable; 2, 3: unstable).
PATH: tuple[tuple[str, int | tuple[int, ...] | None], ...] = (
    ("bundled", None),
    ("v1 file", 0),
    ("v1 + v2", (0, 1)),
    ("stable -> unstable", (2, 3)),
    ("v2 alone", 3),
)
EXHAUSTIVE = bool(os.environ.get("ACPGEN_TRANSITIONS"))
#: What the default suite plays (about 10 CPU-seconds): (pair, flavour, side, the steps of
#: :data:`PATH` by name), each pair and each flavour once, the user module completing a turn at the
#: last step that has its version (not before). The TypeScript SDK's pair, for an agent: from the
#: bundled schema to its v1 file, to its two versions' unstable schemas (one version to two, stable
#: to unstable at once), to v2 alone (two to one); the spec's v1.7.0 pair, in the pydantic flavour:
#: its two versions.
DEFAULT = (
    ("sdk", "dataclasses", "agent", ("bundled", "v1 file", "stable -> unstable", "v2 alone")),
    ("spec v1.7.0", "pydantic", None, ("v1 + v2",)),
)
USER_MODULE = '''\
import asyncio
import uuid

from myagent.acp import PROTOCOL_VERSION, Agent, RequestError, builders, models, run_agent


class MyAgent(Agent):
    def __init__(self) -> None:
        self.sessions: set[str] = set()

    async def initialize(self, params):
        return models.InitializeResponse(
            protocol_version=PROTOCOL_VERSION, agent_info=models.Implementation(name="my-agent", version="0.1"))

    async def session_new(self, params):
        self.sessions.add(session_id := str(uuid.uuid4()))
        return models.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params):
        if params.session_id not in self.sessions:
            raise RequestError.invalid_params({"sessionId": params.session_id})
        chunk = builders.session_update.agent_message_chunk(builders.content_block.text("Hi!"))
        await self.client.session_update(session_id=params.session_id, update=chunk)
        return models.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(MyAgent()))
'''
#: acpgen as a plain install runs it: a separate process in which black cannot be imported. (The
#: pydantic flavour's install, ``acpgen[pydantic]``, has black: datamodel-code-generator needs it.)
PLAIN = "import sys; sys.modules['black'] = None; from acpgen.cli import main; main()"
WITH_PYDANTIC = "from acpgen.cli import main; main()"


@dataclass
class Ran:
    """One acpgen command of a step: its arguments, exit status and output."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Moved:
    """What one step ran and found."""

    step: str
    schema: object  # the [tool.acpgen] schema it configured
    ran: list[Ran] = field(default_factory=list)  # check, generate, check (and what a test adds)
    versions: tuple[int, ...] = ()
    root: int | None = None
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)  # "v<N>/<key>" -> (before, after)
    user_module: str = ""  # "ran", or the last line of what stopped it

    def command(self, name: str) -> list[Ran]:
        return [r for r in self.ran if r.args[0] == name]


class Project:
    """A project of one's own: its schemas, its ``[tool.acpgen]``, its package and user module."""

    def __init__(self, root: Path, pair: str, models: str, side: str | None, in_process: bool) -> None:
        self.root, self.models, self.side, self.in_process = root, models, side, in_process
        (root / "schema").mkdir(parents=True)
        self.schemas = []
        for path in PAIRS[pair.removesuffix(" unstable")]:
            copy = root / "schema" / path.name
            shutil.copy(path, copy)
            if meta_path(path).is_file():
                shutil.copy(meta_path(path), meta_path(copy))
            elif "v2-" in path.name:
                meta_path(copy).write_text('{"version": 2}\n')
            self.schemas.append(f"schema/{path.name}")
        self.unstable = pair.endswith(" unstable")  # the pair's files are its unstable ones throughout
        self.manifest: dict[str, object] | None = None

    def schema_of(self, spec: int | tuple[int, ...] | None) -> str | list[str] | None:
        def file(index: int) -> str:
            return self.schemas[index + 2 if self.unstable and index < 2 else index]

        if spec is None:
            return None
        return [file(i) for i in spec] if isinstance(spec, tuple) else file(spec)

    def configure(self, schema: str | list[str] | None) -> None:
        lines = ["[tool.acpgen]", 'out = "src"', 'package = "myagent.acp"']
        if self.side:
            lines.append(f'side = "{self.side}"')
        # written even as the default: check fills a key [tool.acpgen] leaves out from the manifest
        lines.append(f'models = "{self.models}"')
        if schema is not None:
            lines.append(f"schema = {json.dumps(schema)}")
        (self.root / "pyproject.toml").write_text("\n".join(lines) + "\n")

    def acpgen(self, *args: str) -> Ran:
        if self.in_process:
            here = os.getcwd()
            os.chdir(self.root)
            try:
                result = CliRunner().invoke(main, list(args), catch_exceptions=False)
            finally:
                os.chdir(here)
            return Ran(args, result.exit_code, result.stdout, result.stderr)
        plain = WITH_PYDANTIC if self.models == "pydantic" else PLAIN
        done = subprocess.run([sys.executable, "-c", plain, *args], cwd=self.root, capture_output=True, text=True,
                              timeout=600, check=False)
        return Ran(args, done.returncode, done.stdout, done.stderr)

    def read_manifest(self) -> dict[str, object]:
        manifest: dict[str, object] = json.loads((self.root / "src/myagent/acp/acpgen-manifest.json").read_text())
        return manifest

    def run_user_module(self, root_version: int, several: bool, turn: bool = True) -> str:
        """``ran`` when the user module completes a prompt turn with the stub client of the root's
        version (not ``turn``: ``imported`` when it imports), else the last line of what stopped it."""
        client = "myagent.acp.stub_client"  # the root's: it runs the turn in the version the agent answers
        command = [sys.executable, "-m", client, "--", sys.executable, "my_agent.py"] if turn else [
            sys.executable, "-c", "import my_agent; print(my_agent.MyAgent().sessions)"]
        done = subprocess.run(command, cwd=self.root, env=env_for(self.root / "src"), capture_output=True, text=True,
                              timeout=60, check=False)
        last = (done.stdout.strip().splitlines() or [""])[-1]
        if done.returncode == 0 and not turn and last == "set()":
            return "imported"
        if done.returncode == 0 and last.startswith("{") and json.loads(last) == {"stopReason": "end_turn"}:
            return "ran"
        return ((done.stderr.strip().splitlines() or [""])[-1] or last)[:160]


def by_version(manifest: dict[str, object]) -> dict[str, str]:
    """The manifest's names lock, each key under its version (``v1/defs/Foo``): a single-version
    package's are its version's."""
    names = manifest["names"]
    versions = manifest["versions"]
    assert isinstance(names, dict) and isinstance(versions, list)
    return {key if re.match(r"v[0-9]+/", key) else f"v{versions[0]}/{key}": name for key, name in names.items()}


def move(project: Project, step: str, spec: int | tuple[int, ...] | None, user: Callable[[], None],
         turn: bool | None = True, before: Sequence[Sequence[str]] = ()) -> Moved:
    """Configure ``spec``'s schema, check (it must fail, the package being another's), run the
    commands ``before`` (``[("diff",)]``), generate, check (it must pass); what the step renamed,
    and whether the user module still runs with the root version's stub client (``turn``: a prompt
    turn; False: it imports; None: not tried)."""
    schema = project.schema_of(spec)
    moved = Moved(step, schema)
    project.configure(schema)
    first = project.manifest is None
    if not first:
        moved.ran.append(project.acpgen("check", "--summary"))
    moved.ran.extend(project.acpgen(*args) for args in before)
    moved.ran.append(project.acpgen("generate"))
    assert moved.ran[-1].exit_code == 0, moved.ran[-1].stderr
    moved.ran.append(project.acpgen("check", "--summary"))
    manifest = project.read_manifest()
    versions = manifest["versions"]
    root = manifest["root_version"]
    assert isinstance(versions, list) and isinstance(root, int)
    moved.versions, moved.root = tuple(versions), root
    if project.manifest is not None:
        before, after = by_version(project.manifest), by_version(manifest)
        moved.renamed = {k: (before[k], after[k]) for k in sorted(before.keys() & after.keys()) if before[k] != after[k]}
    project.manifest = manifest
    if first:
        user()
    if turn is not None:
        moved.user_module = project.run_user_module(root, len(versions) > 1 or any(
            re.match(r"v[0-9]+/", key) for key in manifest["names"]), turn=turn)  # type: ignore[union-attr]
    return moved


def play(tmp: Path, pair: str, models: str, side: str | None, steps: Sequence[str], in_process: bool,
         turns: str = "every") -> list[Moved]:
    """Play ``steps`` of :data:`PATH` in a new project; asserts what every step must hold. The user
    module completes a turn at every step that has its version (``turns="last"``: only at the last
    such step)."""
    project = Project(tmp, pair, models, side, in_process)
    played = [(step, spec) for step, spec in PATH if step in steps
              and not (step == "stable -> unstable" and project.unstable)]  # an unstable pair has no such move
    last = max(i for i, (_, spec) in enumerate(played) if spec is None or 0 in (spec if isinstance(spec, tuple) else (spec,))
               or 2 in (spec if isinstance(spec, tuple) else (spec,)))
    moves: list[Moved] = []
    for i, (step, spec) in enumerate(played):
        turn = turns == "every" or i == last
        moved = move(project, step, spec, lambda: (project.root / "my_agent.py").write_text(USER_MODULE),
                     turn=True if turn else None, before=[("diff",)] if i else ())
        moves.append(moved)
        held(moved)
        if i:
            told(moved, moves[-2])
        if 1 in moved.versions:  # the user module's version is there: it stays at the root, and runs
            assert moved.root == 1, step
            assert moved.user_module == ("ran" if turn else ""), f"{step}: {moved.user_module}"
    return moves


def held(moved: Moved) -> None:
    """What every step must hold: check failed before it regenerated (when there was a package)
    and passes after, and it renamed nothing."""
    checks = moved.command("check")
    if len(checks) == 2:
        assert checks[0].exit_code == 1, f"{moved.step}: check passed before regenerating\n{checks[0].stderr}"
    assert checks[-1].exit_code == 0, f"{moved.step}: check failed after regenerating\n{checks[-1].stderr}"
    assert moved.renamed == {}, f"{moved.step}: renamed {moved.renamed}"


def told(moved: Moved, previous: Moved) -> None:
    """What ``check`` and ``diff`` said before the step regenerated: check's hints end with the
    commands the step runs (``acpgen diff``, ``acpgen generate``, as printed), and diff names each configured
    file as the project wrote it, and the versions added or removed."""
    hints = re.findall(r"`(acpgen [^`]*)`", moved.command("check")[0].stderr)
    # the command that made the package on disk, then what to run: what this step runs next
    assert hints[-2:] == ["acpgen diff", "acpgen generate"], f"{moved.step}: check's hints {hints}"
    (diff,) = moved.command("diff")
    assert diff.exit_code in (0, 1), f"{moved.step}: diff failed\n{diff.stderr}"
    said = diff.stdout + diff.stderr
    configured = moved.schema if isinstance(moved.schema, list) else [moved.schema] if moved.schema else []
    for path in configured:
        assert path in said, f"{moved.step}: diff does not name {path}\n{said}"
    for number in sorted(set(moved.versions) - set(previous.versions)):
        assert re.search(rf"version-added .*\bv{number}\b", said), f"{moved.step}: v{number} added, unsaid\n{said}"
    for number in sorted(set(previous.versions) - set(moved.versions)):
        assert re.search(rf"version-removed .*\bv{number}\b", said), f"{moved.step}: v{number} removed, unsaid\n{said}"


def table(label: str, moves: Sequence[Moved]) -> str:
    """The moves as rows of a Markdown table."""
    rows = []
    for m in moves:
        checks = m.command("check")
        before = "-" if len(checks) < 2 else ("fails" if checks[0].exit_code == 1 else f"exit {checks[0].exit_code}")
        after = "passes" if checks[-1].exit_code == 0 else f"exit {checks[-1].exit_code}"
        rows.append(f"| {label} | {m.step} | {','.join(map(str, m.versions))} (root {m.root}) | {len(m.renamed)} |"
                    f" {m.user_module} | {before} | {after} |")
    return "\n".join(rows)


@pytest.mark.parametrize(("pair", "models", "side", "steps"), DEFAULT, ids=[f"{p}-{m}-{s or 'both'}" for p, m, s, _ in DEFAULT])
def test_a_move_renames_nothing_and_breaks_no_import(tmp_path, pair, models, side, steps):
    moves = play(tmp_path, pair, models, side, steps, in_process=True, turns="last")
    assert "ran" in [m.user_module for m in moves]


MATRIX = [(pair, models, side) for pair in ("sdk", "sdk unstable", "spec v1.7.0", "spec v1.7.0 unstable")
          for models in ("dataclasses", "pydantic") for side in (None, "agent")]


# The whole matrix, under ``make transitions`` (ACPGEN_TRANSITIONS=1) alone: defined only there, so the
# default run neither runs nor skips it.
if EXHAUSTIVE:

    @pytest.mark.parametrize(("pair", "models", "side"), MATRIX, ids=[f"{p}-{m}-{s or 'both'}" for p, m, s in MATRIX])
    def test_every_move_of_every_pair(tmp_path, pair, models, side):
        moves = play(tmp_path, pair, models, side, [step for step, _ in PATH], in_process=False)
        label = f"{pair}, {models}, side {side or 'both'}"
        print(f"\n{table(label, moves)}")


@pytest.mark.parametrize("flavours", [("dataclasses",)] + [("dataclasses", "pydantic")] * EXHAUSTIVE)
def test_a_change_of_side_or_flavour_renames_nothing(tmp_path, flavours):
    """The SDK's v1 for both sides, then the client's (``make transitions``: its v1 + v2 pair for
    both sides, the agent's, the client's, then in the pydantic flavour too)."""
    project = Project(tmp_path, "sdk", "dataclasses", None, in_process=not EXHAUSTIVE)
    moves = []
    sides = ("both", "agent", "client") if EXHAUSTIVE else ("both", "client")
    for side, models in [*((side, "dataclasses") for side in sides), *(("both", flavour) for flavour in flavours[1:])]:
        project.side, project.models = side, models
        moves.append(move(project, f"side {side}, {models}", (0, 1) if EXHAUSTIVE else 0, lambda: None,
                          turn=None))
        held(moves[-1])
    assert len(moves) == len(sides) + len(flavours) - 1 and all(m.versions == ((1, 2) if EXHAUSTIVE else (1,)) for m in moves)
