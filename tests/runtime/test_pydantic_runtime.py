"""The pydantic flavour's runtime (``acpgen/runtime/_runtime/wire/_pydantic.py`` and ``_pydantic_errors.py``)
as the source it is, before any package is generated: the models' base, the discriminators of
unions, ``NotNull``, the repairs ``lenient`` allows, and pydantic's errors read as a
``DecodeError`` naming the JSON pointer. The classes below are written as the flavour's
``models.py`` writes them."""

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypeAliasType

from acpgen.runtime._runtime.wire import _codec
from acpgen.runtime._runtime.wire._pydantic import (
    AcpModel,
    AsAny,
    InTurn,
    NotNull,
    NullSeen,
    Tag,
    by_tag,
    decoder,
    in_turn,
    lenient,
)


class Text(AcpModel, BaseModel):
    type: Literal["text"] = "text"
    text: str


class Link(AcpModel, BaseModel):
    type: Literal["link"] = "link"
    uri: str
    title: Annotated[str | None, NotNull] = None


class Command(AcpModel, BaseModel):
    command: str


Block = TypeAliasType(
    "Block",
    Annotated[
        Annotated[Text, Tag("Text")] | Annotated[Link, Tag("Link")] | Annotated[Command, Tag("Command")],
        by_tag("type", {"text": Text, "link": Link}, Command),
        AsAny,
    ],
)


class Failure(AcpModel, BaseModel):
    code: int


class Success(AcpModel, BaseModel):
    result: Annotated[Any, NullSeen]


Outcome = TypeAliasType(
    "Outcome",
    Annotated[
        Annotated[Failure, Tag("Failure")]
        | Annotated[Success, Tag("Success")]
        | Annotated[Annotated[Failure | Success, InTurn], Tag("Failure|Success")],
        in_turn((Failure, ("code",)), (Success, ("result",))),
        AsAny,
    ],
)


class Note(AcpModel, BaseModel):
    session_id: Annotated[str, Field(alias="sessionId")]
    blocks: Annotated[list[Block], lenient(on_error=list, skip_invalid=True)]
    note: Annotated[str | None, NullSeen] = None
    status: Annotated[Literal["done", "pending"] | None, NullSeen, lenient(on_error=None)] = None


_codec.register({tp: decoder(tp) for tp in (Text, Link, Command, Block, Failure, Success, Outcome, Note)}, model=AcpModel)


def test_a_constructor_takes_python_names_sends_its_tag_and_reads_none_as_absent():
    link = Link(uri="file:///a", title=None)
    assert link.to_json() == {"type": "link", "uri": "file:///a"}
    note = Note(session_id="s", blocks=[Text(text="hi")])
    assert note.to_json() == {"sessionId": "s", "blocks": [{"type": "text", "text": "hi"}]}


def test_a_decoded_value_round_trips_exactly_with_its_nulls_and_unknown_properties():
    data = {"sessionId": "s", "blocks": [{"type": "link", "uri": "u", "x": 1}], "note": None, "more": [1]}
    note = Note.from_json(data)
    assert isinstance(note.blocks[0], Link) and note.blocks[0].extra == {"x": 1}
    assert note.extra == {"more": [1]}
    assert note.to_json() == data
    assert json.loads(_codec.encode_text(note)) == data
    plain = {"sessionId": "s", "blocks": []}  # no null met: to_json takes the faster way, to the same result
    assert _codec.encode(_codec.decode(Note, plain)) == plain


def test_a_tagged_union_takes_an_unknown_tag_as_its_other_variant_and_names_a_known_tags_bad_body():
    assert type(_codec.decode(Block, {"type": "text", "text": "hi"})) is Text
    other = _codec.decode(Block, {"type": "video", "command": "play"})
    assert type(other) is Command and other.extra == {"type": "video"}
    with pytest.raises(_codec.DecodeError) as caught:
        _codec.decode(Block, {"type": "link"})
    assert caught.value.path == "/uri"


def test_an_untagged_union_tries_the_classes_whose_keys_are_there():
    assert type(_codec.decode(Outcome, {"code": 1})) is Failure
    assert type(_codec.decode(Outcome, {"result": None})) is Success
    with pytest.raises(_codec.DecodeError) as caught:
        _codec.decode(Outcome, {"code": "one"})
    assert caught.value.path == "/code"


def test_not_null_refuses_a_null_the_schema_refuses_with_its_pointer():
    with pytest.raises(_codec.DecodeError) as caught:
        _codec.decode(Block, {"type": "link", "uri": "u", "title": None})
    assert caught.value.path == "/title"
    with pytest.raises(_codec.DecodeError) as caught:
        _codec.decode(Note, {"sessionId": 7, "blocks": []})
    assert caught.value.path == "/sessionId"


def test_lenient_repairs_what_it_allows_and_a_strict_decode_refuses_it():
    data = {"sessionId": "s", "blocks": [{"type": "text", "text": "a"}, {"type": "text"}], "status": "lost"}
    note, salvages = _codec.decode_salvaging(Note, data)
    assert [b.to_json() for b in note.blocks] == [{"type": "text", "text": "a"}]
    assert note.status is None and note.to_json() == {"sessionId": "s", "blocks": [{"type": "text", "text": "a"}]}
    assert sorted((s.path, s.action) for s in salvages) == [("/blocks/1/text", "dropped"), ("/status", "replaced by its default")]
    with pytest.raises(_codec.DecodeError):
        _codec.decode(Note, data, strict=True)
    with pytest.raises(ValidationError):  # a constructor repairs nothing: pydantic's own error
        Note(session_id="s", blocks=[], status="lost")
