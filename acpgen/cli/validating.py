"""``acpgen validate``: check a recorded transcript, message by message."""

from __future__ import annotations

import json
import sys
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
def validate_command(schema: Path | None, transcript: Path, fmt: str, direction: str | None, strict: bool) -> None:
    """Check a recorded ACP transcript (NDJSON) against the schema, message by message."""
    try:
        found = Validator(schema).validate(transcript, direction=direction, strict=strict)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except TranscriptError as exc:
        fail(str(exc))
    click.echo(json.dumps(found.to_json(), indent=2) if fmt == "json" else found.text())
    sys.exit(EXIT_DRIFT if found.errors else 0)
