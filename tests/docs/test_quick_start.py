"""The README's set-up, quick start and install commands, run as a newcomer runs them: in a fresh
checkout (the repository's files as git has them, uncommitted work included, and nothing else: no
.venv, no caches), ``make generate``, then the quick start's block verbatim, then the install
block with the checkout's own environment first on the PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import ROOT, docs

(SET_UP,) = docs.blocks("README.md", "sh", "Set-up: two commands")
(QUICK_START,) = docs.blocks("README.md", "sh", "Quick start")
(INSTALL,) = docs.blocks("README.md", "sh", "Install from source")


def fresh_checkout(target: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a file git knows of that was deleted in the work tree is not there
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without this test run's virtual environment and import paths."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    venv = os.environ.get("VIRTUAL_ENV")
    parts = [p for p in env["PATH"].split(os.pathsep) if not venv or not p.startswith(venv)]
    return {**env, "PATH": os.pathsep.join(parts), "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A fresh checkout after the set-up's first command, ``make generate``."""
    root = fresh_checkout(tmp_path_factory.mktemp("checkout"))
    first, second = [line.split("#")[0].strip() for line in SET_UP.text.splitlines()]
    assert (first, second) == ("make generate", "make test")
    done = subprocess.run(first.split(), cwd=root, env=clean_env(), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root


def test_make_generate_sets_up_acpgen_and_make_test_would_run_the_suite(checkout):
    assert (checkout / ".venv" / "bin" / "acpgen").is_file()
    assert subprocess.run([".venv/bin/acpgen", "check"], cwd=checkout, env=clean_env(), capture_output=True, check=False).returncode == 0
    planned = subprocess.run(["make", "-n", "test"], cwd=checkout, env=clean_env(), capture_output=True, text=True,
                             check=True).stdout
    assert ".venv/bin/python -m pytest -q" in planned


def test_the_quick_start_runs_verbatim(checkout):
    assert len(QUICK_START.text.splitlines()) <= 15
    agent = re.search(r"<<'EOF'\n(.*?)^EOF$", QUICK_START.text, re.DOTALL | re.MULTILINE)
    assert agent, "the quick start writes no agent"
    lines = agent.group(1).splitlines()  # an agent the spec's rules pass (tests/conformance)
    assert len(lines) <= 12 and max(map(len, lines)) <= 100, lines
    before = set(checkout.rglob("*"))
    done = subprocess.run(["bash", "-e", "-c", QUICK_START.text], cwd=checkout, env=clean_env(), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    ends = [i for i, line in enumerate(lines) if "stopReason" in line]
    assert [lines[i] for i in ends] == [{"stopReason": "end_turn"}] * 2  # the echo agent, then yours
    echoed = "".join(u["update"]["content"]["text"] for u in lines[: ends[0]]
                     if u["update"]["sessionUpdate"] == "agent_message_chunk")
    assert echoed.split() == ["Hello", "from", "the", "stub", "client."]
    (hi,) = lines[ends[0] + 1 : ends[1]]
    assert hi["sessionId"] and hi["update"] == {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi!"}}
    assert (checkout / "mine" / "acp_bindings" / "acpgen-manifest.json").is_file()
    written = sorted(str(p.relative_to(checkout)) for p in set(checkout.rglob("*")) - before if p.is_file())
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(written),
                             capture_output=True, text=True, check=False).stdout.split()
    assert written and set(written) == set(ignored), f"the quick start leaves untracked: {set(written) - set(ignored)}"


def test_the_install_command_installs_acpgen_from_the_checkout(checkout, tmp_path):
    """``python -m pip install .``, with the checkout's environment's python first on the PATH."""
    env = clean_env(PATH=f"{checkout / '.venv' / 'bin'}{os.pathsep}{clean_env()['PATH']}")
    done = subprocess.run(["bash", "-e", "-c", INSTALL.text], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    probe = subprocess.run([str(checkout / ".venv" / "bin" / "acpgen"), "generate", "--out", "out"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=False)
    assert probe.returncode == 0, probe.stderr
    where = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-c", "import acpgen; print(acpgen.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert "site-packages" in where  # installed, no longer the editable checkout
