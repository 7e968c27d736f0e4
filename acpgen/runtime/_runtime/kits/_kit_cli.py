"""The agent kit's command line: ``python -m <package>.conformance [options] -- AGENT_CMD [ARGS...]``
(or ``--url URL [--token TOKEN]`` for a remote agent).

It starts the agent (or connects to it), holds it to the requirements of the package's protocol
version (:mod:`._kit_agent`, :mod:`._kit_features`) and prints one line per requirement on stdout
(``--json``: the whole report instead); ``--junit FILE`` writes JUnit XML, ``--html FILE`` the
inspector's page of the run's messages. A package of several versions holds the agent to the
version it answers (its ``initialize`` asked for each, newest first). Exit status: 0 when every
MUST holds, 1 when one fails (or the agent cannot be reached), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._kit_agent import CLIENT_INFO, Kit, Target, Unreachable, run
from ._kit_checks import requirements
from ._kit_features import scratch_folder
from ._kit_peer import Broken, Link, Peer, RemoteLink, StdioLink
from ._kit_report import exit_status, report_json, report_lines, write_junit

__all__ = ["main"]

#: Makes the inspector's page of a run: (protocol version, title, entries of (seconds, direction,
#: message, connection number)) -> the page.
PageMaker = Callable[[int, str, Sequence[tuple[float, str, bytes, int]]], str]


def parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Hold an ACP agent to the spec's requirements of this package's protocol version.",
        epilog="Exit status: 0 when every MUST holds, 1 when one fails, 2 for a usage error.",
    )
    parser.add_argument("--url", help="a remote agent: ws://, wss://, http:// or https://")
    parser.add_argument("--token", help="sent to a remote agent as Authorization: Bearer TOKEN")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML, one test case per requirement"
    )
    parser.add_argument(
        "--html", metavar="FILE", help="write the inspector's page of the run's messages"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long an answer may take (default: 10)",
    )
    parser.add_argument(
        "--cwd", help="the folder sessions are opened in (default: the current one)"
    )
    parser.add_argument(
        "command", nargs="*", metavar="AGENT_CMD", help="the agent's command, after --"
    )
    return parser


def main(
    argv: Sequence[str] | None,
    targets: Mapping[int, Target],
    *,
    prog: str,
    page: PageMaker | None = None,
) -> int:
    """Run the kit; ``targets``: the package's versions (one, or one per version of a package of
    several); ``page``: makes the ``--html`` page (None: the package has no inspector)."""
    arguments = parser(prog)
    args = arguments.parse_args(argv)
    if bool(args.command) == bool(args.url):
        arguments.error(
            "give the agent's command after --, or --url, not both"
            if args.command
            else "give the agent's command after -- (or --url URL)"
        )
    if args.token is not None and not args.url:
        arguments.error("--token needs --url")
    if args.html and page is None:
        arguments.error("--html needs a package with an inspector (one that serves both sides)")
    if args.timeout <= 0:
        arguments.error(f"--timeout {args.timeout:g}: give a number of seconds above 0")
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        arguments.error(f"--cwd {args.cwd}: no such folder")
    subject = args.url or shlex.join(args.command)
    try:
        return asyncio.run(_run(args, targets, cwd, subject, page))
    except (OSError, ImportError, ValueError, Unreachable) as exc:
        print(f"conformance: {subject}: {exc}", file=sys.stderr)
        return 1


async def _run(
    args: argparse.Namespace,
    targets: Mapping[int, Target],
    cwd: str,
    subject: str,
    page: PageMaker | None,
) -> int:
    async def connect() -> Peer:
        link: Link
        if args.url:
            link = await RemoteLink.open(args.url, args.token, args.timeout)
        else:
            link = await StdioLink.start(args.command, cwd=cwd)
        return Peer(link, args.timeout)

    target = targets[max(targets)] if len(targets) == 1 else await _pick(targets, connect)
    scratch = scratch_folder()
    started = time.monotonic()
    try:
        verdicts, kit = await run(target, requirements(target), connect, cwd, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        report = report_json(verdicts, subject=subject)
        report["protocolVersion"] = target.version
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(report_lines(verdicts)))
    if args.junit:
        write_junit(verdicts, args.junit, suite=f"acp-agent-conformance-v{target.version}")
    if args.html and page is not None:
        _write(args.html, page(target.version, subject, _entries(kit, started)))
    return exit_status(verdicts)


async def _pick(targets: Mapping[int, Target], connect: Callable[[], Any]) -> Target:
    """The target of the version the agent answers: ``initialize`` asking for each, newest
    first, in its shape; the first the agent answers with the version asked for."""
    answered: list[Any] = []
    for version in sorted(targets, reverse=True):
        target = targets[version]
        peer = await connect()
        params = {
            "protocolVersion": version,
            target.request_capabilities: {},
            target.request_info: CLIENT_INFO,
        }
        try:
            answer = await peer.request("initialize", params)
        except Broken:
            answer = {}
        finally:
            await peer.close()
        got = (
            (answer.get("result") or {}).get("protocolVersion")
            if isinstance(answer, dict)
            else None
        )
        answered.append(got)
        if got == version:
            print(
                f"conformance: the agent answers protocol version {version}: holding it to version {version}",
                file=sys.stderr,
            )
            return target
    supported = ", ".join(map(str, sorted(targets)))
    raise ValueError(
        f"the agent speaks none of this package's protocol versions ({supported}): "
        f"asked for each, it answered {answered}"
    )


def _entries(kit: Kit, started: float) -> list[tuple[float, str, bytes, int]]:
    entries = [
        (at - started, direction, line, number)
        for number, peer in enumerate(kit.peers)
        for at, direction, line in peer.transcript
    ]
    return sorted(entries, key=lambda entry: entry[0])


def _write(path: str, text: str) -> None:
    temporary = f"{path}.partial"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)
