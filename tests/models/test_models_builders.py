"""The builders module and the variant checks: every builder makes its variant with the tag, the
value round-trips through its union, and a value that is not a variant is refused by name."""

from __future__ import annotations

import copy
import inspect
from typing import Any

import pytest
from acp_bindings import _models_codec as codec
from acp_bindings import builders, decode, encode, models
from support import bundled_document
from support.schema_instances import _build, minimal

from acpgen.pipeline import Options, build_spec

SPEC = build_spec(Options())[0]
CLASSES = {c.name: c for c in SPEC.classes}
DOCUMENT = bundled_document()


def _only_variant(pointer: str) -> Any:
    """The ``$def`` a variant's pointer starts in, with every choice on the way cut down to the
    variant (so the union's shared properties are built too)."""
    tokens = pointer.strip("/").split("/")
    root = copy.deepcopy(DOCUMENT["$defs"][tokens[1]])
    node: Any = root
    for key, index in zip(tokens[2::2], tokens[3::2]):
        node[key] = [node[key][int(index)]]
        node = node[key][0]
    return root


def _instance(cls_name: str) -> Any:
    """A decoded value of the class: a minimal instance of its schema node, with its tags."""
    cls = CLASSES[cls_name]
    if not cls.union:
        return decode(getattr(models, cls_name), minimal(cls_name))
    union = DOCUMENT["$defs"][cls.union]  # its shared properties, then the variant's own
    data = _build({"type": "object", "properties": union.get("properties", {}), "required": union.get("required", [])}, 0)
    data.update(_build(_only_variant(cls.pointer), 0))
    for tag in cls.tags:
        data[tag.wire_name] = tag.value
    return decode(getattr(models, cls_name), data)


BUILDERS = [
    (group.namespace, h.name, h.cls, group.union) for group in SPEC.builder_groups for h in group.builders
]


def test_the_everyday_unions_have_builders_named_after_their_tags():
    names = {(ns, name) for ns, name, _, _ in BUILDERS}
    for expected in [
        ("content_block", "text"),
        ("content_block", "resource_link"),
        ("session_update", "agent_message_chunk"),
        ("session_update", "tool_call"),
        ("session_update", "tool_call_update"),
        ("session_update", "plan"),
        ("tool_call_content", "diff"),
        ("request_permission_outcome", "selected"),
        ("mcp_server", "http"),
        ("mcp_server", "stdio"),
    ]:
        assert expected in names
    assert builders.content_block.text("hi").to_json() == {"type": "text", "text": "hi"}


@pytest.mark.parametrize(("namespace", "name", "cls_name", "union"), BUILDERS, ids=[f"{n}.{h}" for n, h, _, _ in BUILDERS])
def test_every_builder_makes_its_variant_which_round_trips_with_its_tag(namespace, name, cls_name, union):
    value = _instance(cls_name)
    builder = getattr(getattr(builders, namespace), name)
    args, kwargs = [], {}
    for parameter in inspect.signature(builder).parameters.values():
        field = getattr(value, parameter.name)
        if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            args.append(field)
        else:
            kwargs[parameter.name] = field
    built = builder(*args, **kwargs)
    assert type(built) is getattr(models, cls_name) and built == value
    wire = encode(built)
    for tag in CLASSES[cls_name].tags:
        assert wire[tag.wire_name] == tag.value
    assert decode(getattr(models, union), wire) == built


HINTS = list(SPEC.variant_hints)


@pytest.mark.parametrize(("union", "cls_name", "variant"), HINTS, ids=[f"{u}/{c}" for u, c, _ in HINTS])
def test_a_class_a_variant_extends_is_refused_naming_the_variant(union, cls_name, variant):
    value = _instance(cls_name)
    uses = [v for u, c, v in HINTS if u == union and c == cls_name]
    with pytest.raises(TypeError) as refused:
        codec._check_variant(value, union)
    article = "an" if union[0] in "AEIOU" else "a"
    assert str(refused.value) == f"{cls_name} is not {article} {union}; use " + " or ".join(f"{v}(...)" for v in uses)
    codec._check_variant(_instance(variant), union)  # the variant itself passes


def test_the_traps_of_the_issue_are_refused_when_built():
    cases = [
        (lambda: models.SessionNotification(session_id="s", update=models.ToolCall(tool_call_id="t1", title="x")),
         "ToolCall is not a SessionUpdate; use ToolCallSessionUpdate(...)"),
        (lambda: models.PromptRequest(session_id="s", prompt=[models.Text(text="ok"), models.TextContent(text="hi")]),
         "TextContent is not a ContentBlock; use Text(...)"),
        (lambda: models.NewSessionRequest(cwd="/", mcp_servers=[models.McpServerHttp(name="n", url="u", headers=[])]),
         "McpServerHttp is not a McpServer; use Http(...)"),
        (lambda: models.RequestPermissionResponse(outcome=models.SelectedPermissionOutcome(option_id="o")),
         "SelectedPermissionOutcome is not a RequestPermissionOutcome; use Selected(...)"),
        (lambda: models.ToolCallUpdateSessionUpdate(tool_call_id="t", content=[models.Text(text="x")]),
         ("Text is not a ToolCallContent; use one of ContentToolCallContent, DiffToolCallContent, "
          "TerminalToolCallContent")),
    ]
    for build, message in cases:
        with pytest.raises(TypeError) as refused:
            build()
        assert str(refused.value) == message


def test_a_plain_dict_where_a_variant_belongs_is_refused():
    with pytest.raises(TypeError, match=r"^dict is not a SessionUpdate; use one of UserMessageChunk, "):
        models.SessionNotification(session_id="s", update={"sessionUpdate": "plan", "entries": []})  # type: ignore[arg-type]


def test_optional_union_fields_accept_none_and_variants():
    call = models.ToolCallSessionUpdate(tool_call_id="t", title="x")
    assert call.content is None
    call = builders.session_update.tool_call(
        tool_call_id="t", title="x", content=[builders.tool_call_content.content(builders.content_block.text("y"))]
    )
    assert encode(call)["content"] == [{"type": "content", "content": {"type": "text", "text": "y"}}]
