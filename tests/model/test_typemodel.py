"""The type model on Spec.types: names and refs, as other parts of acpgen use them (pruning)."""

from __future__ import annotations

import dataclasses
import importlib
import sys

from acpgen.pipeline import Header, Options, build_spec
from acpgen.render.environment import make_environment, runtime_source
from acpgen.render.modules import BY_NAME, Layer, module_names, room_inits


def _closure(spec, roots: set[str]) -> set[str]:
    by_name = {t.name: t for t in spec.types}
    keep: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo.extend(by_name[name].refs)
    return keep


def test_every_def_is_a_type_with_sorted_refs():
    spec, _ = build_spec(Options())
    names = {t.name for t in spec.types}
    assert len([t for t in spec.types if t.pointer == "/$defs/" + t.name]) == 239  # the rest: lifted unions
    for t in spec.types:
        assert list(t.refs) == sorted(set(t.refs)) and set(t.refs) <= names and t.name not in t.refs
    by_name = {t.name: t for t in spec.types}
    assert by_name["SessionNotification"].refs == ("SessionId", "SessionUpdate")
    assert "ContentChunk" in by_name["SessionUpdate"].refs  # what the schema refers to, even if flattened
    for method in spec.methods:
        assert method.params_type in names


def test_types_reachable_from_kept_methods_render_a_working_package(tmp_path):
    spec, _ = build_spec(Options())
    keep = _closure(spec, {"SessionNotification", "PromptRequest", "PromptResponse"})
    assert "InitializeRequest" not in keep and "ContentBlock" in keep
    pruned = dataclasses.replace(spec, types=tuple(t for t in spec.types if t.name in keep))
    env = make_environment()
    header = Header("acpgen", "schema.json", "0" * 64, "acpgen generate")
    package = tmp_path / "pruned_bindings"
    package.mkdir()
    (package / "__init__.py").write_text("")
    codec = [BY_NAME[name].path for name in module_names(layer=Layer.CODEC)]
    for path in (*room_inits(codec), *codec):  # the codec, in its room of the private runtime
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(runtime_source(path))
    for module in ("models.py", "_models_codec.py"):  # the declarations and their codec
        text = env.get_template(f"{module}.jinja").render(spec=pruned, header=header, package="pruned_bindings")
        (package / module).write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        models = importlib.import_module("pruned_bindings.models")
    finally:
        sys.path.remove(str(tmp_path))
    assert not hasattr(models, "InitializeRequest")
    note = {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": []}}
    assert models.SessionNotification.from_json(note).to_json() == note
