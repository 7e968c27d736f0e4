"""The models module reads as declarations: each class its docstring, its fields with their docs
and its constructor's keywords, each union, literal set and alias its line. Its codec,
``_models_codec``, reads in one pass: each class's methods, then its decoder and the tables it
reads, each union's decoder and the classes its constructors check; every helper prefix it uses
is explained at its top."""

from __future__ import annotations

import ast
import re

import pytest
from support import BINDINGS

MODELS = (BINDINGS / "acp_bindings" / "models.py").read_text()
CODEC = (BINDINGS / "acp_bindings" / "_models_codec.py").read_text()
TOP = CODEC.split("\n_new = object.__new__", 1)[0]
MODELS_TREE, CODEC_TREE = ast.parse(MODELS), ast.parse(CODEC)
#: The names of the codec's machinery: none is in models.py.
MACHINERY = re.compile(r"_(?:du?|K|O|L|P|V|T)_|_VARIANTS$|_EXTENDS$|_new$|_ABSENT$|_check_variants?$")


def _top_level_names(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.append(node.targets[0].id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            names.append(ast.unparse(node.value.func) + ":" + ast.unparse(node.value.args[0]) if node.value.args else "")
    return names


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _declared_init(item: ast.stmt) -> ast.FunctionDef | None:
    """The ``__init__`` a class declares for type checkers: ``if TYPE_CHECKING:`` and a signature
    with no body; None for anything else."""
    if not (isinstance(item, ast.If) and ast.unparse(item.test) == "TYPE_CHECKING" and not item.orelse):
        return None
    [function] = item.body if len(item.body) == 1 else [None]
    if isinstance(function, ast.FunctionDef) and function.name == "__init__":
        return function if [ast.unparse(s) for s in function.body] == ["..."] else None
    return None


def declarations_only(text: str | ast.Module) -> list[str]:
    """What in a models module is not a declaration: a function, a call, a decoder's or a table's
    name, a method with a body; each named by its line."""
    found = []
    for node in (ast.parse(text) if isinstance(text, str) else text).body:
        where = f"line {node.lineno}"
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            continue
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if _is_docstring(item) or isinstance(item, ast.AnnAssign):
                    continue
                if isinstance(item, ast.Assign) and [ast.unparse(t) for t in item.targets] == ["__slots__"]:
                    continue
                if _declared_init(item) is not None:
                    continue  # its signature, for type checkers; the codec attaches its code
                found.append(f"{where}: {node.name} has {ast.unparse(item).splitlines()[0]}")
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            calls = [n for n in ast.walk(node.value) if isinstance(n, ast.Call)]
            if MACHINERY.match(name) or calls:
                found.append(f"{where}: {name} = {ast.unparse(node.value)[:60]}")
        else:
            found.append(f"{where}: {ast.unparse(node).splitlines()[0]}")
    return found


def test_models_module_holds_declarations_only():
    assert declarations_only(MODELS_TREE) == []
    assert MODELS.rstrip().endswith("from . import _models_codec  # noqa: F401")  # the codec, wired in at the end
    classes = [n for n in MODELS_TREE.body if isinstance(n, ast.ClassDef)]
    assert len(classes) > 200
    assert len(MODELS.splitlines()) / len(classes) < 45  # ~154 a class when the codec was inline


def test_the_declarations_check_finds_the_codec_where_it_is():
    assert declarations_only(MODELS.replace("\n__all__ = [", "\n_K_X = frozenset({'a'})\n__all__ = [", 1))
    body = "        ) -> None: ...\n"
    assert body in MODELS
    assert declarations_only(MODELS.replace(body, "        ) -> None:\n            self.x = 1\n", 1))
    found = declarations_only(CODEC_TREE)
    assert any("def _d_PromptRequest" in f for f in found) and any("_codec.attach" in f for f in found)


def _signature(function: ast.FunctionDef) -> list[tuple[str, str, str | None]]:
    args = function.args
    defaults = [None] * (len(args.kwonlyargs) - len(args.kw_defaults)) + list(args.kw_defaults)
    return [
        (a.arg, ast.unparse(a.annotation) if a.annotation else "", ast.unparse(d) if d is not None else None)
        for a, d in zip(args.kwonlyargs, defaults, strict=True)
    ]


def test_each_declared_constructor_is_the_one_the_codec_attaches():
    """The keywords models.py declares (what a type checker reads) are those of the __init__ the
    codec attaches, but ``_nulls`` (the codec's own)."""
    codec = {n.name: n for n in CODEC_TREE.body if isinstance(n, ast.FunctionDef)}
    checked = 0
    for node in MODELS_TREE.body:
        if isinstance(node, ast.ClassDef):
            declared = next(f for f in map(_declared_init, node.body) if f is not None)
            written = codec[f"_init_{node.name}"]
            assert _signature(declared) == [s for s in _signature(written) if s[0] != "_nulls"], node.name
            assert ast.unparse(written.args.args[0].annotation) == node.name  # type: ignore[arg-type]
            checked += 1
    assert checked > 200


def test_each_class_is_followed_by_its_methods_its_decoder_its_tables_and_their_attaching():
    names = _top_level_names(CODEC_TREE)
    classes = [n for n in MODELS_TREE.body if isinstance(n, ast.ClassDef)]
    for cls in (c.name for c in classes):
        at = names.index(f"_init_{cls}")
        assert names[at : at + 3] == [f"_init_{cls}", f"_to_json_{cls}", f"_json_text_{cls}"], cls
        mine = {f"_d_{cls}", f"_du_{cls}", f"_K_{cls}", f"_O_{cls}"}
        count = len([m for m in mine if m in names])
        following = names[at + 3 : at + 3 + count]
        assert set(following) <= mine and f"_d_{cls}" in following and f"_K_{cls}" in following, (cls, following)
        assert names[at + 3 + count] == f"_codec.attach:{cls}", cls
    assert not [n for n in names if n.startswith("_from_json_")]  # attach makes each from_json


def test_each_union_is_followed_by_its_decoder_and_its_variant_classes():
    names = _top_level_names(MODELS_TREE)
    codec = _top_level_names(CODEC_TREE)
    for union in ("SessionUpdate", "ContentBlock", "ToolCallContent"):
        assert union in names and f"_d_{union}" not in names
        at = codec.index(f"_d_{union}")
        rest = codec[at + 1 : codec.index(f"_V_{union}")]
        assert all(n.startswith(f"_d_{union}__") for n in rest), rest


def test_every_prefix_the_codec_uses_is_explained_at_its_top():
    used = set(re.findall(r"^(?:def )?(_(?:du?|K|O|L|P|V|T)_)", CODEC, re.MULTILINE))
    assert used == {"_d_", "_du_", "_K_", "_O_", "_L_", "_V_", "_T_"}  # no _P_: the schema has no pattern
    legend = re.findall(r"^#   (_\w+)", TOP, re.MULTILINE)  # the name each line of the legend explains
    assert [p for p in used if not any(name.startswith(p) for name in legend)] == []
    assert "_d_list_T" in TOP and "_d_map_T" in TOP and "_P_d_" in TOP
    assert "(_init_X,\n# _to_json_X, _json_text_X)" in TOP
    assert "@dataclass(init=False, repr=False, eq=False, match_args=False,\n# kw_only=True) only records the fields" in MODELS


def test_attached_methods_are_named_as_the_class_s_own():
    from acp_bindings import models

    init = models.PromptRequest.__init__
    assert init.__qualname__ == "PromptRequest.__init__" and init.__module__.endswith("_models_codec")
    assert models.PromptRequest.from_json.__qualname__ == "PromptRequest.from_json"
    assert models.PromptRequest.from_json({"sessionId": "s", "prompt": []}) == models.PromptRequest(session_id="s", prompt=[])
    assert models.Text.from_json({"type": "text", "text": "hi"}) == models.Text(text="hi")
    with pytest.raises(TypeError, match=r"^PromptRequest\.__init__\(\) missing 1 required keyword-only argument: 'prompt'"):
        models.PromptRequest(session_id="s")  # type: ignore[call-arg]
