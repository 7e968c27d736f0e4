"""JSON-RPC errors, and the one a connection raises once it is closed."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ConnectionClosed",
    "RequestError",
    "UnsupportedVersion",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
#: The answer to an ``initialize`` asking for a protocol version the agent does not speak.
UNSUPPORTED_PROTOCOL_VERSION = -32022


class RequestError(Exception):
    """A JSON-RPC error: raised by a handler to answer with its own code, or by a call the peer refused.

    ``str()`` is the message and the code, then the data (as JSON) when there is any:
    ``Invalid params (-32602): {"path": "/cwd"}``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        text = f"{self.message} ({self.code})"
        if self.data is None:
            return text
        try:
            data = json.dumps(self.data, ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON: as Python writes it
            data = repr(self.data)
        return f"{text}: {data}"

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_json(cls, error: Any) -> RequestError:
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, "malformed error object", error)
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
            message if isinstance(message, str) else "error",
            error.get("data"),
        )

    @classmethod
    def parse_error(cls, data: Any = None) -> RequestError:
        return cls(PARSE_ERROR, "Parse error", data)

    @classmethod
    def invalid_request(cls, data: Any = None) -> RequestError:
        return cls(INVALID_REQUEST, "Invalid request", data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        return cls(INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        return cls(INTERNAL_ERROR, "Internal error", data)

    @classmethod
    def request_cancelled(cls, data: Any = None) -> RequestError:
        return cls(REQUEST_CANCELLED, "Request cancelled", data)

    @classmethod
    def auth_required(cls, data: Any = None) -> RequestError:
        return cls(AUTH_REQUIRED, "Authentication required", data)

    @classmethod
    def resource_not_found(cls, uri: str | None = None) -> RequestError:
        return cls(RESOURCE_NOT_FOUND, "Resource not found", None if uri is None else {"uri": uri})

    @classmethod
    def session_not_found(cls, session_id: Any) -> RequestError:
        """A request naming a session that is not open: -32002 with ``{"sessionId": ...}``, as
        the spec answers an unknown session."""
        return cls(RESOURCE_NOT_FOUND, "Resource not found", {"sessionId": session_id})

    @classmethod
    def from_exception(cls, exc: BaseException) -> RequestError:
        """The error a handler's unexpected exception answers with: -32603, its type and message
        (``KeyError: 's'``), never its traceback."""
        text = str(exc)
        details = type(exc).__name__ + (f": {text}" if text else "")
        return cls.internal_error({"details": details})


class ConnectionClosed(ConnectionError):
    """The connection is closed: the peer went away, or this side closed it."""


class UnsupportedVersion(ValueError):
    """The agent answered ``initialize`` with a protocol version the client does not speak (its
    answer is not one of the client's models)."""


# The errors a user catches, sees in a traceback and may pickle are named where the package's root
# exports them (``acp_bindings.RequestError``), not after the room of the runtime they are kept in.
_ROOT, _IN_ROOM, _ = __name__.partition("._runtime.")
if _IN_ROOM:
    RequestError.__module__ = ConnectionClosed.__module__ = _ROOT
