"""The schema fuzzer: generate from mutated copies of real corpus schemas and count what went wrong.

Each mutation takes a corpus schema and breaks it the way a hand-edited or newer schema might:
drops ``$defs``, gives nodes odd types, makes ``$ref`` cycles, puts non-strings in ``x-method``,
renames definitions, properties, methods, tags and titles to keywords, dunders, digits, quotes
(``\"\"\"``), Jinja delimiters (``{{ }}``, ``{% %}``) and unicode, and writes code into
descriptions. Every run must end in one of two ways:

* exit 2, every line of standard error one diagnostic (``error: ...``), and nothing written;
* exit 0 with a package whose every module passes ``py_compile`` and imports.

Counted as failures: a traceback (or an internal "generation failed" error), a partial write,
a diagnostic that is not one line, a package that exits 0 and does not import, and schema text
that was executed (each payload would create a marker file; none may appear).

``python tests/support/fuzz_schemas.py --count 500 --seed 1`` (``make fuzz-schemas``) prints the counts;
tests/test_badinput_fuzz.py runs a bounded, seeded version in the suite.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

HERE = Path(__file__).resolve().parent.parent  # tests/
CORPUS = HERE / "data" / "corpus"

#: The file every payload would create if schema text were ever run (by Jinja or by Python).
MARKER = "FUZZ_EXECUTED"

#: Names a user might give a definition, a property, a method or a tag.
ODD_NAMES = [
    "class", "None", "True", "import", "match", "case", "type", "_", "__", "__init__", "__all__",
    "__slots__", "__class__", "__init_subclass__", "__dict__", "_request", "_notify", "self", "cls",
    "str", "Any", "decode", "Agent", "1st", "123", "0", "a b", "a-b", "a/b", "a~b", "a.b", "",
    '"""', "'''", "\\", "{{ x }}", "{% raw %}", "{# c #}", "Ünïcödé", "名前", "ℌ", "A\u0301", "\u00a0",
    "x\ny", "x\x00y", "😀",
]

#: Schema text that would create MARKER if it were ever executed, in Jinja or in Python.
PAYLOADS = [
    "{{ cycler.__init__.__globals__.os.open('" + MARKER + "', 65) }}",
    "{% set x = cycler.__init__.__globals__.os.open('" + MARKER + "', 65) %}",
    '"""; __import__("os").open("' + MARKER + '", 65); """',
    "'''; __import__('os').open('" + MARKER + "', 65); '''",
    "\n__import__('os').open('" + MARKER + "', 65)\n#",
    "x'); __import__('os').open('" + MARKER + "', 65); ('",
    'x"); __import__("os").open("' + MARKER + '", 65); ("',
    "\\\n__import__('os').open('" + MARKER + "', 65)",
]

ODD_TYPES: list[Any] = ["text", 42, None, [], ["string", "integer"], ["null"], "null", {"a": 1}, True, ["object", "array"]]
ODD_VALUES: list[Any] = [42, None, [], {}, "", True, 1.5, ["a"], {"$ref": "#/$defs/Nope"}]


def corpus_schemas() -> list[Path]:
    return sorted(CORPUS.glob("*schema*.json"))


def smallest_schemas(count: int) -> list[Path]:
    return sorted(corpus_schemas(), key=lambda p: (p.stat().st_size, p.name))[:count]


# -- walking and rewriting a schema -----------------------------------------------------------


def nodes(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every object of the document with its path, in document order."""
    if isinstance(doc, dict):
        yield path, doc
        for key, value in doc.items():
            yield from nodes(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from nodes(value, (*path, index))


def schema_nodes(doc: dict[str, Any]) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Objects that are schemas (not the maps ``properties`` and ``$defs`` themselves)."""
    found = []
    for path, node in nodes(doc):
        if path and path[-1] in ("properties", "$defs"):
            continue
        found.append((path, node))
    return found


def rename_def(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``old`` renamed to ``new`` in ``$defs`` and in every ``$ref``."""
    old_ref, new_ref = f"#/$defs/{_escape(old)}", f"#/$defs/{_escape(new)}"

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (new_ref if k == "$ref" and v == old_ref else rewrite(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    doc = rewrite(doc)
    doc["$defs"] = {(new if k == old else k): v for k, v in doc["$defs"].items()}
    return doc


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def defs(doc: dict[str, Any]) -> dict[str, Any]:
    found = doc.get("$defs")
    return found if isinstance(found, dict) else {}


def method_defs(doc: dict[str, Any]) -> list[str]:
    return [name for name, node in defs(doc).items() if isinstance(node, dict) and "x-method" in node]


# -- the mutations ------------------------------------------------------------------------------

Mutation = Callable[[random.Random, dict[str, Any]], tuple[dict[str, Any], str]]


def drop_defs(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    names = sorted(defs(doc))
    if rng.random() < 0.2 or not names:
        doc.pop("$defs", None)
        return doc, "dropped every $def"
    gone = rng.sample(names, k=min(len(names), rng.randint(1, 3)))
    for name in gone:
        del doc["$defs"][name]
    return doc, f"dropped $defs {gone}"


def odd_type(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    path, node = rng.choice(schema_nodes(doc))
    value = rng.choice(ODD_TYPES)
    node["type"] = copy.deepcopy(value)
    return doc, f"type {value!r} at {path}"


def ref_cycle(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    names = sorted(defs(doc))
    a = rng.choice(names)
    b = rng.choice(names)
    ref_a, ref_b = {"$ref": f"#/$defs/{_escape(a)}"}, {"$ref": f"#/$defs/{_escape(b)}"}
    shape = rng.choice(["self", "pair", "allOf", "anyOf", "array", "property", "oneOf-object"])
    if shape == "self":
        doc["$defs"][a] = ref_a
    elif shape == "pair":
        doc["$defs"][a], doc["$defs"][b] = ref_b, ref_a
    elif shape == "allOf":
        doc["$defs"][a] = {"allOf": [ref_a]}
    elif shape == "anyOf":
        doc["$defs"][a] = {"anyOf": [ref_a, {"type": "string"}]}
    elif shape == "array":
        doc["$defs"][a] = {"anyOf": [{"type": "array", "items": ref_a}, {"type": "null"}]}
    elif shape == "property":
        doc["$defs"][a] = {"type": "object", "properties": {"self": ref_a, "other": ref_b}}
    else:
        doc["$defs"][a] = {"oneOf": [{"type": "object", "properties": {"x": ref_a}, "required": ["x"]}, ref_b]}
    return doc, f"$ref cycle ({shape}) through {a}, {b}"


def odd_x_method(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    name = rng.choice(method_defs(doc) or sorted(defs(doc)))
    value = rng.choice([*ODD_VALUES, *ODD_NAMES, *PAYLOADS])
    doc["$defs"][name]["x-method"] = copy.deepcopy(value)
    if rng.random() < 0.3:
        doc["$defs"][name]["x-side"] = copy.deepcopy(rng.choice([*ODD_VALUES, *ODD_NAMES]))
    return doc, f"x-method {value!r} on {name}"


def odd_def_name(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    names = sorted(defs(doc))
    preferred = method_defs(doc) if rng.random() < 0.5 else names
    old = rng.choice(preferred or names)
    new = rng.choice([*ODD_NAMES, *PAYLOADS])
    if new in doc["$defs"]:
        return doc, f"kept {old} (the name {new!r} is taken)"
    return rename_def(doc, old, new), f"$def {old} renamed {new!r}"


def odd_property_name(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    owners = [(path, node) for path, node in nodes(doc) if isinstance(node.get("properties"), dict) and node["properties"]]
    path, node = rng.choice(owners)
    old = rng.choice(sorted(node["properties"]))
    new = rng.choice([*ODD_NAMES, *PAYLOADS])
    node["properties"] = {(new if k == old else k): v for k, v in node["properties"].items()}
    if isinstance(node.get("required"), list):
        node["required"] = [new if r == old else r for r in node["required"]]
    return doc, f"property {old} at {path} renamed {new!r}"


def odd_text(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A payload or odd name as a description, title, tag (const), enum value or default."""
    path, node = rng.choice(schema_nodes(doc))
    key = rng.choice(["description", "title", "const", "enum", "default"])
    text = rng.choice([*PAYLOADS, *ODD_NAMES])
    node[key] = [text, rng.choice(ODD_NAMES)] if key == "enum" else text
    return doc, f"{key} {text!r} at {path}"


def odd_tag(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Rewrite every ``const`` tag of one union variant's properties."""
    tagged = [(path, node) for path, node in nodes(doc) if isinstance(node.get("const"), str)]
    if not tagged:
        return odd_text(rng, doc)
    path, node = rng.choice(tagged)
    node["const"] = rng.choice([*ODD_NAMES, *PAYLOADS])
    return doc, f"const {node['const']!r} at {path}"


def odd_value(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A keyword whose value has the wrong shape: required, properties, items, oneOf, discriminator."""
    path, node = rng.choice(schema_nodes(doc))
    key = rng.choice(["required", "properties", "items", "oneOf", "anyOf", "allOf", "discriminator",
                      "additionalProperties", "$ref", "enum", "minimum", "format"])
    value = rng.choice(ODD_VALUES)
    node[key] = copy.deepcopy(value)
    return doc, f"{key} = {value!r} at {path}"


def deep_nesting(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    depth = rng.choice([20, 40, 100, 300])
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = rng.choice([{"allOf": [node]}, {"type": "object", "properties": {"a": node}}, {"anyOf": [node]}])
    doc.setdefault("$defs", {})["Deep"] = node
    return doc, f"nested {depth} deep"


MUTATIONS: list[Mutation] = [
    drop_defs, odd_type, ref_cycle, odd_x_method, odd_def_name, odd_property_name, odd_text, odd_tag, odd_value,
    deep_nesting,
]


def mutate(rng: random.Random, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """One to three mutations of ``doc`` (a copy)."""
    doc = copy.deepcopy(doc)
    said = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutation = rng.choice(MUTATIONS)
        try:
            doc, what = mutation(rng, doc)
        except (IndexError, KeyError, TypeError, AttributeError, RecursionError):  # e.g. no $defs left, or too deep
            what = f"{mutation.__name__}: nothing to mutate"
        said.append(f"{mutation.__name__}: {what}")
    return doc, "; ".join(said)


# -- running acpgen on a mutant -------------------------------------------------------------------

_DIAGNOSTIC = re.compile(r"^(\S[^:]*: )?(error|warning): \S")


@dataclass
class Tally:
    runs: int = 0
    refused: int = 0  # exit 2 with one-line diagnostics and nothing written
    generated: int = 0  # exit 0 with a package that compiles and imports
    failures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def fail(self, kind: str, what: str) -> None:
        self.failures[kind] += 1
        self.examples.setdefault(kind, [])
        if len(self.examples[kind]) < 5:
            self.examples[kind].append(what)

    def counts(self) -> dict[str, int]:
        return {kind: self.failures.get(kind, 0) for kind in FAILURE_KINDS}


FAILURE_KINDS = (
    "tracebacks",  # an exception escaped, or the catch-all "generation failed" line
    "partial writes",  # exit 2 (or a crash) and something was written
    "not one line",  # exit 2 with a line on stderr that is not a diagnostic
    "exit 0 and do not import",  # a package that fails py_compile or import
    "executed schema text",  # a payload's marker file appeared
    "other exit status",  # neither 0 nor 2
)


def run_case(schema: dict[str, Any], work: Path, what: str, tally: Tally) -> None:
    """Generate from ``schema`` in ``work`` (the working folder) and record the outcome."""
    tally.runs += 1
    path = work / "schema.json"
    path.write_text(json.dumps(schema, ensure_ascii=rng_ascii(what)), encoding="utf-8")
    out = work / "out"
    from acpgen.cli import main

    result = CliRunner().invoke(main, ["generate", "--schema", str(path), "--out", str(out)], catch_exceptions=True)
    stderr = result.stderr
    label = f"{what} -> exit {result.exit_code}: {stderr.strip()[:300]}"
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    if crashed or "Traceback" in stderr or "generation failed" in stderr:
        tally.fail("tracebacks", f"{what} -> {type(result.exception).__name__}: {result.exception}" if crashed else label)
    elif result.exit_code == 2:
        lines = stderr.strip().splitlines()
        bad = [line for line in lines if not _DIAGNOSTIC.match(line)]
        if bad or not any(": error: " in f" {line}" or line.startswith("error: ") for line in lines):
            tally.fail("not one line", label)
        elif out.exists():
            tally.fail("partial writes", label)
        else:
            tally.refused += 1
    elif result.exit_code == 0:
        problem = import_problem(out)
        if problem:
            tally.fail("exit 0 and do not import", f"{what} -> {problem}")
        else:
            tally.generated += 1
    else:
        tally.fail("other exit status", label)
    if crashed and out.exists() and result.exit_code != 0:
        tally.fail("partial writes", label)
    if list(work.rglob(MARKER + "*")):
        tally.fail("executed schema text", what)


def rng_ascii(what: str) -> bool:
    """Write the schema as plain ASCII JSON (escapes) or as UTF-8, by the mutation's text."""
    return len(what) % 2 == 0


def import_problem(out: Path) -> str:
    """"" when every module of the package under ``out`` passes py_compile and imports."""
    packages = [p.parent for p in out.rglob("__init__.py")]
    if not packages:
        return "no package written"
    root = min(packages, key=lambda p: len(p.parts))
    name = ".".join(root.relative_to(out).parts)
    modules = sorted(p.stem for p in root.glob("*.py") if p.stem != "__init__")
    code = (
        "import importlib, py_compile, sys, tempfile, pathlib\n"
        f"root = pathlib.Path({str(root)!r})\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    for p in sorted(root.glob('*.py')):\n"
        "        py_compile.compile(str(p), cfile=tmp + '/x.pyc', doraise=True)\n"
        f"importlib.import_module({name!r})\n"
        f"for m in {modules!r}:\n"
        f"    importlib.import_module({name!r} + '.' + m)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], check=False, cwd=out, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return (run.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
    return ""


def fuzz(count: int, seed: int, schemas: list[Path], work_root: Path, progress: bool = False) -> Tally:
    """``count`` mutations from ``seed``, each of a schema picked from ``schemas``."""
    rng = random.Random(seed)
    documents: dict[Path, dict[str, Any]] = {}
    tally = Tally()
    previous = Path.cwd()
    try:
        for index in range(count):
            source = rng.choice(schemas)
            if source not in documents:
                documents[source] = json.loads(source.read_text(encoding="utf-8"))
            doc, what = mutate(rng, documents[source])
            work = work_root / f"case{index}"
            work.mkdir()
            os.chdir(work)  # a payload that ran would write its marker here
            run_case(doc, work, f"#{index} {source.name}: {what}", tally)
            if progress and (index + 1) % 25 == 0:
                print(f"  {index + 1} runs, {sum(tally.failures.values())} failures", file=sys.stderr, flush=True)
    finally:
        os.chdir(previous)
    return tally


def report(tally: Tally) -> str:
    lines = [(f"{tally.runs} mutated schemas: {tally.refused} refused with one-line diagnostics (exit 2), "
              f"{tally.generated} generated packages that compile and import (exit 0)")]
    for kind, number in tally.counts().items():
        lines.append(f"  {kind}: {number}")
    for kind, examples in sorted(tally.examples.items()):
        lines.append(f"examples of {kind}:")
        lines.extend(f"  {example}" for example in examples)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--smallest", type=int, default=0, help="use only the N smallest corpus schemas")
    args = parser.parse_args(argv)
    schemas = smallest_schemas(args.smallest) if args.smallest else corpus_schemas()
    with tempfile.TemporaryDirectory(prefix="acpgen-fuzz-") as tmp:
        tally = fuzz(args.count, args.seed, schemas, Path(tmp), progress=True)
    print(report(tally))
    return 1 if sum(tally.failures.values()) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
