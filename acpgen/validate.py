"""``acpgen validate``: the inspector's checks, offline, over a recorded transcript.

The checks are the generated package's own (``_checks.py``, the module ``inspect`` runs): the
package is generated for the schema into a temporary folder and imported from there. Params and
results are also validated with jsonschema against the schema's ``$defs`` (``source: schema``),
which finds what the generated models (``source: model``) do not check or stop short of: a
model decodes a value up to its first problem. A jsonschema finding at or above a pointer where
the model already found the value wrong only restates it, more vaguely (``not valid under any of
the given schemas``), and is left out; each problem is reported once.

A transcript is NDJSON, one message a line, in one of these forms:

* the inspector's: ``{"time": 0.25, "direction": "client-to-agent", "message": {...}}``
  (``time`` is optional; a line the inspector could not parse is ``"raw": "..."``);
* a JSON-RPC message with a ``direction`` field added: ``{"direction": "agent-to-client",
  "jsonrpc": "2.0", ...}``;
* a plain capture of one direction: bare JSON-RPC messages. Their direction is ``--direction``,
  or else read from the first message whose method only one side handles. The other direction
  is not in it, so requests and responses that would be there are not missed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from .options import Options
from .output.reuse import Reuse
from .pipeline import generate
from .render.modules import BY_NAME, Layer, module_names
from .schema.bundled import bundled_schema, bundled_schema_sha256
from .schema.loader import LoadedSchema, load_schema
from .schema.protocol import protocol_version as version_of

DIRECTIONS = ("client-to-agent", "agent-to-client")
_RECEIVER = {"client-to-agent": "agent", "agent-to-client": "client"}
_MESSAGE_TEXT = 200  # characters of a jsonschema message kept
#: The model's findings that a value is wrong (the kinds jsonschema finds too).
_VALUE_KINDS = frozenset({"invalid-params", "invalid-result"})


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


_parse = json.JSONDecoder(parse_constant=_not_json).decode


class TranscriptError(Exception):
    """The transcript cannot be read: one line saying what and where."""


@dataclass(frozen=True)
class Record:
    """One message of a transcript: where it is, which way it went, and the message."""

    line: int
    direction: str | None  # None until a plain capture's direction is known
    message: Any = None
    raw: str | None = None  # a line that is not JSON, as it was
    time: float | None = None  # the inspector's "time", when the line has one


@dataclass(frozen=True)
class Finding:
    line: int
    source: str  # "model" (the generated package's checks) or "schema" (jsonschema)
    problem: Any  # a _checks.Problem

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "source": self.source, **self.problem.to_json()}


@dataclass
class Report:
    transcript: str
    messages: int = 0
    findings: list[Finding] = field(default_factory=list)
    methods: dict[str, Counter[str]] = field(default_factory=dict)  # method -> messages, problems
    records: list[Record] = field(default_factory=list, repr=False)  # what the page shows

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.problem.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.problem.severity == "warning")

    @property
    def kinds(self) -> dict[str, int]:
        return dict(sorted(Counter(f.problem.kind for f in self.findings).items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript,
            "messages": self.messages,
            "errors": self.errors,
            "warnings": self.warnings,
            "problems": [f.to_json() for f in self.findings],
            "methods": {m: dict(c) for m, c in sorted(self.methods.items())},
            "kinds": self.kinds,
        }

    def text(self) -> str:
        lines = [f"{self.transcript}:{f.line}: {f.problem.format()}" for f in self.findings]
        if lines:
            lines.append("")
        rows = [("METHOD", "MESSAGES", "PROBLEMS")]
        rows += [(m, str(c["messages"]), str(c["problems"])) for m, c in sorted(self.methods.items())]
        lines += _table(rows)
        if self.findings:
            lines.append("")
            lines += _table([("PROBLEM", "COUNT"), *((k, str(n)) for k, n in self.kinds.items())])
        lines.append("")
        lines.append(
            f"{self.transcript}: {self.messages} messages, {self.errors} errors, {self.warnings} warnings"
        )
        return "\n".join(lines)


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _restates(pointer: str, wrong_at: Sequence[str]) -> bool:
    """Whether a jsonschema finding at ``pointer`` is about a value the model already found wrong
    at ``pointer`` or below it (``/params/update`` above ``/params/update/sessionUpdate``)."""
    return any(at == pointer or at.startswith(pointer + "/") for at in wrong_at)


# -- reading transcripts -----------------------------------------------------------------------


def read_transcript(path: Path) -> list[Record]:
    """Every message of the transcript at ``path``, a plain capture's without a direction;
    raises :class:`TranscriptError`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{path.name}: not UTF-8 text (byte {exc.start})") from None
    return list(_records(path.name, text))


def _records(name: str, text: str) -> Iterator[Record]:
    for number, line in enumerate(text.split("\n"), 1):  # JSON text may hold U+2028
        if not line.strip():
            continue
        try:
            value = _parse(line)
        except ValueError:
            yield Record(number, None, raw=line)
            continue
        if not isinstance(value, dict) or "direction" not in value:
            yield Record(number, None, value)
            continue
        direction = value["direction"]
        if direction not in DIRECTIONS:
            raise TranscriptError(
                f"{name}:{number}: direction {json.dumps(direction)} is not one of {', '.join(DIRECTIONS)}"
            )
        at = value.get("time")
        at = float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else None
        if "message" in value:
            yield Record(number, direction, value["message"], time=at)
        elif isinstance(value.get("raw"), str):
            yield Record(number, direction, raw=value["raw"], time=at)
        else:
            yield Record(number, direction, {k: v for k, v in value.items() if k != "direction"})


# -- validating --------------------------------------------------------------------------------


#: The generated packages imported so far, by schema sha256: a schema is generated and imported
#: once per process. Their folders are removed when the process ends.
_PACKAGES: dict[str, tuple[tempfile.TemporaryDirectory[str], dict[str, ModuleType]]] = {}
_MODULES = ("_codec", "methods", "models", "_checks", "_session_page")


def _dotted(name: str) -> str:
    """Where the module ``name`` is in a package: ``_runtime.wire._codec``, or ``models``."""
    module = BY_NAME.get(f"{name}.py")
    return name if module is None else module.dotted


def generated_modules(
    schema: LoadedSchema, schema_path: Path | None, protocol_version: int | None = None
) -> dict[str, ModuleType]:
    """The modules of the package generated for ``schema`` (of ``protocol_version``; None: the one
    the schema states), imported from a temporary folder."""
    key = f"{schema.sha256[:16]}_v{version_of(schema.document, schema_path, protocol_version)}"
    if key in _PACKAGES:
        return _PACKAGES[key][1]
    package = f"_acpgen_validate_{key}"
    reuse = Reuse(validated_schemas=frozenset({schema.sha256}))
    only = {f"{m}.py" for m in _MODULES} | set(module_names(layer=Layer.CODEC))  # _codec imports its parts
    options = Options(schema=schema_path, package=package, protocol_version=protocol_version)
    files = generate(options, reuse, only=only).files
    folder = tempfile.TemporaryDirectory(prefix="acpgen-validate-")
    root = Path(folder.name) / package
    root.mkdir()
    for relative, text in files.items():
        target = root / relative.removeprefix(f"{package}/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (root / "__init__.py").write_text("", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(package, root / "__init__.py", submodule_search_locations=[str(root)])
    assert spec is not None and spec.loader is not None
    sys.modules[package] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[package])
    modules = {name: importlib.import_module(f"{package}.{_dotted(name)}") for name in _MODULES}
    _PACKAGES[key] = (folder, modules)
    return modules


class Validator:
    """The generated package's checker plus jsonschema, for one schema."""

    def __init__(self, schema_path: Path | None = None, protocol_version: int | None = None) -> None:
        shipped = frozenset({bundled_schema_sha256()})  # acpgen's tests validate that one
        self.schema: LoadedSchema = load_schema(schema_path or bundled_schema(), validated=shipped)
        self._modules = generated_modules(self.schema, schema_path, protocol_version)
        self._root = {k: v for k, v in self.schema.document.items() if k in ("$schema", "$id", "$defs")}
        self._cls: Any = validator_for(self.schema.document, default=jsonschema.Draft202012Validator)
        self._validators: dict[str, Any] = {}

    def checker(self, strict: bool = False, one_way: bool = False) -> Any:
        methods, codec = self._modules["methods"], self._modules["_codec"]
        return self._modules["_checks"].Checker(
            methods.METHODS,
            self._modules["models"],
            codec.decode_salvaging,
            codec.DecodeError,
            methods.CAPABILITIES,
            methods.PROTOCOL_VERSION,
            strict=strict,
            one_way=one_way,
        )

    def direction_of(self, message: Any) -> str | None:
        """The direction ``message`` must have travelled, when its method says so."""
        method = message.get("method") if isinstance(message, dict) else None
        sides = {m.side for m in self._modules["methods"].METHODS if m.method == method}
        if len(sides) != 1 or sides & {"protocol"}:
            return None
        side = sides.pop()
        return next((d for d, receiver in _RECEIVER.items() if receiver == side), None)

    def read(self, path: Path, direction: str | None = None) -> tuple[list[Record], bool]:
        """The transcript's records, each with its direction (see the module docstring), and
        whether it is a plain capture (of one direction)."""
        records = read_transcript(path)
        missing = [r for r in records if r.direction is None]
        if not missing:
            return records, False
        if direction is None:
            direction = next((d for r in missing if (d := self.direction_of(r.message))), None)
        if direction is None:
            raise TranscriptError(
                f"{path.name}:{missing[0].line}: a message without a direction, and no method"
                " says which way it went; give --direction"
            )
        return [r if r.direction else Record(r.line, direction, r.message, r.raw, r.time) for r in records], True

    def validate(self, path: Path, *, direction: str | None = None, strict: bool = False) -> Report:
        records, one_way = self.read(path, direction)
        checker = self.checker(strict, one_way)
        report = Report(transcript=path.name, records=records)
        request_lines: dict[tuple[str, str], int] = {}  # (direction, id) -> line of the request
        for record in records:
            assert record.direction is not None
            if record.raw is not None:
                checked = checker.check_line(record.direction, record.raw)
            else:
                checked = checker.check(record.direction, record.message)
            report.messages += 1
            counts = report.methods.setdefault(checked.method or "?", Counter())
            counts["messages"] += 1
            counts["problems"] += len(checked.problems)
            report.findings += [Finding(record.line, "model", p) for p in checked.problems]
            if checked.kind == "request":
                request_lines[(record.direction, json.dumps(checked.id))] = record.line
            wrong_at = [p.pointer for p in checked.problems if p.kind in _VALUE_KINDS]
            for at, type_name, value in checked.typed:
                for problem in self._schema_problems(checked, at, type_name, value):
                    if _restates(problem.pointer, wrong_at):
                        continue
                    counts["problems"] += 1
                    report.findings.append(Finding(record.line, "schema", problem))
        for problem in checker.finish():
            line = request_lines.get((problem.direction, json.dumps(problem.id)), 0)
            report.methods.setdefault(problem.method or "?", Counter())["problems"] += 1
            report.findings.append(Finding(line, "model", problem))
        return report

    def page(self, report: Report) -> str:
        """The report as one self-contained HTML page: a sequence diagram of the transcript's
        messages, each problem on the message it was found in (``_session_page``)."""
        page = self._modules["_session_page"]
        by_line: dict[int, list[dict[str, Any]]] = {}
        for finding in report.findings:
            by_line.setdefault(finding.line, []).append(finding.to_json())
        entries = [
            page.Entry(r.line, r.direction, r.time, r.message, r.raw, tuple(by_line.get(r.line, ())))
            for r in report.records
        ]
        return str(page.render(entries, title=report.transcript, source="acpgen validate", loose=by_line.get(0, [])))

    def _schema_problems(self, checked: Any, at: str, type_name: str, value: Any) -> list[Any]:
        if any(p.kind == "repaired" and p.pointer.startswith(at) for p in checked.problems):
            # the model reported (as warnings) what x-deserialize-* let a peer repair: hold the
            # value to the schema as a lenient peer reads it, so the repairs are not errors again
            codec = self._modules["_codec"]
            repaired, _ = codec.decode_salvaging(getattr(self._modules["models"], type_name), value)
            value = codec.encode(repaired)
        validator = self._validators.get(type_name)
        if validator is None:
            schema = {**self._root, "$ref": f"#/$defs/{type_name}"}
            validator = self._validators[type_name] = self._cls(schema)
        problems = []
        for error in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
            pointer = at + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)
            message = error.message if len(error.message) <= _MESSAGE_TEXT else error.message[:_MESSAGE_TEXT] + "..."
            problems.append(
                self._modules["_checks"].Problem(
                    severity="error",
                    kind="schema",
                    direction=checked.direction,
                    method=checked.method,
                    id=checked.id if checked.has_id else None,
                    has_id=checked.has_id,
                    pointer=pointer,
                    message=f"{type_name} (jsonschema): {message}",
                )
            )
        return problems
