"""Every JSON literal the docs' code decodes is of the draft its page generates from: each
``Type.from_json(LITERAL)`` and ``decode(Type, LITERAL)`` of the Python blocks of the README and
the guides and of ``examples/`` (the reference pages show the codec itself, unknown properties
kept included), decoded with the class the code names, in the
package the page is written for: strictly (no repair), and with no property the class does not
define, at any depth. A literal of another draft (the TypeScript SDK's v2 ``PromptResponse`` with
its ``messageId``, say) keeps a property the draft's class lacks, and fails.

The literals are read from the code, not run: a name is followed to what the block assigns it
(a dict, a loop over literal dicts: each is a candidate), and a value the code computes (a
session id from the params, an f-string) stands as a string.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from support import BINDINGS, ROOT, docs
from support.versions import guide_versions_package, imported_from

COMPUTED = "computed"  # what a value the code computes stands as
#: The package the code of each page is written for, by the name it imports: the bundled schema's,
#: or the "Two protocol versions" guide's ``both`` (the bundled schema and v1.7.0's v2 draft).
PACKAGES = {"acp_bindings": lambda: BINDINGS, "both": guide_versions_package}


class Literal(NamedTuple):
    where: str  # page:line (the line in the page)
    type_path: tuple[str, ...]  # candidate dotted paths of the type, e.g. ("both.v2.models.PromptResponse",)
    values: list[Any]  # its candidate JSON values


def _sources() -> list[tuple[str, int, str]]:
    """(page or file, line of its first code line, code) of every Python block and example."""
    found = [(b.page, b.line + 1, b.text) for page in docs.pages() for b in docs.all_blocks(page)
             if b.language == "python" and (page == "README.md" or page.startswith("guides/"))]
    return found + [(f"examples/{p.name}", 1, p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]


class _Reader:
    """What a block's names stand for in one scope: the block's imports, and the values assigned to
    each name in the function (or at the top level) the code is in."""

    def __init__(self, tree: ast.Module, scope: ast.AST) -> None:
        self.modules: dict[str, str] = {}  # local name -> dotted path
        self.assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.modules[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                items = node.iter.elts if isinstance(node.iter, (ast.Tuple, ast.List)) else [node.iter]
                self.assigned.setdefault(node.target.id, []).extend(items)

    def paths(self, node: ast.expr) -> list[str]:
        """The dotted paths an expression naming a module or a type may stand for."""
        if isinstance(node, ast.Name):
            if node.id in self.modules:
                return [self.modules[node.id]]
            return [p for value in self.assigned.get(node.id, []) for p in self.paths(value)]
        if isinstance(node, ast.Attribute):
            return [f"{p}.{node.attr}" for p in self.paths(node.value)]
        if isinstance(node, ast.IfExp):
            return [*self.paths(node.body), *self.paths(node.orelse)]
        return []

    def values(self, node: ast.expr, seen: frozenset[str] = frozenset()) -> list[Any]:
        """The JSON values an expression may stand for."""
        if isinstance(node, ast.Constant):
            return [node.value]
        if isinstance(node, ast.Dict):
            if not all(isinstance(k, ast.Constant) for k in node.keys):  # a ** spread: computed
                return [COMPUTED]
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            return [dict(zip(keys, combo)) for combo in itertools.product(*(self.values(v, seen) for v in node.values))]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [list(combo) for combo in itertools.product(*(self.values(v, seen) for v in node.elts))]
        if isinstance(node, ast.Name) and node.id in self.assigned and node.id not in seen:
            return [v for value in self.assigned[node.id] for v in self.values(value, seen | {node.id})]
        return [COMPUTED]


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """The block's functions, each a scope of its own, and its top level (its other statements)."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    yield from functions
    yield ast.Module(body=[s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef))], type_ignores=[])


def _literals() -> list[Literal]:
    found = []
    for where, first, code in _sources():
        tree = ast.parse(code)
        for scope in _scopes(tree):
            reader = _Reader(tree, scope)
            calls = [n for n in ast.walk(scope) if isinstance(n, ast.Call)]
            for node in calls:
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "from_json" and len(node.args) == 1:
                    kind, data = func.value, node.args[0]
                elif (isinstance(func, (ast.Name, ast.Attribute))
                      and (reader.paths(func) or [""])[0].endswith(".decode") and len(node.args) == 2):
                    kind, data = node.args
                else:
                    continue
                found.append(Literal(f"{where}:{first + node.lineno - 1}", tuple(reader.paths(kind)),
                                     reader.values(data)))
    return found


LITERALS = _literals()


def _package(root: str) -> contextlib.AbstractContextManager[None]:
    return imported_from(root, PACKAGES[root]())


def _resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _unknown(value: Any, at: str = "") -> list[str]:
    """The JSON pointers of the properties a decoded value kept that its class does not define."""
    if hasattr(value, "_extra") and hasattr(value, "_fields"):  # a generated class (its codec's Model)
        found = [f"{at}/{key}" for key in (value._extra or {})]
        return found + [p for name, field in value._fields() for p in _unknown(field, f"{at}/{name}")]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _unknown(item, f"{at}/{i}")]
    return []


def _decode_strictly(path: str, data: Any) -> list[str]:
    """Decode ``data`` as the type at ``path`` (``package.models.Name``) in no lenient way; the
    pointers of the properties it does not define."""
    tp = _resolve(path)
    codec = importlib.import_module(f"{path.split('.')[0]}._runtime.wire._codec")
    return _unknown(codec.decode(tp, data, strict=True))


def test_the_reader_finds_the_literals_of_both_versions():
    """The two-versions guide's agents and client decode literals in each version (the guides of
    one version build their values with constructors and builders)."""
    paths = [path for literal in LITERALS for path in literal.type_path]
    assert sum(".v1." in p for p in paths) >= 5 and sum(".v2." in p for p in paths) >= 5, LITERALS
    assert all(literal.type_path and literal.values for literal in LITERALS), LITERALS


@pytest.mark.parametrize("literal", LITERALS, ids=[literal.where for literal in LITERALS])
def test_every_json_literal_of_the_docs_decodes_with_the_package_of_its_page(literal):
    (root,) = {path.split(".")[0] for path in literal.type_path}
    with _package(root):
        for path in literal.type_path:
            for data in literal.values:
                assert _decode_strictly(path, data) == [], (literal.where, path, data)


def test_a_literal_of_another_draft_is_told_by_the_property_its_class_lacks():
    """The v2 ``PromptResponse`` of the TypeScript SDK's draft and a v2 ``initialize`` answer
    decoded as v1's are told by what their class lacks; a v2 chunk without the ``messageId`` this
    draft requires is a decode error."""
    with _package("both"):
        assert _decode_strictly("both.v2.models.PromptResponse", {"messageId": "m1"}) == ["/messageId"]
        answer = {"protocolVersion": 1, "info": {"name": "mine", "version": "2"}}
        assert _decode_strictly("both.v1.models.InitializeResponse", answer) == ["/info"]
        codec = importlib.import_module("both._runtime.wire._codec")
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
        with pytest.raises(codec.DecodeError):
            _decode_strictly("both.v2.models.UpdateSessionNotification", {"sessionId": "s", "update": chunk})


def test_the_initialize_params_of_the_guides_client_of_both_versions_are_each_versions():
    """``both_client.py``'s ``initialize(version)`` returns v1's params and then v2's: with the
    version the ``versions`` module adds, each decodes as its version's ``InitializeRequest``."""
    block = docs.blocks("guides/protocol-versions.md", "python",
                        "Serving and connecting several versions: the `versions` module")[1]
    tree = ast.parse(block.text)
    (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "initialize"]
    returns = sorted((n for n in ast.walk(function) if isinstance(n, ast.Return)), key=lambda n: n.lineno)
    returned = [n.value for n in returns if n.value is not None]
    assert len(returned) == 2, ast.unparse(function)
    reader = _Reader(tree, function)
    with _package("both"):
        for version, value in zip((1, 2), returned):
            for params in reader.values(value):
                params = {"protocolVersion": version, **params}
                assert _decode_strictly(f"both.v{version}.models.InitializeRequest", params) == [], params
