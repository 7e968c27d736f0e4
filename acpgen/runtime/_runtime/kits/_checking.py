"""A stub agent's checking mode (``--check``): it serves as ever, watches its connection, probes
the client in its first turn (``_client_kit``), and reports each requirement when the
connection ends, in the agent kit's forms (``_kit_report``): lines on stderr (stdout with
``--listen``, where every connection is reported as it ends), ``--json``, ``--junit FILE``,
``--html FILE`` (where the package has an inspector); on stdio its exit status is the report's (0 when every MUST holds, 1 when one
fails; 2 for a usage error).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._client_kit import ClientCheck
from ._kit_report import exit_status, report_json, report_lines, write_junit

__all__ = ["Checked", "add_arguments", "check_usage", "report", "serve"]


def add_arguments(parser: Any) -> None:
    """The checking mode's options of a stub agent's command line."""
    parser.add_argument(
        "--check",
        action="store_true",
        help="hold the client that connects to the spec's requirements of a client, and report"
        " each when the connection ends (on stderr; with --listen, on stdout); exit status: 0"
        " when every MUST holds, 1 when one fails",
    )
    parser.add_argument(
        "--json", action="store_true", help="with --check: the whole report as JSON"
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="with --check: write the report to FILE (a client may hide this agent's stderr)",
    )
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="with --check: write JUnit XML, one test case per requirement",
    )
    if _page() is not None:  # a package of one side has no inspector, and no --html
        parser.add_argument(
            "--html",
            metavar="FILE",
            help="with --check: write the inspector's page of the connection",
        )


def check_usage(parser: Any, args: Any) -> None:
    html = getattr(args, "html", None)
    if not args.check and (args.json or args.junit or html or args.report):
        parser.error(
            "--json, --report, --junit and --html go with --check"
            if hasattr(args, "html")
            else "--json, --report and --junit go with --check"
        )


def report(
    check: ClientCheck,
    args: Any,
    subject: str,
    version: int,
    out: Any,
    page: Callable[[int, str, Sequence[tuple[float, str, bytes, int]]], str] | None,
) -> int:
    """Print (and write) the report of one connection; its exit status."""
    verdicts = check.verdicts(version)
    version = check.version() or version
    if args.json:
        document = report_json(verdicts, subject=subject)
        document["protocolVersion"] = version
        text = json.dumps(document, indent=2)
    else:
        text = "\n".join(report_lines(verdicts))
    if args.report:
        _write(args.report, text + "\n")
    else:
        print(text, file=out, flush=True)
    if args.junit:
        write_junit(verdicts, args.junit, suite=f"acp-client-conformance-v{version}")
    if getattr(args, "html", None) and page is not None:
        directions = {"received": "client-to-agent", "sent": "agent-to-client"}
        entries = [(at, directions[d], json.dumps(m).encode(), 0) for at, d, m in check.events]
        _write(args.html, page(version, subject, entries))
    return exit_status(verdicts)


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole, or not at all."""
    temporary = f"{path}.partial"
    with open(temporary, "w", encoding="utf-8") as written:
        written.write(text)
    os.replace(temporary, path)


class Checked:
    """What a stub agent in checking mode does: watch its connection, probe in its first turn."""

    check: ClientCheck | None = None
    _connection: Any = None
    #: the client's methods of the package's protocol version (the probes send only these)
    client_methods: Sequence[str] = ()
    #: the JSON pointer into ``initialize``'s answer of the capability each method needs
    #: (``methods.CAPABILITIES`` of the package's protocol version)
    capability_pointers: Mapping[str, str] = {}
    #: the JSON pointer into ``initialize``'s answer of the capability a request's field needs
    #: (``additionalDirectories``), where the schema has it
    field_pointers: Mapping[str, str] = {}

    def watch(self, connection: Any) -> None:
        """Observe ``connection`` (from ``on_connect``); a remote one is reported as it ends."""
        check = self.check
        if check is None:
            return
        self._connection = connection
        check.gates, check.fields = self.capability_pointers, self.field_pointers
        connection.observe(check.observe)
        if check.on_end is not None:
            background(_reported(connection, check.on_end))

    async def probe(self, session_id: str) -> None:
        """In a turn, before it: the first turn's ``fs/*`` and ``terminal/*`` probes."""
        if self.check is not None and self._connection is not None:
            await self.check.probe(self._connection.rpc.request, session_id, self.client_methods)


async def _reported(connection: Any, on_end: Callable[[], None]) -> None:
    try:
        await connection.wait_closed()
    finally:
        on_end()


def serve(
    parser: Any,
    args: Any,
    stub: Callable[..., Any],
    run: Callable[[Any], Any],
    app: Callable[[Callable[[], Any]], Any],
    version: int,
) -> None:
    """Serve a stub agent (``stub(check=...)`` makes one) on stdio or, with ``--listen``, its
    ASGI app (``app(factory)``). With ``--check``: on stdio, exit with the report's status; over
    the network, report every connection on stdout as it ends."""
    from ..remote import _listen

    if not args.check:
        _listen.serve(parser, args, lambda: asyncio.run(run(stub())), lambda: app(stub))
        return
    page = _page()
    if args.listen is None:
        check = ClientCheck()
        _listen.serve(parser, args, lambda: _until_stopped(run(stub(check=check))), lambda: None)
        sys.exit(
            report(check, args, "the client on this stub agent's stdio", version, sys.stderr, page)
        )

    def connected() -> Any:
        check = ClientCheck()
        check.on_end = lambda: report(
            check, args, "a client over the network", version, sys.stdout, page
        )
        return stub(check=check)

    _listen.serve(parser, args, lambda: None, lambda: app(connected))


def _until_stopped(serving: Any) -> None:
    """Serve until the client goes away, or stops this process (SIGTERM, as many clients end
    their agent): the report is printed either way."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, stop)
    try:
        asyncio.run(serving)
    except KeyboardInterrupt:
        pass


def _page() -> Callable[[int, str, Sequence[tuple[float, str, bytes, int]]], str] | None:
    """What makes the inspector's page of a connection (None: the package has no inspector)."""
    import importlib
    import importlib.util

    name = (
        f"{__package__.partition('._runtime.')[0]}.inspect"  # the package's root, above the rooms
    )
    if importlib.util.find_spec(name) is None:
        return None

    def page(version: int, title: str, entries: Sequence[tuple[float, str, bytes, int]]) -> str:
        inspect = importlib.import_module(name)
        # the root of a package of several versions: the inspector of the version spoken
        inspect = getattr(inspect, "_INSPECTORS", {}).get(version, inspect)
        session, checker = inspect.Session(), inspect.make_checker()
        for at, direction, line, _ in entries:
            session.add(at, direction, line, list(checker.check_line(direction, line).problems))
        return str(session.page(title, list(checker.finish())))

    return page


def background(coroutine: Any) -> None:
    """Run ``coroutine`` to its end in the running loop, kept from the garbage collector."""
    task = asyncio.ensure_future(coroutine)
    _KEPT.add(task)
    task.add_done_callback(_KEPT.discard)


_KEPT: set[asyncio.Future[Any]] = set()
