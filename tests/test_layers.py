"""acpgen's layers, as the folder tree shows them: every import points down the chain, none forms
a cycle, and the runtime copied into generated packages imports nothing of acpgen.

    diagnostics -> schema -> model -> render -> output -> pipeline, diff -> validate -> config, cli -> the package's facade

A module may import from its own layer and the layers before it. Imports inside functions (the
lazy ones) count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import ROOT

PACKAGE = ROOT / "acpgen"

#: Layer of each top-level module or subpackage of acpgen, in chain order.
LAYERS = {
    "acpgen": 9,  # the package's __init__: the library's facade, importing the pipeline on first use
    "acpgen.version": 0,
    "acpgen.diagnostics": 0,
    "acpgen.schema": 1,
    "acpgen.model": 2,
    "acpgen.render": 3,
    "acpgen.output": 4,
    "acpgen.options": 5,  # what to generate, the checks of an option, the recipe the manifest records
    "acpgen.pipeline": 5,
    "acpgen.versioned": 5,  # one package of several protocol versions: a pipeline run per schema
    "acpgen.diff": 5,  # compares the models of two schemas, as generation renders one
    "acpgen.validate": 6,  # checks a transcript with a generated package
    "acpgen.config": 7,
    "acpgen.cli": 7,
    "acpgen.__main__": 8,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The layer of ``module``: its own entry, or its subpackage's (the package root is not one)."""
    name = module
    while name not in LAYERS or (name == "acpgen" and module != "acpgen"):
        name = name.rpartition(".")[0]
        assert name, f"{module} is in no layer: add it to LAYERS"
    return LAYERS[name]


def imports_of(path: Path, source: str | None = None) -> set[str]:
    """The acpgen modules ``path`` (or ``source`` as if it were at ``path``) imports, resolved to
    absolute names."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "acpgen")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "acpgen":
                continue
            for alias in node.names:  # ``from . import x`` may import a submodule
                candidate = f"{target}.{alias.name}"
                is_module = (ROOT / Path(*candidate.split("."))).with_suffix(".py").is_file() or (
                    ROOT / Path(*candidate.split("."))
                ).is_dir()
                found.add(candidate if is_module else target)
    return found


def generator_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "runtime" not in p.relative_to(PACKAGE).parts)


def upward_imports(path: Path, source: str | None = None) -> list[str]:
    here = module_name(path)
    return sorted(f"{here} imports {t}" for t in imports_of(path, source) if layer_of(t) > layer_of(here))


def find_cycles(graph: dict[str, set[str]]) -> list[str]:
    cycles: list[str] = []
    state: dict[str, int] = {}  # 1: on the path being followed, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if target == node or target not in graph:
                continue
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_import_points_down_the_chain():
    assert [line for path in generator_modules() for line in upward_imports(path)] == []


def test_no_import_cycles():
    assert find_cycles({module_name(p): imports_of(p) for p in generator_modules()}) == []


def test_the_runtime_imports_nothing_of_acpgen():
    runtime = sorted((PACKAGE / "runtime").glob("*.py"))
    assert {p.name for p in runtime} >= {"_codec.py", "_rpc.py", "pair.py"}
    for path in runtime:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "acpgen" for a in node.names), path
            elif isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and (node.module or "").split(".")[0] != "acpgen", (path, node.module)


def test_the_runtime_imports_one_way_down_its_layers():
    """Each runtime module with a layer imports only those before it in the table of modules, and
    of its own layer or a lower one: the codec, the connection (up to the facade ``_rpc``), the
    router of versions, the remote transports on top of them; the session states and the stub
    servers on top of all, beside their version's own modules."""
    from acpgen.render.modules import MODULES, Layer

    chain = sorted((m for m in MODULES if m.layer is not None), key=lambda m: m.layer.value)
    layers = [m.stem for m in chain]
    assert [m.name for m in chain] == [m.name for m in MODULES if m.layer is not None]  # the table lists them in order
    runtime = PACKAGE / "runtime"
    modules = sorted(p.name for p in runtime.glob("*.py") if p.name not in (
        "__init__.py", "_checks.py", "_session_page.py", "pair.py", "inspect.py", "conformance.py"))
    assert modules == sorted(f"{name}.py" for name in layers)
    own = {"agent", "client", "methods", "models", "_stub_data", "_session_data"}  # a version's modules, beside the stubs
    for index, module in enumerate(chain):
        below = set(layers[:index]) | (own if module.layer in (Layer.SESSION, Layer.STUBS) else set())
        tree = ast.parse((runtime / module.name).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}
        assert imported <= below, (module.stem, sorted(imported - below))


def test_the_checks_see_a_wrong_import_and_a_cycle():
    """Both checks can fail: a model module importing the renderer lazily, and a cycle."""
    spec = PACKAGE / "model" / "spec.py"
    lazy = spec.read_text() + "\n\ndef late():\n    from ..render.environment import make_environment\n"
    assert upward_imports(spec, lazy) == ["acpgen.model.spec imports acpgen.render.environment"]
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == ["a -> b -> c -> a"]


def shared_runtime_strays(sources: dict[str, str]) -> list[str]:
    """The imports of a shared runtime module (``sources``: name -> text) of a package module
    that is not shared: ``_rpc imports agent``."""
    from acpgen.render.modules import MODULES

    shared = {m.stem for m in MODULES if m.shared}
    strays = []
    for name, text in sorted(sources.items()):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                strays += [f"{name.removesuffix('.py')} imports {t}" for t in targets if t not in shared]
    return strays


def test_the_shared_runtime_imports_only_the_shared_runtime():
    """A package of several versions has one copy of the shared runtime, at its root: none of it
    may import a module each version has for itself (``agent``, ``models``, ``pair``)."""
    from acpgen.render.modules import Source, module_names

    runtime = PACKAGE / "runtime"
    sources = {name: (runtime / name).read_text() for name in module_names(source=Source.RUNTIME, shared=True)}
    assert shared_runtime_strays(sources) == []
    for name in module_names(source=Source.RUNTIME, shared=False):  # these import a version's modules: not shared
        assert shared_runtime_strays({name: (runtime / name).read_text()}) != [], name
    assert shared_runtime_strays({"_rpc.py": "from .agent import Agent\nfrom . import _codec, models\n"}) == [
        "_rpc imports agent", "_rpc imports models"]
