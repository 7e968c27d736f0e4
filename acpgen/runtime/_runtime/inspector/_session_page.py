"""One ACP session as one self-contained HTML page: what ``inspect --html`` and
``acpgen validate --html`` write.

The page is a sequence diagram: a client lane and an agent lane, one arrow per message in the
order it travelled. A request links to its response (and the response back), with the time
between them when the messages carry times. What matters in a message is shown on its arrow:
streamed text (consecutive chunks of one session are joined into one row), tool calls and their
updates, permission requests and their outcome, error responses. Each problem found in a message
is shown on it with its JSON pointer. Filters pick messages by method and by kind.

Everything on the page came from a peer, so none of it is ever HTML: the messages travel as
JSON inside ``<script type="application/json">`` (with ``<``, ``>`` and ``&`` escaped, and
everything beyond ASCII, so that no ``</script>`` or U+2028 can end or break it), and the page's
own script builds the DOM with ``textContent``. A Content-Security-Policy lets only that script
run and the page load nothing from anywhere.

:func:`rows` decides what the page shows (one dict per message, plain data); :func:`render`
prints it. Standard library only; nothing here knows the schema.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Entry", "render", "rows"]

_TO_AGENT = "client-to-agent"
_STREAMED = {
    "agent_message_chunk": "agent message",
    "agent_thought_chunk": "agent thought",
    "user_message_chunk": "user message",
}
_TOOL_UPDATES = ("tool_call", "tool_call_update")
_RAW_SHOWN = 500  # characters of a line that is not JSON shown on its arrow (all of it is below)


@dataclass(frozen=True)
class Entry:
    """One message of a session, as it travelled."""

    number: int  # the transcript's line, or the message's place in the session (from 1)
    direction: str  # "client-to-agent" or "agent-to-client"
    time: float | None = None  # seconds since the start, when known
    message: Any = None  # the decoded message
    raw: str | None = None  # a line that is not JSON, as it was
    problems: tuple[dict[str, Any], ...] = ()  # each a Problem.to_json(), maybe with "source"


def rows(entries: Sequence[Entry], after: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """What the page shows of each entry, in order.

    ``after``: problems found once the connection ended (``unanswered``): each goes on the
    request it names (by direction and id) that has no response, if there is one; the others are
    on no row (:func:`render` lists them at the top).
    """
    out: list[dict[str, Any]] = []
    waiting: dict[tuple[str, str], list[int]] = {}  # (direction, id) -> requests, oldest first
    for entry in entries:
        row = _row(len(out), entry)
        key = (entry.direction, row["id"])
        if row["kind"] == "request":
            waiting.setdefault(key, []).append(row["n"])
        elif row["kind"] in ("response", "error") and row["id"] is not None:
            asked = _reverse(entry.direction)
            pending = waiting.get((asked, row["id"]))
            if pending:
                request = out[pending.pop(0)]
                request["pair"], row["pair"] = row["n"], request["n"]
                row["method"] = request["method"]
                if entry.time is not None and request["t"] is not None:
                    request["latency"] = row["latency"] = round(
                        (entry.time - request["t"]) * 1000, 3
                    )
                row["note"] = row["note"] or _outcome(request["method"], entry.message)
        _join_stream(out, row)
        out.append(row)
    for problem in after:
        key = (problem.get("direction", ""), json.dumps(problem.get("id")))
        pending = waiting.get(key) if "id" in problem else None
        if pending:
            out[pending[-1]]["problems"].append(problem)
    return out


def render(
    entries: Sequence[Entry],
    *,
    title: str,
    source: str,
    after: Sequence[dict[str, Any]] = (),
    loose: Sequence[dict[str, Any]] = (),
) -> str:
    """The page, as text. ``title``: what the session was (a transcript's name, the agent's
    command); ``source``: what made the page; ``after``: see :func:`rows`; ``loose``: problems
    that belong to no message."""
    shown = rows(entries, after)
    placed = {id(p) for row in shown for p in row["problems"]}
    loose = [*loose, *(p for p in after if id(p) not in placed)]
    data = {"title": title, "source": source, "rows": shown, "loose": loose}
    blob = _script_json(data)
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    return (
        _PAGE.replace(
            "@CSP@",
            f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'",
        )
        .replace("@STYLE@", _STYLE)
        .replace("@SCRIPT@", _SCRIPT)
        .replace("@DATA@", blob)
    )


def _script_json(value: Any) -> str:
    """``value`` as JSON that cannot end or break the ``<script>`` element holding it."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- what a row shows ------------------------------------------------------------------------


def _reverse(direction: str) -> str:
    return "agent-to-client" if direction == _TO_AGENT else _TO_AGENT


def _row(n: int, entry: Entry) -> dict[str, Any]:
    message = entry.message
    row: dict[str, Any] = {
        "n": n,
        "line": entry.number,
        "dir": entry.direction,
        "t": entry.time,
        "kind": "invalid",
        "method": None,
        "id": None,
        "pair": None,
        "latency": None,
        "note": None,
        "chunks": 0,
        "stream": None,
        "problems": list(entry.problems),
    }
    if entry.raw is not None:
        row["json"] = entry.raw
        row["note"] = {
            "type": "error",
            "label": "not JSON",
            "text": entry.raw[:_RAW_SHOWN],
        }
        return row
    if not isinstance(message, dict):
        row["json"] = _pretty(message)
        return row
    row["json"] = _pretty(message)
    if "id" in message:
        row["id"] = json.dumps(message["id"])
    method = message.get("method")
    if isinstance(method, str):
        row["method"] = method
        row["kind"] = "request" if "id" in message else "notification"
        row["note"] = _call_note(method, message.get("params"))
    elif "id" in message and "error" in message:
        row["kind"] = "error"
        error = message["error"]
        if isinstance(error, dict):
            row["note"] = {
                "type": "error",
                "label": "error",
                "text": f"{error.get('code')}: {error.get('message')}",
            }
    elif "id" in message and "result" in message:
        row["kind"] = "response"
    return row


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _call_note(method: str, params: Any) -> dict[str, Any] | None:
    if not isinstance(params, dict):
        return None
    if method == "session/update" and isinstance(params.get("update"), dict):
        update = params["update"]
        what = update.get("sessionUpdate")
        if what in _STREAMED:
            return {
                "type": "stream",
                "label": _STREAMED[what],
                "text": _content_text(update.get("content")),
                "key": [params.get("sessionId"), what],
            }
        if what in _TOOL_UPDATES:
            parts = [update.get("title"), update.get("kind"), update.get("status")]
            label = "tool call" if what == "tool_call" else "tool call update"
            return {
                "type": "tool",
                "label": f"{label} {update.get('toolCallId', '')}".strip(),
                "text": _words(parts),
            }
        if what == "plan" and isinstance(update.get("entries"), list):
            steps = [e.get("content") for e in update["entries"] if isinstance(e, dict)]
            return {
                "type": "plan",
                "label": "plan",
                "text": "\n".join(str(s) for s in steps),
            }
        return {"type": "update", "label": str(what), "text": ""} if what else None
    if method == "session/request_permission":
        call: Any = params.get("toolCall")
        call = call if isinstance(call, dict) else {}
        options: Any = params.get("options")
        options = options if isinstance(options, list) else []
        names = [o.get("name") or o.get("optionId") for o in options if isinstance(o, dict)]
        title = call.get("title") or call.get("toolCallId") or ""
        return {
            "type": "permission",
            "label": "permission asked",
            "text": f"{title} [{' / '.join(map(str, names))}]",
        }
    if method == "session/prompt" and isinstance(params.get("prompt"), list):
        text = " ".join(_content_text(block) for block in params["prompt"])
        return {"type": "prompt", "label": "prompt", "text": text}
    for key in ("path", "command", "title"):
        if isinstance(params.get(key), str):
            return {"type": "call", "label": key, "text": params[key]}
    return None


def _outcome(method: str | None, message: Any) -> dict[str, Any] | None:
    """What a response says worth showing on its arrow."""
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return None
    if method == "session/request_permission" and isinstance(result.get("outcome"), dict):
        outcome = result["outcome"]
        text = _words([outcome.get("outcome"), outcome.get("optionId")])
        return {"type": "permission", "label": "permission", "text": text}
    if isinstance(result.get("stopReason"), str):
        return {"type": "call", "label": "stop reason", "text": result["stopReason"]}
    return None


def _content_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    if isinstance(block.get("text"), str):
        return str(block["text"])
    kind = block.get("type", "content")
    name = block.get("uri") or block.get("mimeType") or ""
    return f"[{kind} {name}]".replace(" ]", "]")


def _words(parts: Sequence[Any]) -> str:
    return " · ".join(str(p) for p in parts if p not in (None, ""))


def _join_stream(out: list[dict[str, Any]], row: dict[str, Any]) -> None:
    """A streamed chunk right after one of the same session and kind joins its run: the run's
    first row shows the whole text; the others are folded under it."""
    note = row["note"]
    if not (note and note["type"] == "stream") or not out:
        return
    previous = out[-1]
    head = out[previous["stream"]] if previous["stream"] is not None else previous
    head_note = head["note"]
    if not (head_note and head_note["type"] == "stream" and head_note["key"] == note["key"]):
        return
    if head["stream"] is None:
        head["stream"] = head["n"]
        head["chunks"] = 1
        head_note["joined"] = head_note["text"]
    head["chunks"] += 1
    head_note["joined"] += note["text"]
    row["stream"] = head["n"]


# -- the page ---------------------------------------------------------------------------------

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="@CSP@">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ACP session</title>
<style>@STYLE@</style>
</head>
<body>
<header>
<h1 id="title">ACP session</h1>
<p id="source"></p>
<p id="counts"></p>
<div id="filters">
<label>method <select id="method"><option value="">all methods</option></select></label>
<span id="kinds"></span>
<label><input type="checkbox" id="only-problems"> only messages with problems</label>
</div>
</header>
<section id="loose"></section>
<div id="lanes"><div class="time">time</div><div class="lane client">client</div><div class="lane agent">agent</div></div>
<main id="diagram"></main>
<script type="application/json" id="session-data">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #fafbfc; }
header { padding: 12px 20px; background: #fff; border-bottom: 1px solid #d8dde6; }
h1 { font-size: 18px; margin: 0 0 4px; word-break: break-all; }
header p { margin: 2px 0; color: #4a5568; }
#filters { margin-top: 8px; display: flex; gap: 16px; flex-wrap: wrap; align-items: center; }
#kinds label { margin-right: 10px; }
#loose { padding: 0 20px; }
#lanes, .row { display: grid; grid-template-columns: 7em 1fr; }
#lanes { position: sticky; top: 0; background: #eef1f6; font-weight: 600; z-index: 1;
  grid-template-columns: 7em 1fr 1fr; border-bottom: 1px solid #d8dde6; }
#lanes div { padding: 6px 8%; }
#lanes .agent { text-align: right; }
.row { border-bottom: 1px solid #eef0f3; }
.row:target, .row.pair-lit { background: #fff7d6; }
.row .time { padding: 6px 8px; color: #718096; font: 12px ui-monospace, monospace; text-align: right; }
.seq { position: relative; padding: 6px 12%; min-width: 0; }
.seq::before, .seq::after { content: ""; position: absolute; top: 0; bottom: 0; width: 2px; background: #a0aec0; }
.seq::before { left: 10%; } .seq::after { right: 10%; }
.label { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.c2a .label { justify-content: flex-start; } .a2c .label { justify-content: flex-end; }
.method { font-weight: 600; font-family: ui-monospace, monospace; }
.badge { font-size: 11px; padding: 0 6px; border-radius: 8px; background: #e2e8f0; color: #2d3748; }
.badge.request { background: #dbeafe; } .badge.response { background: #dcfce7; }
.badge.error { background: #fee2e2; } .badge.invalid { background: #fecaca; }
.badge.notification { background: #f3e8ff; }
.arrow { position: relative; height: 0; border-top: 2px solid #4a5568; margin: 4px -2.5% 6px; }
.arrow::after { content: ""; position: absolute; top: -6px; border: 5px solid transparent; }
.c2a .arrow::after { right: -2px; border-left: 8px solid #4a5568; }
.a2c .arrow::after { left: -2px; border-right: 8px solid #4a5568; }
.notification .arrow { border-top-style: dashed; }
.kind-response .arrow, .kind-error .arrow { border-top-style: dotted; }
.note { white-space: pre-wrap; word-break: break-word; padding: 4px 8px; border-radius: 4px; margin: 2px 0;
  background: #f1f5f9; }
.note .what { font-size: 11px; color: #64748b; margin-right: 6px; }
.note.stream { background: #ecfdf5; } .note.tool { background: #eff6ff; }
.note.permission { background: #fff7ed; border: 1px solid #fdba74; } .note.error { background: #fef2f2; }
.pairlink { font-size: 12px; color: #2b6cb0; }
.finding { margin: 3px 0; padding: 3px 8px; border-left: 4px solid #e53e3e; background: #fff5f5;
  font-size: 13px; word-break: break-word; }
.finding.warning { border-left-color: #d69e2e; background: #fffbeb; }
.finding .pointer { font-family: ui-monospace, monospace; font-weight: 600; margin: 0 6px; }
details > summary { cursor: pointer; font-size: 12px; color: #4a5568; }
pre { margin: 4px 0; padding: 6px; background: #fff; border: 1px solid #e2e8f0; overflow-x: auto;
  font: 12px/1.35 ui-monospace, monospace; max-height: 24em; }
.folded { display: none; }
"""

_SCRIPT = r"""
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("session-data").textContent);
  const KINDS = ["request", "response", "error", "notification", "invalid"];
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const seconds = (t) => (t === null || t === undefined ? "" : t.toFixed(3) + " s");
  const rows = data.rows;
  document.title = "ACP session: " + data.title;
  document.getElementById("title").textContent = data.title;
  document.getElementById("source").textContent = data.source;

  let errors = 0, warnings = 0;
  const tally = (p) => { if (p.severity === "warning") warnings += 1; else errors += 1; };
  rows.forEach((r) => r.problems.forEach(tally));
  data.loose.forEach(tally);
  const last = rows.length ? rows[rows.length - 1].t : null;
  document.getElementById("counts").textContent =
    rows.length + " messages, " + errors + " errors, " + warnings + " warnings" +
    (last !== null && last !== undefined ? ", " + seconds(last) : "");

  const finding = (p) => {
    const node = el("div", "finding " + (p.severity === "warning" ? "warning" : "error"));
    node.dataset.pointer = p.pointer;
    node.appendChild(el("span", "severity", p.severity + " " + p.kind));
    node.appendChild(el("span", "pointer", "#" + p.pointer));
    node.appendChild(el("span", "text", p.message));
    return node;
  };
  const loose = document.getElementById("loose");
  data.loose.forEach((p) => loose.appendChild(finding(p)));

  const methods = new Map();
  rows.forEach((r) => methods.set(r.method || "?", (methods.get(r.method || "?") || 0) + 1));
  const select = document.getElementById("method");
  [...methods.keys()].sort().forEach((m) => {
    const option = el("option", null, m + " (" + methods.get(m) + ")");
    option.value = m;
    select.appendChild(option);
  });
  const kinds = document.getElementById("kinds");
  const kindBoxes = {};
  KINDS.forEach((k) => {
    const label = el("label");
    const box = el("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.kind = k;
    kindBoxes[k] = box;
    label.appendChild(box);
    label.appendChild(document.createTextNode(" " + k));
    kinds.appendChild(label);
  });

  const diagram = document.getElementById("diagram");
  const nodes = [];
  const open = new Set();
  rows.forEach((r) => {
    const c2a = r.dir === "client-to-agent";
    const row = el("div", "row msg " + (c2a ? "c2a" : "a2c") + " kind-" + r.kind + (r.kind === "notification" ? " notification" : ""));
    row.id = "m" + r.n;
    row.dataset.n = r.n;
    row.dataset.line = r.line;
    row.dataset.method = r.method || "?";
    row.dataset.kind = r.kind;
    row.appendChild(el("div", "time", seconds(r.t) || "#" + r.line));
    const seq = el("div", "seq");
    const label = el("div", "label");
    label.appendChild(el("span", "method", r.method || "(no method)"));
    label.appendChild(el("span", "badge " + r.kind, r.kind));
    if (r.id !== null) label.appendChild(el("span", "badge", "id " + r.id));
    if (r.pair !== null) {
      const link = el("a", "pairlink", (r.kind === "request" ? "response" : "answers") +
        " #" + rows[r.pair].line + (r.latency !== null ? " · " + r.latency.toFixed(1) + " ms" : ""));
      link.href = "#m" + r.pair;
      link.addEventListener("mouseenter", () => nodes[r.pair].classList.add("pair-lit"));
      link.addEventListener("mouseleave", () => nodes[r.pair].classList.remove("pair-lit"));
      label.appendChild(link);
    } else if (r.kind === "request") {
      label.appendChild(el("span", "pairlink", "no response"));
    }
    seq.appendChild(label);
    seq.appendChild(el("div", "arrow"));
    if (r.note) {
      const note = el("div", "note " + r.note.type);
      note.appendChild(el("span", "what", r.note.label + (r.chunks ? " (" + r.chunks + " chunks)" : "")));
      note.appendChild(el("span", "text", r.chunks ? r.note.joined : r.note.text));
      seq.appendChild(note);
      if (r.chunks) {
        const more = el("a", "pairlink", "show the chunks");
        more.href = "#m" + r.n;
        more.addEventListener("click", (event) => {
          event.preventDefault();
          if (open.has(r.n)) open.delete(r.n); else open.add(r.n);
          more.textContent = open.has(r.n) ? "fold the chunks" : "show the chunks";
          apply();
        });
        seq.appendChild(more);
      }
    }
    r.problems.forEach((p) => seq.appendChild(finding(p)));
    const details = el("details");
    details.appendChild(el("summary", null, "line " + r.line + (r.t !== null ? " at " + seconds(r.t) : "")));
    details.appendChild(el("pre", "json", r.json));
    seq.appendChild(details);
    row.appendChild(seq);
    diagram.appendChild(row);
    nodes.push(row);
  });

  const only = document.getElementById("only-problems");
  function apply() {
    const method = select.value;
    rows.forEach((r, i) => {
      const shown = (!method || (r.method || "?") === method) && kindBoxes[r.kind].checked &&
        (!only.checked || r.problems.length > 0);
      const folded = r.stream !== null && r.stream !== r.n && !open.has(r.stream) && !method && !only.checked;
      nodes[i].hidden = !shown;
      nodes[i].classList.toggle("folded", folded);
    });
  }
  select.addEventListener("change", apply);
  only.addEventListener("change", apply);
  Object.values(kindBoxes).forEach((box) => box.addEventListener("change", apply));
  apply();
  document.body.dataset.ready = "1";
})();
"""
