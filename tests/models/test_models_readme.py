"""The README's "Generated models" section: its example runs against a freshly generated package."""

from __future__ import annotations

import re
import subprocess
import sys

from support.runtime import ROOT, child_env

README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Generated models") : README.index("### Leniency")]
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION, re.DOTALL)


def test_the_models_example_runs():
    assert len(BLOCKS) == 1 and "encode_text(note)" in BLOCKS[0]
    done = subprocess.run([sys.executable, "-c", BLOCKS[0]], check=False, env=child_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
