"""What the generated package says to its readers reads as English."""

from __future__ import annotations

import re

from acpgen.generate import Options, generate


def test_the_article_before_agent_is_an():
    files = generate(Options(), only={"agent.py", "client.py"}).files
    text = "\n".join(files.values())
    assert "Handles the methods an agent calls on a client." in text
    assert "Handles the methods a client calls on an agent." in text
    assert not re.search(r"\ba agent\b", text, re.IGNORECASE)
