"""The command group and what every command shares: exit statuses, one-line errors, options."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..diagnostics import Diagnostic
from ..version import __version__

EXIT_DRIFT = 1
EXIT_ERROR = 2

F = TypeVar("F", bound=Callable[..., object])


def report(diagnostics: tuple[Diagnostic, ...]) -> None:
    for diagnostic in diagnostics:
        click.echo(diagnostic.format(), err=True)


def schema_option(func: F) -> F:
    return click.option(
        "--schema",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="ACP JSON Schema file. Default: [tool.acpgen] schema, else the bundled one (ACP v0.12.2, unstable).",
    )(func)


#: click >= 8.2 raises this for a bare ``acpgen``; its message is the whole help text.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Command(click.Command):
    """A command whose line in ``acpgen --help`` is its docstring's first paragraph, never cut short
    (click would cut it to fit the terminal, ending it with "...")."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return " ".join((self.short_help or self.help or "").split("\n\n")[0].split())


#: The module of each command (in this package), imported when the command is run or listed:
#: a command imports what it uses and nothing another command does (``check`` no diff engine).
COMMANDS = {
    "check": "checking",
    "diff": "diffing",
    "generate": "generating",
    "methods": "generating",
    "validate": "validating",
}


class _Group(click.Group):
    """Usage errors as one line (``error: ...``, exit 2) instead of click's usage block; each
    command's module imported on first use (:data:`COMMANDS`)."""

    command_class = _Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")  # registers it
        return super().get_command(ctx, cmd_name)

    def main(  # type: ignore[override, unused-ignore]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            fail(one_line(exc.format_message()))
        except click.Abort:
            fail("aborted")
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acpgen")
def main() -> None:
    """Generate Python bindings for the Agent Client Protocol from its JSON Schema."""


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def one_line(text: object) -> str:
    return " ".join(str(text).split())
