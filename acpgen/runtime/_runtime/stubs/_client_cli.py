"""What the stub clients' command lines share (``_stub_client`` for turns that end with the
prompt's response, ``_turns_client`` for those that end through state updates): the parser's
head and its remote options, running the turn to an exit status, each failure one line on
stderr, and the stub client of a package of several versions (:func:`run_versions`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import sys
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from ..connection._rpc import ConnectionClosed, RequestError, UnsupportedVersion
from ..transports._process import stderr_not_quoted

__all__ = ["add_remote", "check_remote", "exit_status", "parser", "run_versions"]


def parser(prog: str | None, conflict_handler: str = "error") -> argparse.ArgumentParser:
    """The stub client's parser with the options every stub client has (``--prompt``,
    ``--reject``); ``prog``: the command's name in its help; ``conflict_handler="resolve"``:
    an option added twice is taken once, with the later help."""
    head = argparse.ArgumentParser(
        prog=prog,
        description="A stub ACP client: one prompt turn against an agent.",
        conflict_handler=conflict_handler,
    )
    head.add_argument("--prompt", default="Hello from the stub client.", help="the prompt's text")
    head.add_argument(
        "--reject", action="store_true", help="answer permission requests with a reject option"
    )
    return head


def add_remote(parser: argparse.ArgumentParser) -> None:
    """The options that reach a remote agent instead of running one, and the agent's command."""
    parser.add_argument("--url", help="the remote agent's URL, instead of AGENT_CMD")
    parser.add_argument("--token", help="the bearer token to send to the remote agent")
    parser.add_argument("--http2", action="store_true", help="speak HTTP/2 to an http(s):// URL")
    parser.add_argument(
        "command", nargs="*", metavar="AGENT_CMD", help="the agent command, after --"
    )


def check_remote(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error unless exactly one of ``--url`` and a command is given."""
    if (args.url is None) == (not args.command):
        parser.error("give either --url URL or an agent command (after --)")
    if args.url is None and (args.token is not None or args.http2):
        parser.error("--token and --http2 go with --url")


def exit_status(turn: Coroutine[Any, Any, object], told: tuple[type[Exception], ...] = ()) -> int:
    """Run ``turn`` (the stub client's one prompt turn); 0, or 1 when it fails, with one line on
    stderr that says why. An error of the kinds ``told`` is a message of its own (no agent to
    log in with, no protocol version in common)."""
    logging.basicConfig(level=logging.WARNING, format="stub_client: %(levelname)s %(message)s")
    try:
        asyncio.run(turn)
    except told as exc:
        return _failed(str(exc))
    except RequestError as exc:
        return _failed(f"the agent answered with an error: {exc}")
    except ConnectionClosed as exc:  # the agent's stderr was passed through: not quoted again
        return _failed(f"the agent went away: {stderr_not_quoted(str(exc))}")
    except ConnectionError as exc:
        return _failed(f"cannot reach the agent: {exc}")
    except OSError as exc:
        return _failed(f"cannot start the agent: {exc}")
    except ImportError as exc:  # a remote URL's client library is missing
        return _failed(str(exc))
    except ValueError as exc:  # a response that does not decode
        return _failed(f"the agent sent an invalid response: {exc}")
    return 0


def _failed(message: str) -> int:
    print(f"stub_client: {message}", file=sys.stderr)
    return 1


def run_versions(stubs: Mapping[int, Any], argv: Sequence[str] | None, prog: str) -> int:
    """The stub client of a package of several versions: ``stubs`` maps each version to its stub
    client's module (``_stub_client`` or ``_turns_client``: ``add_options``, ``make_client``,
    ``initialize_params``, ``turn``, ``TOLD``, ``ClientSideConnection``). It takes every
    version's options (each version's client reads those it has), asks for ``--protocol-version``
    (default: the newest) and runs the turn in the version the agent answers."""
    from ...versions import connect_remote_versions, spawn_versions

    head = parser(prog, "resolve")  # an option two versions have is taken once
    newest = max(stubs)
    head.add_argument(
        "--protocol-version",
        type=int,
        default=newest,
        metavar="N",
        help=f"the protocol version to ask for (default: {newest}); the turn runs in the one the"
        f" agent answers, of {', '.join(map(str, sorted(stubs)))}",
    )
    for version in sorted(stubs):
        stubs[version].add_options(head)
    add_remote(head)
    args = head.parse_args(argv)
    check_remote(head, args)
    clients = {version: stub.make_client(args) for version, stub in stubs.items()}
    connectors = {
        version: functools.partial(stub.ClientSideConnection, clients[version])
        for version, stub in stubs.items()
    }

    def initialize(version: int) -> dict[str, Any]:
        params: dict[str, Any] = stubs[version].initialize_params(clients[version])
        return params

    async def turn() -> object:
        try:
            connecting = (
                spawn_versions(
                    connectors,
                    args.command[0],
                    *args.command[1:],
                    initialize=initialize,
                    ask=args.protocol_version,
                )
                if args.url is None
                else connect_remote_versions(
                    connectors,
                    args.url,
                    initialize=initialize,
                    ask=args.protocol_version,
                    token=args.token,
                    http2=args.http2,
                )
            )
            async with connecting as bound:
                version = bound.version
                return await stubs[version].turn(
                    clients[version], bound.connection, bound.initialized, args.prompt
                )
        finally:
            for client in clients.values():
                close = getattr(client, "close", None)
                if close is not None:
                    await close()

    told = tuple({kind for stub in stubs.values() for kind in stub.TOLD}) + (UnsupportedVersion,)
    return exit_status(turn(), told)
