"""Put generated files on disk: every file is written to a temporary name, then renamed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_output(out: Path, files: dict[str, str]) -> int:
    """Write ``files`` below ``out``; return how many changed. Unchanged files are not touched."""
    changed = 0
    for rel, text in files.items():
        target = out / rel
        data = text.encode("utf-8")
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        changed += 1
    return changed
