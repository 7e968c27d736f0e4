"""What the stub clients' command lines share (``_stub_client`` for turns that end with the
prompt's response, ``_turns_client`` for those that end through state updates): the parser's
head, and running the turn to an exit status, each failure one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Coroutine
from typing import Any

from ._process import stderr_not_quoted
from ._rpc import ConnectionClosed, RequestError

__all__ = ["exit_status", "parser"]


def parser(prog: str | None) -> argparse.ArgumentParser:
    """The stub client's parser with the options every stub client has (``--prompt``,
    ``--reject``); ``prog``: the command's name in its help."""
    head = argparse.ArgumentParser(
        prog=prog, description="A stub ACP client: one prompt turn against an agent."
    )
    head.add_argument("--prompt", default="Hello from the stub client.", help="the prompt's text")
    head.add_argument(
        "--reject", action="store_true", help="answer permission requests with a reject option"
    )
    return head


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
