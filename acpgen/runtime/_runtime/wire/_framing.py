"""The wire's text: strict JSON in and out, messages' JSON text, newline framing with a size limit,
and finding the id of a message that cannot be read.

A line is one JSON-RPC message. Reading is strict: ``NaN``, ``Infinity`` and invalid UTF-8 are not
JSON; a number beyond the float range is JSON this side cannot hold. Writing is strict too: a value
holding ``NaN`` or an infinity raises ``ValueError`` and is never sent.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from ._codec import dump_json, json_string

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "JsonText", "LineFramer", "MessageSink"]


def package_of(module: str) -> str:
    """The package a runtime module (``__name__``) is copied into: ``acp`` for
    ``acp._runtime.wire._framing`` (in a room of the private runtime) or ``acp._framing``."""
    head, found, _ = module.partition("._runtime.")
    return head if found else module.rpartition(".")[0]


#: The wire's log: every runtime module logs here (``<package>._rpc``), wherever the module is.
WIRE_LOG = package_of(__name__) + "._rpc"
logger = logging.getLogger(WIRE_LOG)

#: The largest message accepted by default (bytes, without the newline): 32 MiB.
DEFAULT_MAX_MESSAGE_SIZE = 32 * 1024 * 1024
READ_CHUNK = 1 << 16  # bytes read from a pipe at once
HEAD_KEPT = 1 << 12  # bytes of an oversized message kept at each end to find its id

encode_json = dump_json  # the wire's JSON text of a value
_quoted = json_string  # a str as the encoder writes it


class JsonText:
    """A value written as JSON text already (by a codec's ``encode_text``): a connection sends it
    as it is where it takes a JSON value, a request's or notification's params or a result."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _body(value: Any) -> str:
    """The JSON text of a params or result value: as it is when written already."""
    return value.text if value.__class__ is JsonText else encode_json(value)


def result_text(request_id: Any, result: Any) -> str:
    """The JSON text of a response, as :func:`encode_json` writes its object, envelope first."""
    head = str(request_id) if type(request_id) is int else encode_json(request_id)
    return '{"jsonrpc":"2.0","id":' + head + ',"result":' + _body(result) + "}"


def request_text(request_id: int, method: str, params: Any) -> str:
    """The JSON text of a request, as :func:`encode_json` writes its object, envelope first."""
    head = '{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":' + _quoted(method)
    return head + "}" if params is None else head + ',"params":' + _body(params) + "}"


def notification_text(method: str, params: Any) -> str:
    """The JSON text of a notification, as :func:`encode_json` writes its object."""
    head = '{"jsonrpc":"2.0","method":' + _quoted(method)
    return head + "}" if params is None else head + ',"params":' + _body(params) + "}"


def valid_id(value: Any) -> bool:
    """A JSON-RPC id: a string, a finite number (not a boolean) or null."""
    if isinstance(value, float):
        return math.isfinite(value)
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


# -- framing ---------------------------------------------------------------------------------------


class MessageSink(Protocol):
    """What a transport hands the messages it reads to (a :class:`Connection`)."""

    #: False once the connection takes no more messages (closed, or the peer's input ended).
    accepting: bool

    def message_received(self, message: bytes | str) -> None:
        """One whole message, of at most the maximum size."""
        ...

    def message_too_large(self, head: bytes, tail: bytes, size: int) -> None:
        """A message above the maximum size, known by its first and last bytes."""
        ...

    # A sink may also have ``lines_received(lines)``: whole messages of at most the maximum size,
    # in order, as ``message_received`` for each of them would take them (while ``accepting``).


class LineFramer:
    """Splits a byte stream into newline-delimited messages for a :class:`MessageSink`, keeping
    at most ``max_size`` bytes of a line (of a longer one, only its two ends)."""

    def __init__(self, sink: MessageSink, max_size: int) -> None:
        self._sink = sink
        #: the sink's way to take many whole lines at once, if it has one (see MessageSink)
        self._lines: Callable[[list[bytes]], None] | None = getattr(sink, "lines_received", None)
        self._max = max_size
        self._parts: list[bytes] = []  # the incomplete line read so far
        self._size = 0
        self._oversized = False
        self._tail = b""  # the last bytes of an oversized line

    def feed(self, chunk: bytes) -> None:
        """Take bytes read from the peer: hand each complete line to the sink."""
        if self._oversized or len(chunk) > self._max:
            self._feed_lines(chunk)
            return
        # The common case: no line of this chunk can be too long. Split in C, even when a line
        # begun in an earlier chunk ends in this one (as most do while messages stream in).
        *lines, rest = chunk.split(b"\n")
        sink = self._sink
        if self._parts and lines:  # the line under way ends with this chunk's first piece
            if not sink.accepting:
                return
            self._take(lines[0])
            self._end_of_line()
            del lines[0]
        if self._lines is not None:
            self._lines(lines)
        else:
            handle = sink.message_received
            for line in lines:
                if not sink.accepting:
                    return
                handle(line)
        if rest and sink.accepting:
            self._take(rest)

    def finish(self) -> None:
        """The input ended: the last line, even without its newline, is handed over."""
        if self._parts or self._oversized:
            self._end_of_line()

    def _feed_lines(self, chunk: bytes) -> None:
        """:meth:`feed` when a line may be too long, or the one under way is: line by line."""
        start = 0
        sink = self._sink
        while sink.accepting:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._take(chunk[start:])
                return
            if self._parts or self._oversized or end - start > self._max:
                self._take(chunk[start:end])
                self._end_of_line()
            else:  # the common case: a whole line in this chunk
                sink.message_received(chunk[start:end])
            start = end + 1

    def _take(self, piece: bytes) -> None:
        """Keep ``piece`` of the line being read; of an oversized one, only its two ends."""
        if not piece:
            return
        self._size += len(piece)
        if self._oversized:
            self._tail = (self._tail + piece)[-HEAD_KEPT:]
        elif self._size > self._max:
            self._oversized = True
            whole = b"".join(self._parts) + piece
            self._parts = [whole[:HEAD_KEPT]]
            self._tail = whole[-HEAD_KEPT:]
        else:
            self._parts.append(piece)

    def _end_of_line(self) -> None:
        """A line is complete: forget it as the current one, then hand it over."""
        parts, size, oversized, tail = self._parts, self._size, self._oversized, self._tail
        self._parts, self._size, self._oversized, self._tail = [], 0, False, b""
        if oversized:
            self._sink.message_too_large(parts[0], tail, size)
            return
        # Keep at most two copies of a big message alive at once: its pieces and the line,
        # the line and its text, the text and its value.
        line = b"".join(parts)
        parts.clear()
        try:
            text = line.decode()
        except UnicodeDecodeError:
            self._sink.message_received(line)  # answered as not JSON
            return
        del line
        self._sink.message_received(text)


def take_message(sink: MessageSink, message: bytes, max_size: int) -> None:
    """Hand one whole message (a WebSocket frame, an HTTP body) to ``sink`` under the same size
    limit as a line."""
    if len(message) > max_size:
        sink.message_too_large(message[:HEAD_KEPT], message[-HEAD_KEPT:], len(message))
    else:
        sink.message_received(message)


# -- reading JSON strictly ---------------------------------------------------------------------------


class Unrepresentable(ValueError):
    """Valid JSON that Python cannot hold as it is: a number beyond the float range."""


class NotJson(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``, which JSON does not have."""


def _no_constant(name: str) -> Any:
    raise NotJson(f"{name} is not JSON")


_DIGITS = b"0123456789"
_LONG_NUMBER = re.compile(rb"\d{19}")


class FastReader(NamedTuple):
    """A C library's JSON parser as the fast path reads a line with it: ``loads(line)``, unless
    the line has at least ``check_from`` bytes and ``suspect(line)`` says the library could read
    it differently from the standard library; ``loads`` raises one of ``errors`` for a line it
    refuses. Either way the standard library reads the line instead, and its answer is the rule.
    Calling it reads a line so (``ValueError`` where the standard library is to read it)."""

    loads: Callable[[bytes], Any]
    errors: tuple[type[Exception], ...]
    check_from: int
    suspect: Callable[[bytes], bool]

    def __call__(self, line: bytes) -> Any:
        if len(line) >= self.check_from and self.suspect(line):
            raise ValueError("a line the standard library reads")
        try:
            return self.loads(line)
        except self.errors as exc:
            raise ValueError(str(exc)) from None


def _long_number(line: bytes) -> bool:
    """A line that may hold an integer beyond 64 bits (orjson reads one as a float)."""
    return len(line) - len(line.translate(None, _DIGITS)) >= 19 and bool(_LONG_NUMBER.search(line))


def orjson_reader() -> FastReader:
    """orjson's ``loads`` where it reads what the standard library reads."""
    try:
        import orjson  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError("json_backend='orjson' needs orjson: pip install orjson") from None
    return FastReader(orjson.loads, (ValueError,), 19, _long_number)


#: A line with this many brackets could be nested deeper than the standard library reads (it
#: refuses such a message): it goes to the standard library, whose answer is the rule.
_BRACKETS_READ_FAST = 256


def _deep(line: bytes) -> bool:
    """A line with enough brackets to be nested deeper than the standard library reads."""
    return line.count(b"[") + line.count(b"{") >= _BRACKETS_READ_FAST


def msgspec_reader() -> FastReader:
    """msgspec's JSON parser, untyped, where it reads what the standard library reads: integers
    of any size exactly; ``NaN``, numbers beyond the float range and invalid UTF-8 refused; the
    last of duplicate keys kept. It has no nesting limit: a line that could be nested deeply goes
    to the standard library."""
    try:
        import msgspec  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError("json_backend='msgspec' needs msgspec: pip install msgspec") from None
    errors: tuple[type[Exception], ...] = (msgspec.DecodeError, ValueError)
    return FastReader(msgspec.json.Decoder().decode, errors, _BRACKETS_READ_FAST, _deep)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise Unrepresentable(f"the number {text[:40]} is beyond the float range")
    return value


def decode_json(text: str) -> Any:
    """The value of one message's JSON text, strictly (see the module's docstring)."""
    try:
        try:
            value, end = _scan_once(text, 0)  # the C scanner straight away: the common case
        except StopIteration:
            end = -1
        if end == len(text):
            return value
        return _decoder.decode(text)  # white space around it, or not JSON: the full story
    except (json.JSONDecodeError, NotJson, Unrepresentable):
        raise
    except ValueError as exc:  # from int(): more digits than Python converts
        raise Unrepresentable(str(exc)) from None


_decoder = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)
_scan_once: Callable[[str, int], tuple[Any, int]] = getattr(_decoder, "scan_once")  # noqa: B009


def is_stray_text(line: bytes) -> bool:
    """A line that is not JSON and was never meant as a message: UTF-8 text that does not begin
    (after white space) with ``{``, ``[`` or ``"``, such as a stray ``print``. It is logged, not
    answered; anything else that is not JSON is a broken message, answered -32700."""
    stripped = line.lstrip()
    if not stripped or stripped[:1] in b'{["':
        return False
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


def noise_text(line: bytes, seen_message: bool) -> str:
    """What a line that is not JSON is: start-up output before the first message, or garbage."""
    shown = line[:200] + (b"..." if len(line) > 200 else b"")
    when = "between messages" if seen_message else "before its first message"
    return f"the peer wrote {len(line)} bytes that are not JSON {when} (a stray print?): {shown!r}"


# -- finding the id of a message that cannot be read -----------------------------------------------

_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_SCALAR = rb"(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|" + _STRING + rb"|null|true|false)"
_STRING_AT = re.compile(_STRING)
_VALUE_AT = re.compile(rb"\s*:\s*" + _SCALAR)
_NEXT_AT_TOP = re.compile(rb'["\[\]{}]')
_NEXT_INSIDE = re.compile(rb'["\]}]')
#: A key with a scalar value, inside a run of them.
_MEMBER = re.compile(rb"(" + _STRING + rb")\s*:\s*" + _SCALAR)
#: The scalar members that end a JSON object: the last bytes of ``..., "id": 7}``.
_MEMBERS_AT_END = re.compile(rb"((?:[,{]\s*" + _STRING + rb"\s*:\s*" + _SCALAR + rb"\s*)+)\}\s*\Z")


def find_id(head: bytes, tail: bytes) -> tuple[Any, bool]:
    """The id of a message known only by its first and last bytes (None when it cannot be
    found or is not a valid id), and whether it names a method (a request, not a response)."""
    members = _top_level_members(head)
    end = _MEMBERS_AT_END.search(tail)
    if end is not None:
        for key, value in _MEMBER.findall(end.group(1)):
            members.setdefault(key, value)
    request_id: Any = None
    raw = members.get(b'"id"')
    if raw is not None:
        try:
            request_id = json.loads(raw)
        except ValueError:
            request_id = None
        if not valid_id(request_id):
            request_id = None
    return request_id, b'"method"' in members


def _top_level_members(data: bytes) -> dict[bytes, bytes]:
    """The scalar members of the JSON object that ``data`` starts with (as far as it goes), raw
    key -> raw value; nested values are skipped without being parsed."""
    found: dict[bytes, bytes] = {}
    start = re.match(rb"\s*\{", data)
    if start is None:
        return found
    pos, depth = start.end(), 1
    while True:
        if depth == 1:
            token = _NEXT_AT_TOP.search(data, pos)
            if token is None:
                return found
            at = token.start()
            char = data[at : at + 1]
            if char == b'"':
                key = _STRING_AT.match(data, at)
                if key is None:
                    return found
                value = _VALUE_AT.match(data, key.end())
                if value is not None:
                    found[key.group()] = value.group(1)
                pos = key.end() if value is None else value.end()
                continue
            if char == b"}" or char == b"]":
                return found
            depth += 1
            pos = at + 1
        else:
            token = _NEXT_INSIDE.search(data, pos)
            if token is None:
                return found
            at = token.start()
            depth += data.count(b"[", pos, at) + data.count(b"{", pos, at)
            if data[at : at + 1] == b'"':
                string = _STRING_AT.match(data, at)
                if string is None:
                    return found
                pos = string.end()
            else:
                depth -= 1
                pos = at + 1
