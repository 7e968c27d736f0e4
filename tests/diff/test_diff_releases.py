"""``acpgen diff`` on five real release pairs whose breaking records were checked by hand against
the two schemas: the whole report is kept in tests/diff/expected/ and compared line for line.

After an intended change of a report: `ACPGEN_UPDATE_SNAPSHOTS=1 make test`, then review the diff
of tests/diff/expected/ against the schemas before committing it.

What was checked (breaking records: before the envelopes were weighed through the methods -> now):

* stable v0.11.1 -> v0.12.2 (4 -> 0) adds ``session/close`` and ``session/resume`` and optional
  capability fields: the four envelope variants are covered by the two ``method-added`` records.
* stable v0.13.0 -> v0.13.3 (2 -> 0) adds ``logout``: likewise.
* stable v0.13.5 -> v0.13.6 (3 -> 1) adds ``session/delete`` and the ``SessionUpdate`` variant
  ``usage_update``, which an old client cannot decode: that one still breaks.
* stable v0.10.8 -> v0.11.0 (5 -> 0) renames ``KillTerminalCommandRequest``/``Response`` (the
  envelope variants are covered by ``params-type-renamed``/``result-type-renamed``, which stay
  ``python``) and moves ``AuthMethod``'s fields, unchanged, into ``AuthMethodAgent`` behind an
  alias: the same messages are valid.
* unstable v0.11.0 -> v0.11.1 (9 -> 5) removes ``session/stop`` (``method-removed`` breaks old
  senders; its envelope variants are covered by it, its two ``$defs`` are reported removed too),
  gives ``SessionConfigOption`` a boolean variant, and turns ``SetSessionConfigOptionRequest``
  into a union with a boolean variant an old agent rejects. That record says it breaks both,
  which is more than the schemas show: an old client's message still matches the new
  ``value_id`` variant, so only old receivers break (``def-kind-changed`` does not compare the
  variants with the old class).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import CORPUS

#: (old, new, exit status under --fail-on breaking)
PAIRS = [
    ("v0.11.1--schema.json", "v0.12.2--schema.json", 0),
    ("v0.13.0--schema.json", "v0.13.3--schema.json", 0),
    ("v0.13.5--schema.json", "v0.13.6--schema.json", 1),
    ("v0.10.8--schema.json", "v0.11.0--schema.json", 1),
    ("v0.11.0--schema.unstable.json", "v0.11.1--schema.unstable.json", 1),
]
EXPECTED = Path(__file__).parent / "expected"


@pytest.mark.parametrize(("old", "new", "status"), PAIRS, ids=[f"{o}->{n}" for o, n, _ in PAIRS])
def test_the_report_of_a_release_pair_checked_by_hand(cli, old, new, status):
    result = cli("diff", CORPUS / old, CORPUS / new, "--fail-on", "breaking")
    expected = EXPECTED / f"{old.removesuffix('.json')}__{new.removesuffix('.json')}.txt"
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        expected.write_text(result.stdout)
    assert (result.exit_code, result.stdout) == (status, expected.read_text()), result.stderr
