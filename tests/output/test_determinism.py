"""Same inputs, same bytes: whatever the hash seed, working folder, locale, time zone or way of giving options."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import mini_schema, tree


def run_acpgen(args, cwd, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "TZ", "PYTHONHASHSEED"))}
    result = subprocess.run([sys.executable, "-m", "acpgen", *args], cwd=cwd, env={**environment, **env},
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_identical_bytes_across_seeds_folders_locales_and_option_sources(tmp_path):
    # The small schema keeps this quick; test_generate.py does the same for the bundled one.
    doc = mini_schema()
    doc["$defs"]["ForkRequest"] = {"type": "object", "description": "**UNSTABLE**", "properties": {},
                                   "x-method": "session/fork", "x-side": "agent"}
    (tmp_path / "acp.json").write_text(json.dumps(doc))
    first, second = tmp_path / "alpha-cwd", tmp_path / "beta-cwd" / "deeper-cwd"
    first.mkdir()
    second.mkdir(parents=True)
    options = ["--schema", "../acp.json", "--package", "app._vendor.acp", "--side", "agent", "--stable-only"]
    run_acpgen(["generate", "--out", "out", *options], first, PYTHONHASHSEED="0", LC_ALL="C", TZ="UTC")
    # The same options from [tool.acpgen], run from a folder below the pyproject.toml: the project
    # folder (the pyproject.toml's) holds the output and sits beside the schema, as alpha-cwd does.
    (second.parent / "pyproject.toml").write_text(
        '[tool.acpgen]\nschema = "../acp.json"\nout = "out"\npackage = "app._vendor.acp"\nside = "agent"\n'
        "stable-only = true\n"
    )
    run_acpgen(["generate"], second, PYTHONHASHSEED="1", LC_ALL="C.UTF-8", TZ="Asia/Kolkata")
    a, b = tree(first / "out"), tree(second.parent / "out")
    assert "app/_vendor/acp/acpgen-manifest.json" in a and all(rel.startswith("app/_vendor/acp/") for rel in a)
    assert a == b
    for rel, data in a.items():
        text = data.decode()
        assert str(tmp_path) not in text, rel
        assert "alpha-cwd" not in text and "beta-cwd" not in text, rel
    header = a["app/_vendor/acp/methods.py"].decode().splitlines()[:2]
    assert header[1] == (
        "# Do not edit: regenerate with"
        " `acpgen generate --schema ../acp.json --out out --package app._vendor.acp --side agent --stable-only`."
    )
    assert "session/fork" not in a["app/_vendor/acp/methods.py"].decode()
