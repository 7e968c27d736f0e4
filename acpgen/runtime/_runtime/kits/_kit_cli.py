"""The agent kit's command line: ``python -m <package>.conformance [options] -- AGENT_CMD [ARGS...]``
(or ``--url URL [--token TOKEN]`` for a remote agent).

It starts the agent (or connects to it), holds it to the requirements of the package's protocol
version (:mod:`._kit_agent`, :mod:`._kit_features`) and prints one line per requirement on stdout
(``--json``: the whole report instead); ``--junit FILE`` writes JUnit XML, ``--html FILE`` the
inspector's page of the run's messages. A package of several versions holds the agent to the
version it answers (its ``initialize`` asked for each, newest first), or with
``--protocol-version N`` to version N (an agent that does not answer N is not held to anything).
Exit status: 0 when every MUST holds, 1 when one fails (or the agent cannot be reached, does not
speak the version given, or the run outlasts ``--run-timeout``), 2 for a usage error.
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

from ._kit_agent import CLIENT_INFO, RUN_TIMEOUT, Kit, Target, Unreachable, run
from ._kit_checks import requirements
from ._kit_features import scratch_folder
from ._kit_peer import Broken, Link, Peer, RemoteLink, StdioLink, quote
from ._kit_report import exit_status, report_json, report_lines, write_junit

__all__ = ["main"]

#: Makes the inspector's page of a run: (protocol version, title, entries of (seconds, direction,
#: message, connection number)) -> the page.
PageMaker = Callable[[int, str, Sequence[tuple[float, str, bytes, int]]], str]


def parser(prog: str, html: bool = True, versions: Sequence[int] = ()) -> argparse.ArgumentParser:
    """The kit's command line; ``html``: whether it offers ``--html`` (a package with an
    inspector; one of one side has none); ``versions``: a package's several protocol versions,
    which ``--protocol-version`` chooses from (none: a package of one version, without it)."""
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
    if html:
        parser.add_argument(
            "--html", metavar="FILE", help="write the inspector's page of the run's messages"
        )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long the agent may stay silent while an answer is due; the updates of a "
        "turn's session count as activity (default: 10)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=RUN_TIMEOUT,
        metavar="SECONDS",
        help=f"the bound of the whole run: the check it cuts short fails, the rest are not run "
        f"(default: {RUN_TIMEOUT:g})",
    )
    parser.add_argument(
        "--cwd", help="the folder sessions are opened in (default: the current one)"
    )
    if len(versions) > 1:
        parser.add_argument(
            "--protocol-version",
            type=int,
            choices=sorted(versions),
            metavar="N",
            help=f"hold the agent to version N ({', '.join(map(str, sorted(versions)))}; default:"
            " the version it answers)",
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
    arguments = parser(prog, html=page is not None, versions=tuple(targets))
    args = arguments.parse_args(argv)
    if bool(args.command) == bool(args.url):
        arguments.error(
            "give the agent's command after --, or --url, not both"
            if args.command
            else "give the agent's command after -- (or --url URL)"
        )
    if args.token is not None and not args.url:
        arguments.error("--token needs --url")
    if args.timeout <= 0:
        arguments.error(f"--timeout {args.timeout:g}: give a number of seconds above 0")
    if args.run_timeout <= 0:
        arguments.error(f"--run-timeout {args.run_timeout:g}: give a number of seconds above 0")
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

    asked = getattr(args, "protocol_version", None)
    if len(targets) == 1:
        target = targets[max(targets)]
    else:
        target = await _pick(
            {asked: targets[asked]} if asked else targets, connect, forced=bool(asked)
        )
    scratch = scratch_folder()
    started = time.monotonic()
    try:
        verdicts, kit = await run(
            target, requirements(target), connect, cwd, scratch, run_timeout=args.run_timeout
        )
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
    if getattr(args, "html", None) and page is not None:
        _write(args.html, page(target.version, subject, _entries(kit, started)))
    if kit.failure is not None:  # the agent could not be held to every requirement
        print(f"conformance: {kit.failure}", file=sys.stderr)
        return 1
    if kit.out_of_time:
        print(
            f"conformance: the run's bound of {args.run_timeout:g} s (--run-timeout) passed",
            file=sys.stderr,
        )
        return 1
    return exit_status(verdicts)


async def _pick(
    targets: Mapping[int, Target], connect: Callable[[], Any], forced: bool = False
) -> Target:
    """The target of the version the agent answers: ``initialize`` asking for each, newest
    first, in its shape; the first the agent answers with the version asked for. ``forced``:
    ``targets`` is the one version ``--protocol-version`` gives."""
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
    if forced:  # the one version asked for
        raise ValueError(
            f"--protocol-version {version}: asked for version {version}, the agent answered"
            f" {quote(answer)}: it does not speak it"
        )
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
