"""The "Generated models" reference: its examples run against a freshly generated package."""

from __future__ import annotations

import subprocess
import sys

from support import docs
from support.runtime import child_env

BLOCKS = [block.text for block in docs.blocks("reference/models.md", "python", "Generated models")]
(NAMES_FILE,) = docs.blocks("reference/models.md", "json", "Pinning names: the names file")


def test_the_models_example_runs():
    assert len(BLOCKS) == 1 and "encode_text(note)" in BLOCKS[0]
    done = subprocess.run([sys.executable, "-c", BLOCKS[0]], check=False, env=child_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_names_file_example_pins_the_names_it_gives(tmp_path):
    from acpgen.pipeline import Options, generate

    names = tmp_path / "names.json"
    names.write_text(NAMES_FILE.text)
    files = generate(Options(names=names)).files
    models = files["acp_bindings/models.py"]
    assert "class TextBlock(" in models and "class AgentMessageChunk(" in models
    assert "class Text(" not in models
