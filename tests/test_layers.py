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


RUNTIME = PACKAGE / "runtime"


def runtime_files() -> list[Path]:
    """The runtime's source files: the package root's (``pair.py``) and its rooms' (``_runtime/...``)."""
    return sorted(p for p in RUNTIME.rglob("*.py") if "__pycache__" not in p.parts)


def runtime_imports(rel: str, source: str) -> set[str]:
    """The package modules the runtime module at ``rel`` (its path in a package: ``pair.py``,
    ``_runtime/stubs/_listen.py``) imports by relative imports, as dotted names from the package's
    root (``_runtime.remote._asgi``, ``models``). ``from <package> import x`` counts as an import of
    the module ``x`` where the package has one of that name (a runtime module, or a version's own)."""
    package = rel.split("/")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            assert node.level <= len(package) + 1, f"{rel} imports from outside its package: {'.' * node.level}"
            base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            if node.module is None or (RUNTIME / "/".join(base)).is_dir():
                found.update(".".join([*base, a.name]) for a in node.names)
            else:
                found.add(".".join(base))
    return found


def room_strays(rel: str, source: str) -> list[str]:
    """The imports of the runtime module at ``rel`` that run against the direction of the rooms
    (``acpgen.render.modules.ROOMS``): a room's module may import its own room and the rooms
    before it, and of the package's root only the modules its room names (``Room.beside``)."""
    from acpgen.render.modules import ROOMS, RUNTIME_PACKAGE

    order = {room.name: index for index, room in enumerate(ROOMS)}
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != RUNTIME_PACKAGE:
        return []  # a module at the package's root: the public face, on top of the rooms
    mine = order[parts[1]]
    strays = []
    for target in sorted(runtime_imports(rel, source)):
        where = target.split(".")
        if where[0] != RUNTIME_PACKAGE:
            if where[0] not in ROOMS[mine].beside:
                strays.append(f"{rel} imports {target} (the package's root)")
        elif len(where) < 2 or where[1] not in order:
            strays.append(f"{rel} imports {target} (in no room)")
        elif order[where[1]] > mine:
            strays.append(f"{rel} imports {target} (a room after {parts[1]})")
    return strays


def test_the_runtime_imports_nothing_of_acpgen():
    runtime = runtime_files()
    assert {p.name for p in runtime} >= {"_codec.py", "_rpc.py", "pair.py"}
    for path in runtime:
        tree = ast.parse(path.read_text(), str(path))
        depth = len(path.relative_to(RUNTIME).parts)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "acpgen" for a in node.names), path
            elif isinstance(node, ast.ImportFrom):
                assert node.level <= depth and (node.module or "").split(".")[0] != "acpgen", (path, node.module)


def test_every_runtime_file_is_a_row_of_the_table_or_a_room():
    """A module of ``acpgen/runtime/`` is copied into packages by its row of the table of modules,
    at the path it has here; the private runtime package and each room have an ``__init__`` whose
    docstring says what the room holds and what it may import."""
    from acpgen.render.modules import BY_PATH, ROOM_BY_NAME, RUNTIME_PACKAGE, Source

    for path in runtime_files():
        rel = path.relative_to(RUNTIME).as_posix()
        if rel == "__init__.py":
            continue
        if path.name == "__init__.py":
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            room = path.parent.name
            assert rel.startswith(f"{RUNTIME_PACKAGE}/") and "may import" in doc, rel
            assert room == RUNTIME_PACKAGE or room in ROOM_BY_NAME, f"{rel}: a room ROOMS does not list"
            continue
        assert rel in BY_PATH and BY_PATH[rel].source is Source.RUNTIME, f"{rel}: no row of MODULES has this path"
    for module in BY_PATH.values():
        if module.source is Source.RUNTIME:
            assert (RUNTIME / module.path).is_file(), module.path
            if module.room is not None:
                assert (RUNTIME / RUNTIME_PACKAGE / module.room / "__init__.py").is_file(), module.room


def test_the_runtime_imports_one_way_down_its_rooms():
    """The rooms of the runtime (``ROOMS``: the wire, tracing, transports, the connection, remote
    serving, versions, the inspector, session state, the kits, the stubs) import one way: each its
    own and those before it, and only the rooms beside a version import its modules."""
    assert [line for path in runtime_files() for line in room_strays(path.relative_to(RUNTIME).as_posix(), path.read_text())] == []


def test_the_room_check_sees_an_import_against_the_rooms():
    """It can fail: the connection importing a stub's module, the version's models, a room that
    does not exist; a stub may import the wire and its version's models."""
    source = "from ..stubs._listen import serve\nfrom ... import models\nfrom ..nowhere import x\nfrom .. import wire\n"
    assert room_strays("_runtime/connection/_rpc.py", source) == [
        "_runtime/connection/_rpc.py imports _runtime.nowhere (in no room)",
        "_runtime/connection/_rpc.py imports _runtime.stubs._listen (a room after connection)",
        "_runtime/connection/_rpc.py imports models (the package's root)",
    ]
    assert room_strays("_runtime/stubs/_listen.py", "from ... import models\nfrom ..wire._codec import decode\n") == []


def test_the_runtime_imports_one_way_down_its_layers():
    """Each runtime module with a layer imports only those before it in the table of modules, and
    of its own layer or a lower one: the codec, the connection (up to the facade ``_rpc``), the
    router of versions, the remote transports on top of them; the session states and the stub
    servers on top of all, beside their version's own modules."""
    from acpgen.render.modules import MODULES, Layer

    chain = sorted((m for m in MODULES if m.layer is not None), key=lambda m: m.layer.value)
    layers = [m.dotted for m in chain]
    assert [m.name for m in chain] == [m.name for m in MODULES if m.layer is not None]  # the table lists them in order
    unlayered = ("__init__.py", "_checks.py", "_session_page.py", "pair.py", "inspect.py", "conformance.py")
    modules = sorted(p.relative_to(RUNTIME).as_posix() for p in runtime_files() if p.name not in unlayered)
    assert modules == sorted(m.path for m in chain)
    own = {"agent", "client", "methods", "models", "_stub_data", "_session_data"}  # a version's modules, beside the stubs
    for index, module in enumerate(chain):
        below = set(layers[:index]) | (own if module.layer in (Layer.SESSION, Layer.STUBS) else set())
        imported = runtime_imports(module.path, (RUNTIME / module.path).read_text())
        assert imported <= below, (module.stem, sorted(imported - below))


def test_the_checks_see_a_wrong_import_and_a_cycle():
    """Both checks can fail: a model module importing the renderer lazily, and a cycle."""
    spec = PACKAGE / "model" / "spec.py"
    lazy = spec.read_text() + "\n\ndef late():\n    from ..render.environment import make_environment\n"
    assert upward_imports(spec, lazy) == ["acpgen.model.spec imports acpgen.render.environment"]
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == ["a -> b -> c -> a"]


def shared_runtime_strays(sources: dict[str, str]) -> list[str]:
    """The imports of a shared runtime module (``sources``: its path in a package -> text) of a
    package module that is not shared: ``_rpc imports agent``."""
    from acpgen.render.modules import MODULES

    shared = {m.dotted for m in MODULES if m.shared}
    strays = []
    for rel, text in sorted(sources.items()):
        name = rel.rsplit("/", 1)[-1].removesuffix(".py")
        strays += [f"{name} imports {t}" for t in sorted(runtime_imports(rel, text)) if t not in shared]
    return strays


def test_the_shared_runtime_imports_only_the_shared_runtime():
    """A package of several versions has one copy of the shared runtime, at its root: none of it
    may import a module each version has for itself (``agent``, ``models``, ``pair``)."""
    from acpgen.render.modules import BY_NAME, Source, module_names

    paths = [BY_NAME[name].path for name in module_names(source=Source.RUNTIME, shared=True)]
    assert shared_runtime_strays({rel: (RUNTIME / rel).read_text() for rel in paths}) == []
    for name in module_names(source=Source.RUNTIME, shared=False):  # these import a version's modules: not shared
        rel = BY_NAME[name].path
        assert shared_runtime_strays({rel: (RUNTIME / rel).read_text()}) != [], name
    rpc, codec = BY_NAME["_rpc.py"], BY_NAME["_codec.py"]
    up = "." * (rpc.path.count("/") + 1)  # from _rpc's package to the package's root
    wrong = f"from {up}agent import Agent\nfrom {up} import models\nfrom {up}{codec.dotted.rpartition('.')[0]} import _codec\n"
    assert shared_runtime_strays({rpc.path: wrong}) == ["_rpc imports agent", "_rpc imports models"]


def test_the_development_guide_lists_the_rooms_in_their_order():
    from acpgen.render.modules import ROOMS

    text = (ROOT / "docs" / "development.md").read_text().split("## The runtime's rooms", 1)[1].split("\n## ", 1)[0]
    listed = [line.split("`")[1] for line in text.splitlines() if line.startswith("| `")]
    assert listed == [room.name for room in ROOMS]
