"""``mypy --strict`` as the tests run it, with one cache per test process.

Each run with a cache of its own spends seconds reading typeshed's standard library, and a test that
checks a user module against :data:`support.BINDINGS` would check the whole package again. With
one cache, the standard library and a package several tests check are analysed once per process
(per pytest-xdist worker: each has a folder of its own, so no two processes write one cache), and
mypy rechecks whatever a test changed: a module is reused only when its text hashes the same.

Runs that change an option mypy keeps in the cache (a plugin, another configuration) name a cache of
their own, so they do not throw the shared one away.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_CACHES = Path(tempfile.mkdtemp(prefix="acpgen-mypy-"))
atexit.register(shutil.rmtree, _CACHES, ignore_errors=True)


def mypy_strict(
    *args: str | os.PathLike[str], cwd: Path, env: dict[str, str] | None = None, cache: str = "shared",
) -> subprocess.CompletedProcess[str]:
    """``mypy --strict --python-version 3.10`` over ``args`` (files, ``-p`` packages, more flags)
    in ``cwd``, with the process's cache named ``cache``; its output is captured as text."""
    command = [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--cache-dir", str(cache_dir(cache))]
    return subprocess.run([*command, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
                          check=False)


def cache_dir(cache: str = "shared") -> Path:
    """The folder of the process's cache named ``cache``, for a helper that runs mypy itself."""
    return _CACHES / cache
