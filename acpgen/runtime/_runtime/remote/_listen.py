"""What every stub agent has for the network: ``--listen HOST:PORT [--token TOKEN]
[--stall-timeout SECONDS]`` and their checks, serving stdio or the network, and the settings its
module-level ASGI ``app`` reads from the environment (``ACP_TOKEN``, ``ACP_STUB_DELAY``,
``ACP_STALL_TIMEOUT``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from . import _asgi

__all__ = [
    "add_arguments",
    "env_delay",
    "env_seconds",
    "env_token",
    "listen_address",
    "seconds",
    "serve",
    "stalling",
]


def listen_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a host and a port (0: any free port)."""
    host, colon, port = value.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def seconds(value: str) -> float:
    """A number of seconds above 0."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {value!r}")
    return number


def env_seconds(name: str, default: float) -> float:
    """The environment variable ``name`` as seconds; ``default`` when unset or not a number."""
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def env_delay() -> float:
    """The delay between updates of a stub agent served as ``app``: ``ACP_STUB_DELAY``."""
    return env_seconds("ACP_STUB_DELAY", 0.0)


def env_token() -> str | None:
    """The bearer token clients of ``app`` must send: ``ACP_TOKEN`` (None: unset or empty)."""
    return os.environ.get("ACP_TOKEN") or None


def stalling(app: Any) -> Any:
    """``app`` with the stall timeout ``ACP_STALL_TIMEOUT`` (default: the ASGI app's)."""
    app.stall_timeout = env_seconds("ACP_STALL_TIMEOUT", _asgi.STALL_TIMEOUT)
    return app


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--listen``, ``--token`` and ``--stall-timeout``."""
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        type=listen_address,
        help="serve at http://HOST:PORT/acp (WebSocket and Streamable HTTP) instead of stdio;"
        " PORT 0 takes a free port (stderr says which)",
    )
    parser.add_argument(
        "--token", help="the bearer token clients must send (required beyond loopback)"
    )
    parser.add_argument(
        "--stall-timeout",
        metavar="SECONDS",
        type=seconds,
        help="cut off an event stream's reader that takes nothing for this long while messages"
        " wait for it (default: 60)",
    )


def serve(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    stdio: Callable[[], object],
    served: Callable[[], Any],
) -> None:
    """Serve stdio (``stdio()``) or, with ``--listen``, the ASGI app ``served()`` (with
    ``--token``: beyond loopback, one is required)."""
    if args.listen is None:
        if args.token is not None:
            parser.error("argument --token: only with --listen")
        if args.stall_timeout is not None:
            parser.error("argument --stall-timeout: only with --listen")
        stdio()
        return
    host, port = args.listen
    if args.token is None and not _asgi.is_loopback(host):
        parser.error(f"argument --listen: {host} is beyond loopback: give a --token")
    app = served()
    if args.stall_timeout is not None:
        app.stall_timeout = args.stall_timeout
    _asgi.serve(app, host, port, name="stub_agent")
