"""The base of the pydantic flavour's models, and their decoders for ``_codec``.

Plain pydantic v2: ``models`` (made by datamodel-code-generator) subclasses :class:`AcpModel`
and registers a decoder for every named type with ``_codec.register``, so ``_codec.decode`` /
``_codec.encode`` (and the runtime above them) work on these models as on the dataclass ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    SerializeAsAny,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
)
from pydantic_core import ErrorDetails, PydanticUndefined, core_schema

from ._codec import DecodeError, leniently, null_as_empty, salvaged
from ._leniency import REPAIRS
from ._pydantic_errors import decode_error, error_of

__all__ = ["AcpModel", "AsAny", "InTurn", "NotNull", "NullSeen", "Tag", "by_tag", "decoder", "in_turn", "lenient"]

#: How many JSON nulls decoding has met in fields that may be null (see ``AcpModel.to_json``).
_NULLS_SEEN = [0]


def _count_null(value: Any) -> Any:
    if value is None:
        _NULLS_SEEN[0] += 1
    return value


#: On every field that may be JSON ``null``: counts the nulls decoding meets. A Python call only
#: where such a property is present; most are absent.
NullSeen = BeforeValidator(_count_null)
#: On a union whose classes acpgen tries in turn (the first that decodes wins): pydantic-core does
#: the same, in the order of the union, instead of trying every member and picking the closest.
InTurn: Any = Field(union_mode="left_to_right")
#: On a union of classes: a value is sent by its own class, without trying the union's members.
AsAny: Any = cast(Any, SerializeAsAny)()  # the marker; type checkers know only SerializeAsAny[T]


def in_turn(*options: tuple[type, tuple[str, ...]]) -> Discriminator:
    """The discriminator of a union acpgen tries in turn, its classes in that order with the keys
    an object must have to be worth trying each (``(Text, ("text",))``). It names the member of
    the classes whose keys the object has, tagged ``"A|B"``, which tries them in turn; that of all
    of them when there is none, or the value is not an object (their errors say why)."""
    every = "|".join(cls.__name__ for cls, _keys in options)
    guards = tuple((cls.__name__, keys) for cls, keys in options)
    by_class = {cls: cls.__name__ for cls, _keys in options}

    def pick(value: Any) -> str:
        if value.__class__ is not dict:
            return by_class.get(value.__class__, every)
        tag = ""
        for name, needed in guards:
            for key in needed:
                if key not in value:
                    break
            else:
                tag = f"{tag}|{name}" if tag else name
        return tag or every

    return Discriminator(pick)


def by_tag(key: str, cases: dict[str, Any], default: Any) -> Discriminator:
    """The discriminator of a union acpgen tells apart by the string value of the tag ``key``,
    ``default`` taking an object whose tag is absent or not in ``cases`` (an open union's "other"
    variant): what acpgen's decoder does. pydantic's own discriminator would refuse the unknown
    tag; pydantic-core left alone would take any member that decodes (the "other" variant, a known
    tag with a broken body). A case, and the default, is a class (the member tagged with its
    name), a tuple of classes tried in turn (tagged ``"A|B"``), or the ``by_tag`` of a nested tag."""
    return Discriminator(_ByTag(key, cases, default))


class _ByTag:
    """``by_tag``'s choice: the tag of the member a value belongs to."""

    def __init__(self, key: str, cases: dict[str, Any], default: Any) -> None:
        self.key = key
        self.__name__ = f"by_tag({key!r})"  # pydantic-core names a callable discriminator by it
        self.cases = {value: _choice(case) for value, case in cases.items()}
        self.default = _choice(default)
        self.by_class: dict[type, str] = {}  # a value that is an instance already: its class's member
        for case in (*cases.values(), default):
            if isinstance(case, Discriminator):
                nested = cast(_ByTag, case.discriminator).by_class
                self.by_class.update({cls: tag for cls, tag in nested.items() if cls not in self.by_class})
            else:
                for cls in case if isinstance(case, tuple) else (case,):
                    self.by_class.setdefault(cls, _tag(case))

    def __call__(self, value: Any) -> str:
        if value.__class__ is not dict:
            return self.by_class.get(value.__class__) or self.default(value)
        tag = value.get(self.key)
        found = self.cases.get(tag) if tag.__class__ is str else None
        return (found or self.default)(value)


def _tag(case: Any) -> str:
    return "|".join(cls.__name__ for cls in case) if isinstance(case, tuple) else str(case.__name__)


def _choice(case: Any) -> Callable[[Any], str]:
    if isinstance(case, Discriminator):
        return cast(_ByTag, case.discriminator)
    tag = _tag(case)
    return lambda _value: tag


#: In the fields set of a value decoded from JSON with no ``null`` in a field (see ``to_json``).
_NULL_FREE = "\x00null-free"

_M = TypeVar("_M", bound="AcpModel")


class AcpModel(BaseModel):
    """The base of every generated class.

    Wire names are aliases; constructors take the Python names (``session_id=...``). Properties
    a class does not define are kept (``extra="allow"``, also as :attr:`extra`) and sent back out.
    ``to_json()`` sends what was set: an absent optional property stays absent, an explicit
    ``null`` the peer sent is sent back as ``null``. A constructor argument ``None`` for an
    optional property means absent, as in the dataclass flavour; a tag is always sent.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        strict=True,  # JSON kinds as the schema says: no "1" for 1, no true for 1
        allow_inf_nan=False,  # JSON has no NaN or infinity: refused here, never sent as null
        defer_build=True,  # a class builds its validator when first used: a fast import
        protected_namespaces=(),
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """A tag has its value as default for constructors (``Text(text=...)``), but decoding
        requires it, as the schema does: the validator, built later, sees it required (else a
        union would take an untagged object for the variant whose tag has a default)."""
        super().__pydantic_init_subclass__(**kwargs)
        for name, _alias, _value in _init_info(cls)[0]:
            cls.__pydantic_fields__[name].default = PydanticUndefined

    def __init__(self, /, **data: Any) -> None:
        tags, optional = _INIT[type(self)]
        if None in data.values():
            data = {k: v for k, v in data.items() if v is not None or k not in optional}
        for name, alias, value in tags:
            if name not in data and alias not in data:
                data[name] = value
        super().__init__(**data)

    # Decoding validates in pydantic-core alone: this constructor is for Python callers only.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @property
    def extra(self) -> dict[str, Any]:
        """Properties the schema does not define for this type, kept as they came and sent back out."""
        extra = self.__pydantic_extra__
        if extra is None:
            extra = self.__pydantic_extra__ = {}
        return extra

    @classmethod
    def from_json(cls: type[_M], data: Any) -> _M:  # noqa: PYI019 - typing.Self is 3.11+
        """Decode JSON data; raises DecodeError (with the JSON pointer of the bad value)."""
        value: _M = leniently(decoder(cls), data)
        return value

    def to_json(self) -> dict[str, Any]:
        """The wire form: a dict ready for ``json.dumps``.

        It has the properties that were set (``exclude_unset``). A value decoded from JSON with
        no ``null`` in a field has ``None`` only where a property was absent, so pydantic-core's
        faster ``exclude_defaults`` (which keeps unknown properties and tags) sends the same.
        """
        serializer = self.__pydantic_serializer__
        if _NULL_FREE in self.__pydantic_fields_set__:
            out: dict[str, Any] = serializer.to_python(self, exclude_defaults=True)
        else:
            out = serializer.to_python(self, exclude_unset=True)
        return out

    def _json_text(self) -> str:
        """``to_json()`` as the wire's JSON text (``_codec.encode_text``), written by pydantic-core
        with the same choice of what to send: compact, ASCII only."""
        serializer = self.__pydantic_serializer__
        if _NULL_FREE in self.__pydantic_fields_set__:
            text = serializer.to_json(self, exclude_defaults=True, ensure_ascii=True)
        else:
            text = serializer.to_json(self, exclude_unset=True, ensure_ascii=True)
        return text.decode()


#: Per class: its tags (Python name, wire name, value), and the names and aliases of its
#: optional fields.
_INIT: dict[type, tuple[tuple[tuple[str, str | None, Any], ...], frozenset[str]]] = {}


def _init_info(cls: type[AcpModel]) -> tuple[tuple[tuple[str, str | None, Any], ...], frozenset[str]]:
    tags: list[tuple[str, str | None, Any]] = []
    optional: set[str] = set()
    for name, field in cls.model_fields.items():
        if field.is_required():
            continue
        if field.default is not None and field.default is not PydanticUndefined:
            tags.append((name, field.alias, field.default))  # only tags have a default
        else:
            optional.add(name)
            if field.alias:
                optional.add(field.alias)
    init = _INIT[cls] = (tuple(tags), frozenset(optional))
    return init


class _NotNull:
    """In ``Annotated[X | None, NotNull] = None``: the property may be absent (``None``) but JSON
    ``null`` is refused, as the schema says. Checked by pydantic-core, not by a Python call."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        schema = handler(source)
        if schema.get("type") == "nullable":
            inner: core_schema.CoreSchema = schema["schema"]
            return inner
        return schema

    def __repr__(self) -> str:
        return "NotNull"


NotNull = _NotNull()


#: The ``context`` of a decode: only a decode repairs what ``lenient`` allows (constructors refuse).
_DECODING = object()
_UNSET: Any = object()


class _Repair:
    """A repair made by pydantic-core, in ``REPAIRS`` in place of its container until the decoder
    resolves it (:func:`_resolve`): the instance's fields (pydantic's ``info.data``: its
    ``__dict__``) and Python name; for a dropped item, its array, the items kept and decoded."""

    __slots__ = ("anchor", "items", "kept", "name", "out")

    def __init__(self, info: ValidationInfo, items: list[Any] | None = None) -> None:
        self.anchor, self.name, self.items = info.data, info.field_name or "", items
        self.kept: tuple[int, ...] = ()
        self.out: Any = None


def lenient(*, on_error: Any = _UNSET, on_null: Any = _UNSET, skip_invalid: bool = False) -> _Lenient:
    """On a field the schema's ``x-deserialize-*`` annotations let a decode repair: a bad value
    becomes ``on_error`` (``None``: absent; ``list``, ``dict``: empty), a ``null`` ``on_null()``,
    a bad array item is dropped (``skip_invalid``); each recorded with its JSON pointer by
    ``_codec``'s rules, which a strict decode makes refuse it."""

    def validate(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        if value is None and on_null is not _UNSET and info.context is _DECODING:
            try:
                return null_as_empty(_Repair(info), None, on_null(), "an object" if on_null is dict else "an array")
            except DecodeError:  # a strict decode
                return handler(value)
        try:
            return handler(value)
        except ValidationError as error:
            if info.context is not _DECODING:
                raise
            try:
                return _repaired(value, handler, info, error, on_error, skip_invalid)
            except DecodeError:  # a strict decode refuses what a lenient one repairs
                raise error from None

    return _Lenient(validate)


class _Lenient:
    """``lenient(...)``'s marker: pydantic-core tries the field's own schema first, so a valid
    value costs no Python call; only a value that schema refuses meets ``validate``."""

    def __init__(self, validate: Callable[..., Any]) -> None:
        self.validate = validate

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        schema = handler(source)
        repair = core_schema.with_info_wrap_validator_function(self.validate, schema)
        tried = core_schema.union_schema([schema, repair], mode="left_to_right")
        # serialized by the field's own schema (a lax_or_strict schema serializes by its strict one)
        return core_schema.lax_or_strict_schema(lax_schema=tried, strict_schema=schema, strict=False)

    def __repr__(self) -> str:
        return "lenient(...)"


def _repaired(value: Any, handler: Any, info: ValidationInfo, error: ValidationError, on_error: Any, skip: bool) -> Any:
    """``lenient``'s repair of a ``value`` that failed with ``error``: its bad items dropped (if the
    array then decodes), else ``on_error``; raises what the decode should raise instead."""
    errors = error.errors(include_url=False)
    by_item: dict[int, list[ErrorDetails]] = {}
    for details in errors if skip and value.__class__ is list else ():
        if not details["loc"] or details["loc"][0].__class__ is not int:
            by_item.clear()  # not an item's error
            break
        inside = details.copy()
        inside["loc"] = details["loc"][1:]
        by_item.setdefault(details["loc"][0], []).append(inside)
    if by_item:
        repairs = [_Repair(info, value) for _ in by_item]
        for repair, index in zip(repairs, sorted(by_item)):
            salvaged(repair, index, error_of(by_item[index], value[index]), None)
        kept = tuple(i for i in range(len(value)) if i not in by_item)
        try:
            out = handler([value[i] for i in kept])
        except ValidationError as again:  # too few items left, say
            error, errors = again, again.errors(include_url=False)
        else:
            for repair in repairs:
                repair.kept, repair.out = kept, out
            return out
    if on_error is _UNSET:
        raise error
    return salvaged(_Repair(info), None, error_of(errors, value), None if on_error is None else on_error())


def _resolve(value: Any, data: Any) -> None:
    """This thread's repairs made decoding ``data`` into ``value``, given their containers in
    ``data``; those made in what ``value`` does not hold (a union member that failed, an attempt
    made again) forgotten. A field made absent is no longer set (``to_json`` leaves it out)."""
    me = threading.get_ident()
    mine = [r for r in REPAIRS if r[0] == me and r[1].__class__ is _Repair]
    kept = {id(r[1].out): r[1].kept for r in mine if r[1].out is not None}
    places = _places(value, data, {id(r[1].anchor) for r in mine}, kept)
    done: dict[int, Any] = {}
    for entry in mine:
        _, repair, key, error, action = entry
        place = places.get(id(repair.anchor))
        if place is None:
            done[id(entry)] = None
        elif repair.items is not None:
            done[id(entry)] = (me, repair.items, key, error, "dropped")
        else:
            instance, fields = place
            if getattr(instance, repair.name) is None:
                instance.__pydantic_fields_set__.discard(repair.name)
            key = type(instance).__pydantic_fields__[repair.name].alias or repair.name
            done[id(entry)] = (me, fields, key, error, action)
    REPAIRS[:] = [e for e in (done.get(id(r), r) for r in REPAIRS) if e is not None]


def _places(value: Any, data: Any, anchors: set[int], kept: dict[int, Any]) -> dict[int, tuple[AcpModel, Any]]:
    """Each instance in ``value`` whose ``__dict__`` is in ``anchors``, with the object of ``data``
    it was decoded from (``kept``: the items kept by an array that dropped some)."""
    found: dict[int, tuple[AcpModel, Any]] = {}
    stack = [(value, data)]
    while stack:
        out, given = stack.pop()
        if isinstance(out, AcpModel) and given.__class__ is dict:
            if id(out.__dict__) in anchors:
                found[id(out.__dict__)] = (out, given)
            for name, field in type(out).__pydantic_fields__.items():
                if (field.alias or name) in given:
                    stack.append((out.__dict__.get(name), given[field.alias or name]))
        elif out.__class__ is list and given.__class__ is list:
            stack.extend(zip(out, (given[i] for i in kept.get(id(out), range(len(given))))))
        elif out.__class__ is dict and given.__class__ is dict:
            stack.extend((v, given[k]) for k, v in out.items() if k in given)
    return found


def decoder(tp: Any) -> Callable[[Any], Any]:
    """The decoder of a generated class or alias: pydantic's validation, whose errors become a
    :class:`DecodeError` with the JSON pointer of the offending value."""
    found = _DECODERS.get(tp)
    if found is None:
        found = _DECODERS[tp] = _class_decoder(tp) if isinstance(tp, type) and issubclass(tp, AcpModel) else _decoder(tp)
    return found


def _class_decoder(cls: type[AcpModel]) -> Callable[[Any], Any]:
    """A class's decoder (the one most messages take: written for speed). A value that met no
    ``null`` in a field is marked so, for ``to_json``."""
    nulls, repaired, decoding = _NULLS_SEEN, REPAIRS, _DECODING
    validate: Callable[..., Any] | None = None

    def decode(data: Any) -> Any:
        nonlocal validate
        if validate is None:  # built on first use
            cls.model_rebuild()
            validate = cls.__pydantic_validator__.validate_python
        seen, repairs = nulls[0], len(repaired)
        try:  # the wire has wire names: a Python name is unknown there
            value = validate(data, by_name=False, context=decoding)
        except ValidationError as error:
            raise decode_error(error, data) from None
        if len(repaired) != repairs:  # a repair (see ``lenient``)
            _resolve(value, data)
        if seen == nulls[0]:
            value.__pydantic_fields_set__.add(_NULL_FREE)
        return value

    return decode


def _decoder(tp: Any) -> Callable[[Any], Any]:
    """The decoder of an alias (a union, a literal set, a scalar): a type adapter's validation."""
    validate: Callable[..., Any] | None = None

    def decode(data: Any) -> Any:
        nonlocal validate
        if validate is None:  # built on first use
            validate = TypeAdapter(tp).validator.validate_python
        seen, repairs = _NULLS_SEEN[0], len(REPAIRS)
        try:
            value = validate(data, by_name=False, context=_DECODING)
        except ValidationError as error:
            raise decode_error(error, data) from None
        if len(REPAIRS) != repairs:
            _resolve(value, data)
        if seen == _NULLS_SEEN[0] and isinstance(value, AcpModel):
            value.__pydantic_fields_set__.add(_NULL_FREE)
        return value

    return decode


_DECODERS: dict[Any, Callable[[Any], Any]] = {}
