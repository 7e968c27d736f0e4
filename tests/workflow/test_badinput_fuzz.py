"""The schema fuzzer, bounded and seeded: mutated corpus schemas give exit 2 with one-line
diagnostics, or a package that compiles and imports; never a traceback, a partial write, or
executed schema text. The long run is `make fuzz-schemas` (tests/support/fuzz_schemas.py)."""

from __future__ import annotations

import json
import random
import sys

import jinja2
from support import fuzz_schemas
from support.fuzz_schemas import (
    MARKER,
    PAYLOADS,
    fuzz,
    import_problem,
    report,
    smallest_schemas,
)

#: Seeds and sizes of the suite's runs: a few seconds each on the smallest releases.
RUNS = [(7, 16, 8), (2026, 16, 30)]  # (seed, mutations, how many of the smallest schemas)


def test_mutated_corpus_schemas_are_refused_in_one_line_or_generate_importable_packages(tmp_path):
    totals = {"refused": 0, "generated": 0}
    for seed, count, smallest in RUNS:
        work = tmp_path / f"seed{seed}"
        work.mkdir()
        tally = fuzz(count, seed, smallest_schemas(smallest), work)
        assert tally.runs == count
        assert tally.counts() == dict.fromkeys(fuzz_schemas.FAILURE_KINDS, 0), report(tally)
        assert tally.refused + tally.generated == count
        totals["refused"] += tally.refused
        totals["generated"] += tally.generated
    assert totals["refused"] and totals["generated"], totals  # both outcomes are exercised


def test_every_mutation_changes_the_schema():
    doc = json.loads(smallest_schemas(1)[0].read_text())
    for mutation in fuzz_schemas.MUTATIONS:
        for seed in range(5):
            mutated, what = mutation(random.Random(seed), json.loads(json.dumps(doc)))
            if "is taken" not in what:
                assert mutated != doc, (mutation.__name__, what)


def test_the_payloads_would_leave_their_marker_if_they_ran(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    jinja2.Environment().from_string(PAYLOADS[0]).render()
    assert (tmp_path / MARKER).exists()
    (tmp_path / MARKER).unlink()
    exec(compile('x = """' + PAYLOADS[2] + '"""', "<payload>", "exec"), {})  # noqa: S102 - closes the string, then runs
    assert (tmp_path / MARKER).exists()


def test_a_package_that_does_not_import_is_caught(tmp_path):
    package = tmp_path / "out" / "acp_bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text("Cyc = Cyc | str\n")
    assert "NameError" in import_problem(tmp_path / "out")
    (package / "models.py").write_text("def broken(:\n")
    assert "SyntaxError" in import_problem(tmp_path / "out")
    (package / "models.py").write_text("x = 1\n")
    assert import_problem(tmp_path / "out") == ""
    assert sys.executable  # the probe runs in a fresh interpreter of this Python
