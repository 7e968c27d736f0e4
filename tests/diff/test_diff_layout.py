"""What ``acpgen diff`` says moves for the user's code when a package's protocol versions change:
one record per move, with who it breaks, its severity and the edit it asks for."""

from __future__ import annotations

import pytest

from acpgen.diff.layout import Layout, layout_moves
from acpgen.diff.report import fails

PKG = "myagent.acp"
ONE = Layout((1,), 1)
TWO = Layout((2,), 2)
BOTH = Layout((1, 2), 1)  # the root keeps v1's API beside v2, as the TypeScript SDK's root export does
EARLIER = Layout((1, 2), None)  # an earlier acpgen's package of several: no API at its root

#: (old, new, the records: kind, subject, breaks, severity, python)
MOVES = [
    pytest.param(ONE, BOTH, [
        ("subpackage-added", "myagent.acp.v1", "nobody", "compatible",
         "myagent.acp.v1 holds the API the root myagent.acp holds; no import changes"),
        ("version-added", "v2", "nobody", "compatible",
         "new subpackage myagent.acp.v2 holds v2's API; the root myagent.acp keeps v1's API; no import changes"),
    ], id="v1-adds-v2"),
    pytest.param(BOTH, Layout((1, 2, 3), 1), [
        ("version-added", "v3", "nobody", "compatible",
         "new subpackage myagent.acp.v3 holds v3's API; the root myagent.acp keeps v1's API; no import changes"),
    ], id="v1-v2-adds-v3"),
    pytest.param(BOTH, TWO, [
        ("version-removed", "v1", "both", "breaking", "imports of myagent.acp.v1 break"),
        ("root-version-changed", "myagent.acp", "nobody", "python",
         "imports from myagent.acp now get v2's API: port the code that uses them from v1's API to v2's"),
        ("subpackage-removed", "myagent.acp.v2", "nobody", "python",
         ("imports of myagent.acp.v2 break: import from myagent.acp instead"
          " (myagent.acp.v2.models -> myagent.acp.models)")),
    ], id="v1-v2-to-v2"),
    pytest.param(BOTH, ONE, [
        ("version-removed", "v2", "both", "breaking", "imports of myagent.acp.v2 break"),
        ("subpackage-removed", "myagent.acp.v1", "nobody", "python",
         ("imports of myagent.acp.v1 break: import from myagent.acp instead"
          " (myagent.acp.v1.models -> myagent.acp.models)")),
    ], id="v1-v2-to-v1"),
    pytest.param(EARLIER, TWO, [
        ("version-removed", "v1", "both", "breaking", "imports of myagent.acp.v1 break"),
        ("subpackage-removed", "myagent.acp.v2", "nobody", "python",
         ("imports of myagent.acp.v2 break: import from myagent.acp instead"
          " (myagent.acp.v2.models -> myagent.acp.models)")),
        ("root-version-changed", "myagent.acp", "nobody", "compatible", "imports from myagent.acp get v2's API (new)"),
    ], id="earlier-v1-v2-to-v2"),
    pytest.param(ONE, TWO, [
        ("version-removed", "v1", "both", "breaking", "the root myagent.acp no longer holds v1's API"),
        ("root-version-changed", "myagent.acp", "nobody", "python",
         "imports from myagent.acp now get v2's API: port the code that uses them from v1's API to v2's"),
        ("version-added", "v2", "nobody", "compatible", "the root myagent.acp holds v2's API"),
    ], id="v1-to-v2"),
    pytest.param(BOTH, BOTH, [], id="unchanged"),
    pytest.param(EARLIER, EARLIER, [], id="unchanged-earlier"),
]

#: The kinds these cases cover (test_diff_kinds checks every kind is covered somewhere).
COVERED = {"version-added", "version-removed", "subpackage-added", "subpackage-removed", "root-version-changed"}


@pytest.mark.parametrize(("old", "new", "expected"), MOVES)
def test_each_move_gives_its_records(old, new, expected):
    moves = layout_moves(PKG, old, new)
    assert [(c.kind, c.subject, c.breaks, c.severity, c.python) for c in moves] == expected
    assert all(c.tier == "stable" for c in moves)
    # diff's breaking rule: removing a version fails --fail-on breaking; adding one does not
    assert fails(moves, "breaking") == (not set(old.versions) <= set(new.versions))

def test_how_a_layout_is_named():
    assert [layout.shown() for layout in (ONE, BOTH, EARLIER)] == ["v1", "v1 and v2, root v1", "v1 and v2"]
