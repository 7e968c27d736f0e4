"""``acpgen validate``: check a recorded transcript, message by message."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import click

from ..diagnostics import DiagnosticError
from ..validate import DIRECTIONS, TranscriptError, Validator
from .base import EXIT_DRIFT, EXIT_ERROR, fail, main, report, schema_option


@main.command(name="validate")
@schema_option
@click.argument("transcript", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
)
@click.option(
    "--direction",
    type=click.Choice(DIRECTIONS),
    default=None,
    help="The direction of messages that do not name one (a plain capture). [default: read from their methods]",
)
@click.option("--strict", is_flag=True, help="Report warnings as errors.")
@click.option(
    "--protocol-version",
    type=click.IntRange(0, 0xFFFF),
    default=None,
    help="The protocol version the transcript's initialize must ask for and answer "
    "(a v2 schema that states none: 2). [default: the one the schema states]",
)
@click.option(
    "--html",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the transcript as one self-contained HTML page (a sequence diagram) to this file.",
)
def validate_command(
    schema: Path | None,
    transcript: Path,
    fmt: str,
    direction: str | None,
    strict: bool,
    html: Path | None,
    protocol_version: int | None = None,
) -> None:
    """Check a recorded ACP transcript (NDJSON) against the schema, message by message."""
    try:
        validator = Validator(schema, protocol_version)
        found = validator.validate(transcript, direction=direction, strict=strict)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except TranscriptError as exc:
        fail(str(exc))
    if html is not None:
        try:
            write_whole(html, validator.page(found))
        except OSError as exc:
            fail(f"--html: cannot write {html}: {exc.strerror or exc}")
    click.echo(json.dumps(found.to_json(), indent=2) if fmt == "json" else found.text())
    sys.exit(EXIT_DRIFT if found.errors else 0)


def write_whole(path: Path, text: str) -> None:
    """Write ``path`` so that it is either complete or left as it was."""
    fd, temporary = tempfile.mkstemp(dir=path.resolve().parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
