"""The output does not depend on the Python that runs acpgen: the oldest and the newest interpreter
on the machine generate the same bytes, for the bundled schema and for one whose properties are
named like keywords and soft keywords (``type`` became a soft keyword in 3.12)."""

from __future__ import annotations

import json
import keyword
import os
import subprocess
from pathlib import Path

import jinja2
import markupsafe
from support import BUNDLED, ROOT, mini_schema
from support.interpreters import interpreters

from acpgen.model.naming import ESCAPED_KEYWORDS, python_identifier
from acpgen.pipeline import Options, generate

#: Generates in a child interpreter and prints {path: text} as JSON. Meta-schema validation (the
#: one step that needs compiled dependencies) is skipped as done, so only pure-Python jinja2 is
#: needed; the schema was validated by the run in this process.
SNIPPET = """
import hashlib, json, sys
from pathlib import Path
from acpgen.pipeline import Options, generate
from acpgen.output.reuse import Reuse
schema = Path(sys.argv[1])
reuse = Reuse(validated_schemas=frozenset({hashlib.sha256(schema.read_bytes()).hexdigest()}))
print(json.dumps(generate(Options(schema=schema), reuse).files))
"""


def _generate_with(python: str, schema: Path, tmp_path: Path) -> dict[str, str]:
    deps = tmp_path / f"deps-{Path(python).name}"
    if not deps.exists():
        deps.mkdir()
        for module in (jinja2, markupsafe):  # pure Python; markupsafe falls back from its C speedups
            os.symlink(Path(module.__file__).parent, deps / module.__name__)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(deps)]), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([python, "-c", SNIPPET, str(schema)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _keyword_schema(tmp_path: Path) -> Path:
    doc = mini_schema()
    names = ["type", "match", "case", "_", "class", "lambda", "async", "await", "print", "None"]
    doc["$defs"]["LogNotification"]["properties"].update({name: {"type": "string"} for name in names})
    path = tmp_path / "keywords.json"
    path.write_text(json.dumps(doc))
    return path


def test_oldest_and_newest_python_generate_the_same_bytes(tmp_path):
    pythons = interpreters()
    oldest, newest = min(pythons), max(pythons)
    assert oldest == (3, 10), f"no Python 3.10 found: {sorted(pythons)}"
    assert newest >= (3, 12), f"no Python with `type` as a soft keyword found: {sorted(pythons)}"
    for schema in (BUNDLED, _keyword_schema(tmp_path)):
        here = generate(Options(schema=schema)).files
        for version in (oldest, newest):
            assert _generate_with(pythons[version], schema, tmp_path) == here, (schema.name, version)


def test_keywords_of_the_running_python_are_all_escaped_and_type_is_not():
    assert set(keyword.kwlist) <= ESCAPED_KEYWORDS
    assert set(keyword.softkwlist) - ESCAPED_KEYWORDS <= {"type"}
    assert python_identifier("type") == "type" and python_identifier("match") == "match_"
    assert python_identifier("case") == "case_" and python_identifier("class") == "class_"


def test_the_committed_bindings_use_type_as_a_field_name():
    # A `type` field is legal in every supported Python: the 3.10 and 3.13 output above keep it.
    models = (ROOT / "generated" / "acp_bindings" / "models.py").read_text()
    assert "    type: " in models and "type_:" not in models
