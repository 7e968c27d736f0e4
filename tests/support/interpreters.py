"""The CPython interpreters of this machine, for the tests that run code under several."""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
from pathlib import Path


@functools.cache
def interpreters() -> dict[tuple[int, int], str]:
    """Every CPython 3.10+ found, by version: ``python3.X`` on PATH and under pyenv's versions folder."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    candidates = sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3.*")))
    candidates += [found for minor in range(10, 20) if (found := shutil.which(f"python3.{minor}"))]
    found: dict[tuple[int, int], str] = {}
    for path in candidates:
        named = re.fullmatch(r"python3\.(\d+)", Path(path).name)
        if not named or int(named[1]) < 10 or (3, int(named[1])) in found:
            continue  # not one, too old by its name, or that version found already: no process to start
        probe = subprocess.run([path, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                               text=True, check=False)
        if probe.returncode == 0:
            version = tuple(map(int, probe.stdout.split()))
            if version >= (3, 10):
                found.setdefault((version[0], version[1]), path)
    return found
