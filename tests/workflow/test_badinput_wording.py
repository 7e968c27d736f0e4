"""What the generated package says to its readers reads as English."""

from __future__ import annotations

import re

import pytest

from acpgen.pipeline import Options, generate


def test_the_article_before_agent_is_an():
    files = generate(Options(), only={"agent.py", "client.py"}).files
    text = "\n".join(files.values())
    assert "Handles the methods an agent calls on a client." in text
    assert "Handles the methods a client calls on an agent." in text
    assert not re.search(r"\ba agent\b", text, re.IGNORECASE)


@pytest.mark.parametrize("width", [50, 80, 100])
def test_help_never_cuts_a_command_description_short_nor_names_an_out_argument(width):
    from click.testing import CliRunner

    from acpgen.cli import main

    result = CliRunner().invoke(main, ["--help"], prog_name="acpgen", terminal_width=width)
    assert result.exit_code == 0
    assert "..." not in result.output.replace("COMMAND [ARGS]...", "")
    listing = " ".join(result.output.split("Commands:")[1].split())
    for name, command in main.commands.items():
        first_paragraph = " ".join((command.help or "").split("\n\n")[0].split())
        assert f"{name} {first_paragraph}" in listing
    for command in ((), ("methods",), ("generate",), ("check",)):
        text = CliRunner().invoke(main, [*command, "--help"], prog_name="acpgen", terminal_width=width).output
        assert not re.search(r"\bOUT\b", text), (command, text)
