"""Hold both conformance kits against real ACP agents and clients: `make conformance-real`.

    python tests/real/run.py [--only NAME ...] [--jobs N] [--product-timeout S] [--kit-timeout S]
                             [--turn-timeout S] [--schema FILE] [--out DIR] [--docs] [--rerender]

Generates a package from the bundled schema (or `--schema FILE`) into a temporary folder,
starts the local fake of the model APIs (`fake_models.py`) on 127.0.0.1, then, one product at a
time (or `--jobs` at once):

- each agent (`products.AGENTS`), in a throwaway HOME set up to reach the fake: one turn of
  the package's stub client (does it answer a turn at all?), then the agent kit,
  `python -m <pkg>.conformance --json --junit --html -- AGENT_CMD`;
- each client (`products.CLIENTS`) with the checking stub agent, `python -m <pkg>.stub_agent
  --check --json --report --junit --html`, as the agent it starts, one report per connection.

Each product runs in a process group of its own, bounded by `--product-timeout` (a product that
does not end by then is reported as hung); at its end its group and every process that carries
its run's mark in its environment are killed, and its temporary folders removed. Where it can
(root, `unshare`), the whole run is in a network namespace of its own with only loopback up, so
no product reaches anything but the fake.

Writes `OUT/verdicts.md` (the verdict table) and, per product, `OUT/NAME/` (the kit's JSON,
JUnit and inspector page; a client's per connection; the product's stderr), and prints the
table. `--docs` also puts the table into docs/guides/conformance.md between its markers;
`--rerender` runs nothing and makes the table again from `OUT/outcomes.json`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from products import HERE, NODE_BIN, PRODUCTS, REAL_BIN, Place, Product

ROOT = HERE.parent.parent
DOCS = ROOT / "docs" / "guides" / "conformance.md"
START, END = "<!-- real-products:start -->", "<!-- real-products:end -->"
PACKAGE = "acp_bindings"
MARK = "ACPGEN_REAL_RUN"


@dataclass
class Outcome:
    product: Product
    version: str
    seconds: float = 0.0
    hung: bool = False
    exit_status: int | None = None
    reports: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""  # why there is no verdict, when there is none
    apis: list[str] = field(default_factory=list)
    scratch: str = ""  # its temporary folder, shown as TMP in the details
    turn: str = ""  # an agent's one turn with the stub client: its set-up works, or not


# --- running ------------------------------------------------------------------------------


def kill_marked(mark: str) -> None:
    """SIGKILL every process whose environment carries `MARK=mark`: what a product started,
    even a child that left its process group."""
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def run_bounded(cmd: list[str], *, cwd: Path, env: dict[str, str], stdout: Path,
                stderr: Path, timeout: float) -> tuple[int | None, bool, float]:
    """Run `cmd` in a process group of its own; (exit status, hung, seconds)."""
    began = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=err, start_new_session=True)
        hung = False
        try:
            status: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            hung, status = True, None
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            kill_marked(env[MARK])
            process.wait()
    return status, hung, time.monotonic() - began


def base_env(place: Place, mark: str, tmp: Path) -> dict[str, str]:
    path = [str(NODE_BIN), str(REAL_BIN), "/usr/local/bin", "/usr/bin", "/bin"]
    return {
        "PATH": os.pathsep.join(path),
        "HOME": str(place.home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        MARK: mark,
    }


def stub_agent_script(path: Path, gen: Path, reports: Path) -> None:
    """The checking stub agent as one command: a report per connection, named by mktemp."""
    python = sys.executable
    path.write_text(
        "#!/bin/sh\n"
        f'conn=$(mktemp "{reports}/conn-XXXXXX") || exit 1\n'
        f'PYTHONPATH="{gen}" exec "{python}" -m {PACKAGE}.stub_agent --check --json'
        ' --report "$conn.json" --junit "$conn.xml" --html "$conn.html"\n',
        encoding="utf-8",
    )
    path.chmod(0o755)


def version_of(product: Product) -> str:
    if product.registry == "npm":
        meta = HERE / "node_modules" / product.package / "package.json"
        try:
            return str(json.loads(meta.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            return "not installed"
    found = subprocess.run(
        [str(product.python), "-c",
         "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", product.package],
        capture_output=True, text=True, check=False)
    return found.stdout.strip() if found.returncode == 0 else "not installed"


def api_calls(log: Path, mark: str) -> list[str]:
    seen: dict[str, int] = {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            call = json.loads(line)
            if call.get("mark") == mark:
                seen[call["api"]] = seen.get(call["api"], 0) + 1
    return [f"{api} ×{count}" for api, count in sorted(seen.items())]


def run_product(product: Product, *, gen: Path, work: Path, out: Path, fake: str,
                api_log: Path, run_id: str, args: argparse.Namespace) -> Outcome:
    outcome = Outcome(product, version_of(product))
    if outcome.version == "not installed":
        outcome.problem = f"{product.package} is not installed (make conformance-real installs it)"
        return outcome
    mine = out / product.name
    shutil.rmtree(mine, ignore_errors=True)
    mine.mkdir(parents=True)
    scratch = Path(tempfile.mkdtemp(prefix=product.name + "-", dir=work))
    outcome.scratch = str(scratch)
    try:
        place = Place(home=scratch / "home", cwd=scratch / "cwd",
                      fake=f"{fake}/m/{run_id}-{product.name}",
                      stub_agent=scratch / "bin" / "stub-agent")
        for folder in (place.home, place.cwd, scratch / "tmp", scratch / "bin"):
            folder.mkdir(parents=True)
        mark = f"{run_id}-{product.name}"
        env = base_env(place, mark, scratch / "tmp")
        if product.kind == "agent":
            env["PYTHONPATH"] = str(gen)
            env.update(product.setup(place))
            outcome.turn = one_turn(product, place, env, mine, args)
            cmd = [sys.executable, "-m", f"{PACKAGE}.conformance", "--json",
                   "--junit", str(mine / "junit.xml"), "--html", str(mine / "page.html"),
                   "--timeout", str(args.kit_timeout), "--cwd", str(place.cwd),
                   "--", *product.command(place)]
            stdout, stderr = mine / "report.json", mine / "stderr.txt"
        else:
            stub_agent_script(place.stub_agent, gen, mine)
            env.update(product.setup(place))
            cmd = product.command(place)
            stdout, stderr = mine / "client-stdout.txt", mine / "client-stderr.txt"
        (mine / "command.txt").write_text(" ".join(cmd) + "\n", encoding="utf-8")
        status, hung, seconds = run_bounded(cmd, cwd=place.cwd, env=env, stdout=stdout,
                                            stderr=stderr, timeout=args.product_timeout)
        outcome.exit_status, outcome.hung, outcome.seconds = status, hung, seconds
        outcome.apis = api_calls(api_log, mark)
        collect(outcome, mine, stdout, stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return outcome


def one_turn(product: Product, place: Place, env: dict[str, str], mine: Path,
             args: argparse.Namespace) -> str:
    """One prompt turn of the package's stub client with the agent, before the kit: whether
    the agent, as set up, answers a turn from the fake model at all."""
    out, err = mine / "turn-stdout.txt", mine / "turn-stderr.txt"
    cmd = [sys.executable, "-m", f"{PACKAGE}.stub_client", "--prompt", "Say hello.", "--",
           *product.command(place)]
    status, hung, seconds = run_bounded(cmd, cwd=place.cwd, env=env, stdout=out, stderr=err,
                                        timeout=args.turn_timeout)
    lines = out.read_text(encoding="utf-8", errors="replace").splitlines()
    ended = next((line for line in reversed(lines) if '"stopReason"' in line), "")
    said = "end_turn" if '"end_turn"' in ended else (one_line(ended, 60) or "no stop reason")
    if hung:
        return f"{said}; the client did not end in {args.turn_timeout:.0f} s"
    return f"{said}; exit {status}, {seconds:.0f} s"


def collect(outcome: Outcome, mine: Path, stdout: Path, stderr: Path) -> None:
    if outcome.product.kind == "agent":
        try:
            outcome.reports = [json.loads(stdout.read_text(encoding="utf-8"))]
        except ValueError:
            tail = stderr.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            outcome.problem = "the kit wrote no report" + (f": {tail[-1]}" if tail else "")
        return
    for report in sorted(mine.glob("conn-*.json")):
        try:
            outcome.reports.append(json.loads(report.read_text(encoding="utf-8")))
        except ValueError:
            outcome.problem = f"{report.name} is not a whole report"
    if not outcome.reports and not outcome.problem:
        outcome.problem = "the client never started the checking stub agent"


# --- the table ------------------------------------------------------------------------------

MARKS = {"passed": "PASS", "failed": "FAIL", "advised": "NOTE", "not applicable": "N/A"}
#: Which outcome a product gets when its reports (a client's connections) differ: the worst.
RANK = {"failed": 3, "advised": 2, "passed": 1, "not applicable": 0}


def merged(outcome: Outcome) -> dict[str, dict[str, Any]]:
    """Each requirement's verdict over the product's reports (a client's connections): failed
    in one, failed; else advice not followed in one (a NOTE); else passed in one, passed; else
    not applicable."""
    verdicts: dict[str, dict[str, Any]] = {}
    for report in outcome.reports:
        for req in report.get("requirements", []):
            known = verdicts.get(req["id"])
            if known is None or RANK.get(req["outcome"], 0) > RANK.get(known["outcome"], 0):
                verdicts[req["id"]] = req
    return verdicts


def cell(outcome: Outcome, verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return "hung" if outcome.hung and not outcome.reports else "—"
    return MARKS.get(verdict["outcome"], verdict["outcome"])


def one_line(text: str, limit: int = 400) -> str:
    """One line of Markdown: control characters (a terminal's escapes) as `\\xNN`."""
    text = "".join(ch if ch.isprintable() or ch.isspace() else f"\\x{ord(ch):02x}"
                   for ch in str(text))
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_of(outcome: Outcome, timeout: float) -> str:
    if outcome.hung:
        return f"hung: stopped after {timeout:.0f} s"
    if outcome.problem and not outcome.reports:
        return one_line(outcome.problem, 160)
    return f"exit {outcome.exit_status}"


def table(outcomes: list[Outcome], kind: str, args: argparse.Namespace) -> list[str]:
    mine = [o for o in outcomes if o.product.kind == kind]
    if not mine:
        return []
    if kind == "agent":
        lines = [("| product | version | model API | one turn (stub client) | calls to the fake | kit "
                 "| time | failed (MUST), advised |"),
                 "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    else:
        lines = [("| product | version | how it names its agent | client | time "
                 "| failed (MUST), advised |"),
                 "| --- | --- | --- | --- | --- | --- |"]
    for o in mine:
        verdicts = merged(o)
        failed = [v for v in verdicts.values() if v["outcome"] == "failed"]
        musts = [v for v in failed if v["level"] == "MUST"]
        advised = [v for v in verdicts.values() if v["outcome"] == "advised"]
        connections = f", connections: {len(o.reports)}" if kind == "client" else ""
        about = (f"{o.product.api} | {o.turn} | {', '.join(o.apis) or 'none'}" if kind == "agent"
                 else o.product.note)
        lines.append(f"| {o.product.name} | {o.version} | {about} | "
                     f"{status_of(o, args.product_timeout)}{connections} | {o.seconds:.0f} s | "
                     f"{len(failed)} ({len(musts)}), {len(advised)} |")
    ids: dict[str, str] = {}
    for o in mine:
        for req_id, verdict in merged(o).items():
            ids.setdefault(req_id, verdict["level"])
    lines += ["", "| requirement | level | " + " | ".join(o.product.name for o in mine) + " |",
              "| --- | --- | " + " | ".join("---" for _ in mine) + " |"]
    columns = [merged(o) for o in mine]
    for req_id, level in ids.items():
        cells = " | ".join(cell(o, col.get(req_id)) for o, col in zip(mine, columns))
        # The id bare: the guide's table of requirements is its lines that open with "| `".
        lines.append(f"| {req_id} | {level} | {cells} |")
    lines.append("")
    for o, col in zip(mine, columns):
        failed = [v for v in col.values() if v["outcome"] in ("failed", "advised")]
        if not failed and not o.hung and not o.problem:
            continue
        lines.append(f"**{o.product.name} {o.version}**:")
        lines.append("")
        if o.hung:
            lines.append(f"- hung: not ended after {args.product_timeout:.0f} s; its process "
                         "group and every process it started were killed")
        if o.problem:
            lines.append(f"- {one_line(o.problem)}")
        for v in failed:
            detail = (v.get("detail") or "").replace(o.scratch, "TMP")
            mark = "FAIL" if v["outcome"] == "failed" else "NOTE"
            lines.append(f"- {mark} `{v['id']}` ({v['level']}): {one_line(detail)}")
        lines.append("")
    return lines


def schema_name(args: argparse.Namespace) -> str:
    if getattr(args, "schema_name", None):
        return str(args.schema_name)
    if not getattr(args, "schema", None):
        return "the bundled schema"
    return " + ".join(f"`{path.name}`" for path in args.schema)


def render(outcomes: list[Outcome], args: argparse.Namespace, isolated: str,
           wall: float) -> str:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    lines = [
        (f"Run by `make conformance-real` (acpgen at {head or 'an unknown commit'}; the kits of"
        f" a package generated from {schema_name(args)}; answer timeout {args.kit_timeout:.0f} s,"
        f" each product bounded to {args.product_timeout:.0f} s; {isolated}). Wall time of the"
        f" run: {wall:.0f} s."),
        "",
        "Agents, under the agent kit (`python -m acp_bindings.conformance --json -- AGENT_CMD`):",
        "",
        *table(outcomes, "agent", args),
        ("Clients, each starting the checking stub agent (`python -m acp_bindings.stub_agent"
        " --check`); a requirement failed on one connection is failed:"),
        "",
        *table(outcomes, "client", args),
    ]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def save(path: Path, outcomes: list[Outcome], args: argparse.Namespace, isolated: str,
         wall: float) -> None:
    """What the table is made of, so that `--rerender` makes it again without running."""
    run = {"isolated": isolated, "wall": wall, "kit_timeout": args.kit_timeout,
           "schema": schema_name(args),
           "product_timeout": args.product_timeout,
           "outcomes": [dict(vars(o), product=o.product.name) for o in outcomes]}
    path.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


def rerender(args: argparse.Namespace) -> int:
    saved = json.loads((args.out / "outcomes.json").read_text(encoding="utf-8"))
    by_name = {p.name: p for p in PRODUCTS}
    outcomes = [Outcome(**dict(row, product=by_name[row["product"]]))
                for row in saved["outcomes"]]
    args.kit_timeout, args.product_timeout = saved["kit_timeout"], saved["product_timeout"]
    args.schema_name = saved.get("schema", "the bundled schema")
    return finish(render(outcomes, args, saved["isolated"], saved["wall"]), args)


def into_docs(text: str) -> None:
    page = DOCS.read_text(encoding="utf-8")
    if START not in page or END not in page:
        raise SystemExit(f"conformance-real: {DOCS} has no {START} ... {END} markers")
    before, rest = page.split(START, 1)
    _, after = rest.split(END, 1)
    DOCS.write_text(f"{before}{START}\n{text}{END}{after}", encoding="utf-8")


# --- the run ------------------------------------------------------------------------------


def isolate(argv: list[str]) -> None:
    """Re-run this script in a network namespace of its own, where that is possible."""
    if os.environ.get("ACPGEN_REAL_NETNS") or not shutil.which("unshare"):
        return
    if subprocess.run(["unshare", "--net", "true"], capture_output=True,
                      check=False).returncode != 0:
        return
    env = dict(os.environ, ACPGEN_REAL_NETNS="1")
    os.execvpe("unshare", ["unshare", "--net", "--", sys.executable, __file__, *argv], env)


def start_fake(work: Path, api_log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = work / "fake.port"
    fake = subprocess.Popen(
        [str(REAL_BIN / "python"), str(HERE / "fake_models.py"), "--port-file", str(port_file),
         "--log", str(api_log)],
        stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while not port_file.exists():
        if fake.poll() is not None or time.monotonic() > deadline:
            fake.kill()
            raise SystemExit("conformance-real: the fake model server did not start")
        time.sleep(0.05)
    return fake, "http://127.0.0.1:" + port_file.read_text(encoding="utf-8").strip()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these products alone")
    parser.add_argument("--jobs", type=int, default=1, help="products run at once (default 1)")
    parser.add_argument("--product-timeout", type=float, default=240.0)
    parser.add_argument("--kit-timeout", type=float, default=20.0)
    parser.add_argument("--turn-timeout", type=float, default=60.0,
                        help="bound of an agent's one turn with the stub client (default 60)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--schema", type=Path, action="append",
                        help="generate the kits' package from this schema (repeatable, as "
                             "acpgen's --schema), not from the bundled one")
    parser.add_argument("--docs", action="store_true", help=f"write the table into {DOCS.name}")
    parser.add_argument("--rerender", action="store_true",
                        help="run nothing: the table again from OUT/outcomes.json")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()  # the stub agent's script names it from a product's folder
    if args.rerender:
        return rerender(args)
    known = {p.name for p in PRODUCTS}
    unknown = sorted(set(args.only or ()) - known)
    if unknown:
        parser.error(f"no product {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    isolate(argv)
    if os.environ.get("ACPGEN_REAL_NETNS"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        isolated = "in a network namespace of its own, loopback only"
    else:
        isolated = "NOT network-isolated: unshare was not available"
    began = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="acpgen-real-"))
    fake: subprocess.Popen[bytes] | None = None
    try:
        gen = work / "gen"
        acpgen = Path(sys.executable).with_name("acpgen")
        schemas = [arg for path in args.schema or () for arg in ("--schema", str(path.resolve()))]
        subprocess.run([str(acpgen), "generate", "--out", str(gen), *schemas], check=True,
                       stdout=subprocess.DEVNULL)
        api_log = args.out / "api-calls.jsonl"
        api_log.unlink(missing_ok=True)
        fake, url = start_fake(work, api_log)
        run_id = uuid.uuid4().hex[:8]
        chosen = [p for p in PRODUCTS if not args.only or p.name in args.only]

        def one(product: Product) -> Outcome:
            outcome = run_product(product, gen=gen, work=work, out=args.out, fake=url,
                                  api_log=api_log, run_id=run_id, args=args)
            print(f"conformance-real: {product.name} {outcome.version}: "
                  f"{status_of(outcome, args.product_timeout)} in {outcome.seconds:.0f} s",
                  file=sys.stderr, flush=True)
            return outcome

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(one, chosen))
    finally:
        if fake is not None:
            os.killpg(fake.pid, signal.SIGKILL)
            fake.wait()
        shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - began
    save(args.out / "outcomes.json", outcomes, args, isolated, wall)
    return finish(render(outcomes, args, isolated, wall), args)


def finish(text: str, args: argparse.Namespace) -> int:
    (args.out / "verdicts.md").write_text(text, encoding="utf-8")
    if args.docs:
        into_docs(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
