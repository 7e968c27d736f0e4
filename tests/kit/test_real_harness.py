"""The harness of `make conformance-real` (tests/real/run.py), without the products: a bounded
run ends every process a product started, even one that left its process group; a client's
verdict is the worst of its connections; the table marks a hung product and keeps out of the
guide's table of requirements; `--docs` rewrites only what lies between its markers."""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import time
from pathlib import Path

from support import ROOT

REAL = ROOT / "tests" / "real"


def _harness():
    sys.path.insert(0, str(REAL))
    try:
        spec = importlib.util.spec_from_file_location("real_run", REAL / "run.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REAL))


run = _harness()
ARGS = argparse.Namespace(product_timeout=240.0, kit_timeout=20.0, turn_timeout=60.0)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_bounded_run_kills_what_the_product_left_behind_even_outside_its_group(tmp_path):
    """A product that starts a child in a session of its own, then hangs: reported hung at the
    bound, and both are gone after, the child found by the mark in its environment."""
    pid_file = tmp_path / "child.pid"
    script = (f"import subprocess, time; p = subprocess.Popen(['sleep', '300'], start_new_session=True); "
              f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(300)")
    env = dict(os.environ, **{run.MARK: f"test-{os.getpid()}"})
    began = time.monotonic()
    status, hung, seconds = run.run_bounded([sys.executable, "-c", script], cwd=tmp_path, env=env,
                                            stdout=tmp_path / "out", stderr=tmp_path / "err", timeout=1.5)
    assert hung and status is None
    assert 1.5 <= seconds < 10 and time.monotonic() - began < 10
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _alive(child)
    if survived:
        os.kill(child, signal.SIGKILL)
    assert not survived


def test_a_bounded_run_that_ends_reports_its_status(tmp_path):
    env = dict(os.environ, **{run.MARK: f"test-{os.getpid()}-ends"})
    status, hung, _ = run.run_bounded([sys.executable, "-c", "print('hi'); raise SystemExit(3)"], cwd=tmp_path,
                                      env=env, stdout=tmp_path / "out", stderr=tmp_path / "err", timeout=30)
    assert (status, hung) == (3, False)
    assert (tmp_path / "out").read_text() == "hi\n"


def _req(req_id: str, outcome: str, level: str = "MUST", detail: str = "") -> dict[str, str]:
    return {"id": req_id, "level": level, "outcome": outcome, "detail": detail}


def _client(name: str, *reports: list[dict[str, str]]) -> object:
    product = next(p for p in run.PRODUCTS if p.name == name)
    return run.Outcome(product, "1.0", seconds=2.0, exit_status=0,
                       reports=[{"requirements": list(r)} for r in reports])


def test_a_clients_verdict_is_the_worst_of_its_connections():
    outcome = _client("acplint",
                      [_req("a", "passed"), _req("b", "not applicable"), _req("c", "passed"), _req("d", "advised")],
                      [_req("a", "failed", detail="broke it"), _req("b", "passed"), _req("c", "not applicable"),
                       _req("d", "passed")])
    assert {k: v["outcome"] for k, v in run.merged(outcome).items()} == {
        "a": "failed", "b": "passed", "c": "passed", "d": "advised"}


def test_the_table_marks_a_hung_agent_and_quotes_each_failure_on_one_line():
    agents = {p.name: p for p in run.PRODUCTS if p.kind == "agent"}
    done = run.Outcome(agents["qwen-code"], "0.1", seconds=30.0, exit_status=1, scratch="/tmp/x1",
                       reports=[{"requirements": [_req("jsonrpc.ids-echoed", "passed"),
                                                  _req("jsonrpc.parse-error", "failed",
                                                       detail="in /tmp/x1/cwd | \x1b[2Jgarbage\nline two"),
                                                  _req("jsonrpc.invalid-request", "advised", "ADVICE", "-32601")]}])
    hung = run.Outcome(agents["codex-acp"], "0.2", seconds=240.0, hung=True, problem="the kit wrote no report")
    text = run.render([done, hung, _client("acpx", [_req("jsonrpc.ids", "passed")])], ARGS, "offline", 271.0)
    lines = text.splitlines()
    assert "| jsonrpc.parse-error | MUST | FAIL | hung |" in lines
    assert "| jsonrpc.ids | MUST | PASS |" in lines
    assert "- FAIL `jsonrpc.parse-error` (MUST): in TMP/cwd \\| \\x1b[2Jgarbage line two" in lines
    assert "- NOTE `jsonrpc.invalid-request` (ADVICE): -32601" in lines
    assert "| jsonrpc.invalid-request | ADVICE | NOTE | hung |" in lines
    assert any(line.startswith("| qwen-code | 0.1 |") and line.endswith("| 1 (1), 1 |") for line in lines)
    assert any(line.startswith("| codex-acp | 0.2 |") and "hung: stopped after 240 s" in line for line in lines)
    assert "Wall time of the run: 271 s." in text
    assert not [line for line in lines if line.startswith("| `")]  # the guide's requirements table's rows


def test_docs_rewrites_only_between_its_markers(tmp_path, monkeypatch):
    page = tmp_path / "conformance.md"
    page.write_text(f"# Title\n\nbefore\n\n{run.START}\nold table\n{run.END}\n\nafter\n")
    monkeypatch.setattr(run, "DOCS", page)
    run.into_docs("| new | table |\n")
    run.into_docs("| new | table |\n")
    assert page.read_text() == f"# Title\n\nbefore\n\n{run.START}\n| new | table |\n{run.END}\n\nafter\n"


def test_rerender_makes_the_same_table_from_what_a_run_saved(tmp_path):
    agents = {p.name: p for p in run.PRODUCTS if p.kind == "agent"}
    outcomes = [run.Outcome(agents["opencode"], "1.2", seconds=31.4, exit_status=1, turn="end_turn; exit 0, 9 s",
                            apis=["openai-chat ×9"],
                            reports=[{"requirements": [_req("capabilities.prompt-content", "failed", detail="no")]}]),
                _client("acpc", [_req("jsonrpc.ids", "passed")])]
    args = argparse.Namespace(product_timeout=100.0, kit_timeout=7.0, turn_timeout=60.0, out=tmp_path, docs=False)
    run.save(tmp_path / "outcomes.json", outcomes, args, "offline", 42.0)
    first = run.render(outcomes, args, "offline", 42.0)
    later = argparse.Namespace(product_timeout=240.0, kit_timeout=20.0, turn_timeout=60.0, out=tmp_path, docs=False)
    assert run.rerender(later) == 0
    assert (tmp_path / "verdicts.md").read_text() == first
    assert "answer timeout 7 s, each product bounded to 100 s" in first
