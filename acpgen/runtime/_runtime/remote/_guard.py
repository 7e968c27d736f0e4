"""Who may talk to an agent served over the network: the checks every request of both remote
profiles passes before anything reaches the agent (a browser ``Origin``, the ``Host``, a bearer
token)."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Collection
from typing import Any

__all__ = ["Guard", "headers_of", "is_loopback"]

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this machine only."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(value: str) -> str:
    """The host of a ``Host`` header (``name:port``, ``[v6]:port``), lower case, no brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class Guard:
    """Who may talk to the agent: checked on every request, of both profiles.

    ``token``: the bearer token every request must carry (``Authorization: Bearer <token>``).
    ``allowed_origins``: the browser origins (``https://editor.example``) that may connect; any
    other ``Origin`` is refused, and requests without one (non-browser clients) are served.
    ``allowed_hosts``: the host names this server answers to besides the loopback names and the
    address it listens on; a server listening on every address (``0.0.0.0``) answers to any.
    Without a token, only requests to a loopback address are served.
    """

    def __init__(
        self,
        token: str | None = None,
        allowed_origins: Collection[str] = (),
        allowed_hosts: Collection[str] = (),
    ) -> None:
        self.token = token
        self.origins = frozenset(o.rstrip("/").lower() for o in allowed_origins)
        self.hosts = frozenset(_host_name(h) for h in allowed_hosts)

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        """``(status, reason)`` when the request must be refused, else None."""
        headers = headers_of(scope)
        server = scope.get("server") or ("127.0.0.1", None)
        bound = str(server[0] or "")
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1").rstrip("/").lower() not in self.origins:
            return 403, "Origin not allowed"
        host = _host_name(headers.get(b"host", b"").decode("latin-1"))
        wildcard = bound in ("0.0.0.0", "::", "")
        if not (wildcard or is_loopback(host) or host in self.hosts or host == _host_name(bound)):
            return 403, "Host not allowed"
        if self.token is None:
            if not is_loopback(bound) and not bound.startswith("unix:"):
                return 401, "a bearer token is required beyond loopback"
            return None
        given = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), self.token.encode()
        ):
            return 401, "Unauthorized"
        return None


def headers_of(scope: dict[str, Any]) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope.get("headers") or ()}
