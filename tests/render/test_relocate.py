"""A version subpackage imports the runtime it shares from the package root: the rewrite of its
import statements (:mod:`acpgen.render.relocate`)."""

from __future__ import annotations

from acpgen.render.relocate import import_from_parent

SHARED = {"_asgi", "_codec", "_rpc"}


def test_imports_of_shared_modules_go_up_one_level_and_first():
    text = (
        '"""A module."""\n\nfrom __future__ import annotations\n\nimport json\n\n'
        "from . import _asgi, models\nfrom ._codec import decode, encode\n"
        "from ._rpc import (\n    ConnectionClosed,\n    RequestError,\n)\nfrom .agent import Agent\n\nx = json\n"
    )
    assert import_from_parent(text, SHARED) == (
        '"""A module."""\n\nfrom __future__ import annotations\n\nimport json\n\n'
        "from .. import _asgi\nfrom .._codec import decode, encode\n"
        "from .._rpc import (\n    ConnectionClosed,\n    RequestError,\n)\nfrom . import models\n"
        "from .agent import Agent\n\nx = json\n"
    )


def test_imports_under_an_if_or_in_a_function_are_moved_with_their_indent():
    text = "if TYPE_CHECKING:\n    from . import _rpc as rpc, pair\n    from .agent import Agent\n"
    assert import_from_parent(text, SHARED) == (
        "if TYPE_CHECKING:\n    from .. import _rpc as rpc\n    from . import pair\n    from .agent import Agent\n")
    lazy = "def f():\n    from ._rpc import RequestError\n    return RequestError\n"
    assert import_from_parent(lazy, SHARED) == "def f():\n    from .._rpc import RequestError\n    return RequestError\n"


def test_a_comment_among_the_imports_keeps_each_in_its_place():
    text = "from .agent import Agent\n# the wire\nfrom ._rpc import RequestError\n"
    assert import_from_parent(text, SHARED) == "from .agent import Agent\n# the wire\nfrom .._rpc import RequestError\n"


def test_nothing_else_changes():
    text = "from .models import A\nfrom .. import elsewhere\nimport _rpc\nx = 'from ._rpc import RequestError'\n"
    assert import_from_parent(text, SHARED) == text  # a local, a parent's, an absolute import, a string
    assert import_from_parent("from ._rpc import (\n", SHARED) == "from ._rpc import (\n"  # does not parse


def test_imports_in_a_handler_a_loop_a_class_and_a_match_case_are_moved():
    text = (
        "try:\n    pass\nexcept ImportError:\n    from ._codec import decode\n"
        "for x in y:\n    from ._rpc import A\n"
        "class C:\n    def f(self):\n        from ._asgi import app\n"
        "match v:\n    case 1:\n        from ._rpc import B\n"
    )
    assert import_from_parent(text, SHARED) == text.replace("from ._", "from .._")


def test_a_module_importing_no_shared_module_is_returned_as_it_is():
    text = "from .models import A\nfrom .agent import (\n    Agent,\n)\nx = 1 +\n"  # not even parsed
    assert import_from_parent(text, SHARED) is text


def test_a_module_in_a_room_of_the_runtime_imports_the_shared_rooms_from_the_package_root():
    """A version's own module in ``v2/_runtime/stubs/`` imports the rooms the versions share from
    ``<package>/_runtime/``: four levels up, the shared modules of its own room too; its version's
    modules stay where they are."""
    shared = {"_runtime.connection._rpc", "_runtime.wire._codec", "_runtime.stubs._listen"}
    text = (
        "from ... import models\nfrom ...agent import Agent\nfrom ..connection._rpc import RequestError\n"
        "from ..wire import _codec\nfrom . import _listen, _stub_sessions\n"
    )
    assert import_from_parent(text, shared, "_runtime.stubs") == (
        "from ...._runtime.connection._rpc import RequestError\nfrom ...._runtime.stubs import _listen\n"
        "from ...._runtime.wire import _codec\nfrom ... import models\nfrom ...agent import Agent\n"
        "from . import _stub_sessions\n"
    )
    at_the_root = "from ._runtime.connection._rpc import RequestError\nfrom ._runtime.stubs import _listen\n"
    assert import_from_parent(at_the_root, shared) == at_the_root.replace("from ._runtime", "from .._runtime")
