"""The models module reads in one pass: each class is followed by its decoder and the tables its
decoder reads, each union by its decoder and the classes its constructors check, and every helper
prefix the module uses is explained at its top."""

from __future__ import annotations

import ast
import re

from support import BINDINGS

TEXT = (BINDINGS / "acp_bindings" / "models.py").read_text()
TOP = TEXT.split("\n_new = object.__new__", 1)[0]


def _top_level_names() -> list[str]:
    names = []
    for node in ast.parse(TEXT).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.append(node.targets[0].id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


def test_each_class_is_followed_by_its_decoder_and_its_tables():
    names = _top_level_names()
    classes = [n for n in names if f"class {n}(Model):" in TEXT]
    assert len(classes) > 200
    for name in classes:
        at = names.index(name)
        mine = {f"_d_{name}", f"_du_{name}", f"_K_{name}", f"_O_{name}"}
        following = names[at + 1 : at + 1 + len([m for m in mine if m in names])]
        assert set(following) <= mine and f"_d_{name}" in following and f"_K_{name}" in following, (name, following)


def test_each_union_is_followed_by_its_decoder_and_its_variant_classes():
    names = _top_level_names()
    for union in ("SessionUpdate", "ContentBlock", "ToolCallContent"):
        at = names.index(union)
        assert names[at + 1] == f"_d_{union}"
        rest = names[at + 2 : names.index(f"_V_{union}")]
        assert all(n.startswith(f"_d_{union}__") for n in rest), rest


def test_every_prefix_the_module_uses_is_explained_at_its_top():
    used = set(re.findall(r"^(?:def )?(_(?:du?|K|O|L|P|V|T)_)", TEXT, re.MULTILINE))
    assert used == {"_d_", "_du_", "_K_", "_O_", "_L_", "_V_", "_T_"}  # no _P_: the schema has no pattern
    legend = re.findall(r"^#   (_\w+)", TOP, re.MULTILINE)  # the name each line of the legend explains
    assert [p for p in used if not any(name.startswith(p) for name in legend)] == []
    assert "_d_list_T" in TOP and "_d_map_T" in TOP and "_P_d_" in TOP
    assert "@dataclass(init=False, repr=False, eq=False, match_args=False,\n# kw_only=True) only records the fields" in TOP
