"""The page of a session (``inspect --html``, ``acpgen validate --html``), read in headless Chromium.

A real session is recorded by the inspector between the official TypeScript SDK client and the
stub agent; the page of it, and of copies with faults and hostile text planted, is opened in
Chromium over the DevTools protocol (``support.browser``). The page must load with nothing on the
console, hold every message and every finding (with its pointer), run no script a peer sent, and
filter. Screenshots are kept in ``tests/artifacts/`` (and the test's tmp folder).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from acp_bindings._runtime.inspector import _session_page
from support.browser import ARTIFACTS, Browser
from support.runtime import INTEROP, STUB_AGENT, child_env, make_workspace

INSPECT = (sys.executable, "-m", "acp_bindings.inspect")
TS_CLIENT = ("node", str(INTEROP / "ts_client.mjs"))
C, A = "client-to-agent", "agent-to-client"
HOSTILE = [
    "<img src=x onerror=\"window.__pwned='img'\">",
    "</script><script>window.__pwned='script'</script>",
    "\u2028</SCRIPT ><!--<script>window.__pwned='comment'</script>&amp;&lt;",
]

#: Everything the page shows of each row, read from the DOM.
ROWS_JS = """[...document.querySelectorAll('#diagram .msg')].map(row => ({
  n: +row.dataset.n, line: +row.dataset.line, method: row.dataset.method, kind: row.dataset.kind,
  hidden: row.hidden || row.classList.contains('folded'),
  json: row.querySelector('pre.json').textContent,
  text: row.querySelector('.seq').textContent,
  findings: [...row.querySelectorAll('.finding')].map(f => ({
    pointer: f.querySelector('.pointer').textContent, text: f.querySelector('.text').textContent})),
}))"""


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """The inspector's transcript and page of one real session."""
    tmp_path = tmp_path_factory.mktemp("session")
    cwd = make_workspace(tmp_path)
    transcript, page = tmp_path / "transcript.ndjson", tmp_path / "session.html"
    done = subprocess.run(
        [*TS_CLIENT, str(cwd), *INSPECT, "--transcript", str(transcript), "--html", str(page), "--", *STUB_AGENT],
        cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in transcript.read_text().splitlines()], page


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


def keep(browser: Browser, tmp_path, name: str) -> None:
    """A screenshot in the test's folder and in tests/artifacts/; its path is printed."""
    shot = browser.screenshot(tmp_path / name)
    kept = ARTIFACTS / name
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(shot.read_bytes())
    print(f"screenshot: {kept}")


def write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


# -- what the page decides (no browser) ---------------------------------------------------------


def entry(number, direction, message, time=None, problems=()):
    return _session_page.Entry(number, direction, time, message, None, tuple(problems))


def test_rows_pair_requests_with_responses_and_join_streamed_text():
    chunk = lambda text: {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}}
    entries = [
        entry(1, C, {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}}, 0.5),
        entry(2, A, chunk("Hel"), 0.6),
        entry(3, A, chunk("lo"), 0.7),
        entry(4, A, {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": {
            "sessionId": "s", "toolCall": {"toolCallId": "t", "title": "Write"}, "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}}, 0.8),
        entry(5, C, {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "selected", "optionId": "y"}}}, 0.9),
        entry(6, A, {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}, 1.0),
        entry(7, C, {"jsonrpc": "2.0", "id": 2, "method": "session/cancel"}),
    ]
    rows = _session_page.rows(entries, after=[{"direction": C, "id": 2, "kind": "unanswered", "pointer": ""}])
    assert [(r["kind"], r["method"], r["pair"]) for r in rows] == [
        ("request", "session/prompt", 5), ("notification", "session/update", None), ("notification", "session/update", None),
        ("request", "session/request_permission", 4), ("response", "session/request_permission", 3),
        ("response", "session/prompt", 0), ("request", "session/cancel", None),
    ]
    assert rows[0]["latency"] == rows[5]["latency"] == 500.0
    assert (rows[1]["chunks"], rows[1]["note"]["joined"], rows[2]["stream"]) == (2, "Hello", 1)
    assert rows[3]["note"]["text"] == "Write [Yes]" and rows[4]["note"]["text"] == "selected · y"
    assert rows[5]["note"]["text"] == "end_turn"
    assert rows[6]["problems"] == [{"direction": C, "id": 2, "kind": "unanswered", "pointer": ""}]


def test_the_embedded_json_cannot_end_its_script_element():
    value = {"x": HOSTILE + ["\u2029", "é"]}
    text = _session_page._script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"} and text.isascii()
    assert json.loads(text) == value


# -- the page in Chromium -----------------------------------------------------------------------


def test_the_inspectors_page_holds_every_message(browser, session, tmp_path):
    records, page = session
    browser.open(page)
    assert browser.evaluate("document.body.dataset.ready") == "1"
    assert browser.console_errors() == []
    shown = browser.evaluate(ROWS_JS)
    assert [json.loads(r["json"]) for r in shown] == [r["message"] for r in records]
    assert [r["line"] for r in shown] == list(range(1, len(records) + 1))
    assert [f for r in shown for f in r["findings"]] == []
    methods = {r["message"].get("method") for r in records} - {None}
    assert {"initialize", "session/new", "session/prompt", "session/update", "fs/read_text_file"} <= methods
    assert {r["method"] for r in shown} == methods  # a response shows its request's method
    latencies = browser.evaluate("[...document.querySelectorAll('.pairlink')].map(a => a.textContent)")
    assert any(text.startswith("response #") and text.endswith(" ms") for text in latencies)
    keep(browser, tmp_path, "inspect-session.png")


def test_the_validate_page_shows_each_finding_on_its_message(browser, session, tmp_path, cli):
    records = copy.deepcopy(session[0])
    update = next(r for r in records if r["message"].get("method") == "session/update")
    del update["message"]["params"]["update"]["sessionUpdate"]  # found by the model
    prompt = next(r for r in records if r["message"].get("method") == "session/prompt")
    # the model stops at the first wrong value; jsonschema adds the second (a `schema` finding)
    prompt["message"]["params"]["prompt"], prompt["message"]["params"]["sessionId"] = "hello", 7
    new = next(r for r in records if r["message"].get("method") == "session/new")
    answer = next(r for r in records if r["message"].get("id") == new["message"]["id"] and "result" in r["message"])
    answer["message"]["id"] = 999  # an unknown response; session/new goes unanswered
    write(tmp_path / "faulty.ndjson", records)
    result = cli("validate", "--format", "json", "--html", tmp_path / "faulty.html", tmp_path / "faulty.ndjson")
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert {p["kind"] for p in problems} >= {"invalid-params", "schema", "unknown-response", "unanswered"}
    browser.open(tmp_path / "faulty.html")
    assert browser.console_errors() == []
    shown = {r["line"]: r for r in browser.evaluate(ROWS_JS)}
    assert len(shown) == len(records)
    for problem in problems:
        assert {"pointer": "#" + problem["pointer"], "text": problem["message"]} in shown[problem["line"]]["findings"]
    assert sum(len(r["findings"]) for r in shown.values()) == len(problems)
    assert browser.evaluate("document.getElementById('counts').textContent").startswith(f"{len(records)} messages, ")
    keep(browser, tmp_path, "validate-findings.png")


def hostile_transcript(path) -> None:
    """A session whose agent and client put markup and script everywhere a peer's text goes."""
    one, two, three = HOSTILE
    records = [
        (C, {"jsonrpc": "2.0", "id": one, "method": "initialize", "params": {"protocolVersion": 1, "clientInfo": {"name": two}}}),
        (A, {"jsonrpc": "2.0", "id": one, "result": {"protocolVersion": 1, "agentInfo": {"name": three}}}),
        (C, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": two, "prompt": [{"type": "text", "text": three}]}}),
        (A, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": two, "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": one}}}}),
        (A, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": two, "update": {
            "sessionUpdate": "tool_call", "toolCallId": two, "title": one, "status": three}}}),
        (A, {"jsonrpc": "2.0", "id": 7, "method": two, "params": {"path": one}}),
        (C, {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": one + two}}),
        (A, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": three}}),
    ]
    lines = [json.dumps({"time": i / 10, "direction": d, "message": m}) for i, (d, m) in enumerate(records)]
    lines.append(json.dumps({"direction": A, "raw": two}))  # a line that was not JSON
    lines.append(json.dumps({"direction": A, "raw": one}))
    path.write_text("\n".join(lines) + "\n")


def test_a_hostile_session_runs_no_script(browser, tmp_path, cli):
    transcript = tmp_path / "<img src=x onerror=window.__pwned=1>.ndjson"  # the title, too
    hostile_transcript(transcript)
    page = tmp_path / "hostile.html"
    result = cli("validate", "--html", page, transcript)
    assert result.exit_code == 1  # the planted junk is found, too
    browser.open(page)
    assert browser.console_errors() == []
    assert browser.evaluate("window.__pwned === undefined") is True
    assert browser.evaluate("[document.images.length, document.scripts.length]") == [0, 2]
    text = browser.evaluate("document.body.textContent")
    for hostile in HOSTILE:
        assert hostile in text  # shown, as text
    assert browser.evaluate("document.title") == f"ACP session: {transcript.name}"
    assert len(browser.evaluate(ROWS_JS)) == 10
    keep(browser, tmp_path, "hostile-session.png")


def test_the_browser_checks_catch_a_page_that_does_not_escape(browser, tmp_path, monkeypatch):
    """The same checks fail on a page that embeds its JSON unescaped: they can fail."""
    monkeypatch.setattr(_session_page, "_script_json", lambda value: json.dumps(value))
    entries = [entry(1, A, {"jsonrpc": "2.0", "method": "session/update", "params": {"text": text}}) for text in HOSTILE]
    page = tmp_path / "unescaped.html"
    page.write_text(_session_page.render(entries, title="t", source="s"))
    browser.open(page)
    assert browser.console_errors() != []  # the script element ended early, and the rest was refused
    assert browser.evaluate("document.querySelectorAll('#diagram .msg').length") != len(HOSTILE)


def test_the_filters_pick_by_method_and_kind(browser, session):
    records, page = session
    browser.open(page)

    def visible(script: str = "") -> list[dict]:
        browser.evaluate(f"(() => {{ {script}; }})()")
        return [r for r in browser.evaluate(ROWS_JS) if not r["hidden"]]

    change = "el.dispatchEvent(new Event('change'))"
    by_method = visible(f"const el = document.getElementById('method'); el.value = 'session/new'; {change}")
    assert [r["kind"] for r in by_method] == ["request", "response"]
    assert {r["method"] for r in by_method} == {"session/new"}
    no_notes = visible(
        f"const s = document.getElementById('method'); s.value = ''; s.dispatchEvent(new Event('change'));"
        f" const el = document.querySelector('input[data-kind=notification]'); el.checked = false; {change}"
    )
    assert no_notes and "notification" not in {r["kind"] for r in no_notes}
    assert len(no_notes) == sum("method" not in r["message"] or "id" in r["message"] for r in records)
    only = visible(f"const el = document.getElementById('only-problems'); el.checked = true; {change}")
    assert only == []  # the recorded session is clean


# -- where the page cannot go -------------------------------------------------------------------


def test_a_page_that_cannot_be_written_is_one_line_and_status_2(tmp_path, cli, session):
    write(tmp_path / "t.ndjson", session[0])
    nowhere = tmp_path / "no-such-folder" / "page.html"
    result = cli("validate", "--html", nowhere, tmp_path / "t.ndjson")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --html: cannot write {nowhere}: ") and result.stderr.count("\n") == 1
    done = subprocess.run(
        [*INSPECT, "--html", str(nowhere), "--", sys.executable, "-c", "print('started')"],
        env=child_env(), capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")  # the agent never started
    assert done.stderr.startswith(f"inspect: cannot write {nowhere}: ") and done.stderr.count("\n") == 1
    assert not nowhere.parent.exists()


def test_no_page_for_a_transcript_that_cannot_be_read(tmp_path, cli):
    (tmp_path / "bad.ndjson").write_text('{"direction": "sideways", "message": {}}\n')
    result = cli("validate", "--html", tmp_path / "page.html", tmp_path / "bad.ndjson")
    assert result.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ndjson"]


def test_the_inspectors_page_is_written_whole_at_the_end(tmp_path):
    """Until the connection ends the page's file is not there; then it is, complete, with the
    permissions a plain open() would give it; no temporary file is left."""
    page = tmp_path / "page.html"
    agent = "import sys, pathlib; sys.stdout.write(str(pathlib.Path(sys.argv[1]).exists()))"
    done = subprocess.run(
        [*INSPECT, "--html", str(page), "--", sys.executable, "-c", agent, str(page)],
        env=child_env(), capture_output=True, text=True, timeout=30, input="", check=False,
    )
    assert (done.returncode, done.stdout) == (0, "False")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]
    assert page.read_text().rstrip().endswith("</html>")
    assert page.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
