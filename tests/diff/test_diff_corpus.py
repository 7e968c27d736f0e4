"""``acpgen diff`` and the names lock over the real releases of the corpus: every consecutive pair
of a lineage diffs without error, a few pairs checked by hand give their counts, and regenerating
release after release renames nothing that still exists."""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from itertools import pairwise

import pytest
from support import CORPUS, DATA
from support.lineages import consecutive_pairs, lineages

from acpgen.diff import KINDS, diff_schemas
from acpgen.diff.changes import BREAKS, SEVERITIES, TIERS, Change
from acpgen.diff.facts import read_facts
from acpgen.diff.report import fails
from acpgen.model.namelock import renamed
from acpgen.model.typebuild import build_types
from acpgen.schema.loader import LoadedSchema, load_schema

SDK = DATA / "sdk-schemas"


@functools.cache
def schema(file: str) -> LoadedSchema:
    """A corpus schema; meta-schema validation is test_method_table's business (and slow)."""
    digest = hashlib.sha256((CORPUS / file).read_bytes()).hexdigest()
    return load_schema(CORPUS / file, validated=frozenset({digest}))


@functools.cache
def changes_between(old: str, new: str) -> tuple[Change, ...]:
    """``diff_schemas`` of two corpus schemas, once per pair for the module's tests."""
    return diff_schemas(schema(old), schema(new))


@functools.cache
def envelopes(file: str) -> frozenset[str]:
    return read_facts(schema(file), None).envelopes


def test_the_corpus_has_four_lineages_and_91_consecutive_pairs():
    assert {name: len(files) for name, files in lineages().items()} == {
        "schema.json": 39, "schema.unstable.json": 39, "v2-schema.json": 8, "v2-schema.unstable.json": 9,
    }
    assert len(consecutive_pairs()) == 91
    assert lineages()["schema.json"][:3] == ["v0.0.33--schema.json", "v0.1.3-alpha.0--schema.json",
                                             "v0.2.0-alpha.3--schema.json"]


def test_every_consecutive_pair_of_the_corpus_diffs():
    order = {s: i for i, s in enumerate(SEVERITIES)}
    changed = 0
    for old, new in consecutive_pairs():
        changes = changes_between(old, new)
        assert all(c.kind in KINDS and c.breaks in BREAKS and c.tier in TIERS for c in changes), (old, new)
        assert [order[c.severity] for c in changes] == sorted(order[c.severity] for c in changes)
        changed += bool(changes)
    # the other 11 pairs change only descriptions, titles of variants that are refs, or
    # ``discriminator`` keywords that name a tag the variants' consts already give
    assert changed == 80


def test_over_the_stable_releases_no_envelope_record_breaks_a_side():
    """No breaking record is an envelope's: 15 of the 38 pairs of the stable lineage break a side
    and 19 fail ``--fail-on breaking``. (When an envelope's variant for a new method broke old
    receivers, 22 broke a side, 16 of them with envelope records, 5 with nothing else, and all 22
    failed.)"""
    files = lineages()["schema.json"]
    breaking = failing = 0
    for old, new in pairwise(files):
        either = envelopes(old) | envelopes(new)
        changes = changes_between(old, new)
        harmful = [c for c in changes if c.severity == "breaking"]
        assert not [c for c in harmful if c.subject.split("/")[0].split(".")[0] in either], (old, new)
        breaking += bool(harmful)
        failing += fails(changes, "breaking")
    assert (len(files) - 1, breaking, failing) == (38, 15, 19)


#: Counts per kind, checked by hand against the two schemas (see the notes beside each).
PINNED = {
    # _meta went from "any value" to "an object" everywhere: mechanical, but narrowing
    ("v0.8.0--schema.json", "v0.9.0--schema.json"): {"type-changed": 88},
    # the worst pair: ids renamed (id -> methodId, ...), session capabilities and a method dropped;
    # SessionCloseCapabilities goes and ReplayFromStart comes, both an object of _meta alone: no rename
    ("v1.2.0--v2-schema.unstable.json", "v1.3.0--v2-schema.unstable.json"): {
        "annotation-added": 6, "annotation-removed": 66, "def-added": 16, "def-removed": 9,
        "enum-value-removed": 1, "field-added": 7, "field-added-required": 40, "field-made-optional": 6,
        "field-removed": 47, "method-removed": 1, "name-renewable": 2, "nullability-changed": 3, "type-changed": 1,
        "variant-added": 10, "variant-removed": 5,
    },
    # compaction arrives (unstable), env-var auth goes, elicitation becomes stable
    ("v1.6.0--v1-schema.unstable.json", "v1.7.0--v1-schema.unstable.json"): {
        "annotation-added": 1, "def-added": 5, "def-removed": 2, "field-added": 1, "method-made-stable": 2,
        "variant-added": 2, "variant-removed": 1,
    },
}


@pytest.mark.parametrize("pair", list(PINNED), ids=lambda p: f"{p[0]}->{p[1]}")
def test_counts_per_kind_of_pairs_checked_by_hand(pair):
    old, new = pair
    assert dict(Counter(c.kind for c in changes_between(old, new))) == PINNED[pair]


#: Every rename ``acpgen diff`` reports between consecutive releases of the corpus, with the places
#: both $defs stand at: the evidence it pairs them on, each checked by hand against the two schemas.
RENAMES = {
    ("v0.10.8--schema.json", "FileSystemCapability"): ("FileSystemCapabilities", "ClientCapabilities.fs"),
    ("v0.10.8--schema.json", "KillTerminalCommandRequest"): ("KillTerminalRequest", "terminal/kill (client) params"),
    ("v0.10.8--schema.json", "KillTerminalCommandResponse"): (
        "KillTerminalResponse",
        "terminal/kill (client) result, ClientResponse variant Result.result variant KillTerminalResponse"),
    ("v0.11.0--schema.unstable.json", "SessionStopCapabilities"): ("SessionCloseCapabilities", "SessionCapabilities.stop"),
    ("v0.13.2--schema.unstable.json", "DisableProvidersRequest"): ("DisableProviderRequest",
                                                                   "providers/disable (agent) params"),
    ("v0.13.2--schema.unstable.json", "DisableProvidersResponse"): ("DisableProviderResponse",
                                                                    "providers/disable (agent) result"),
    ("v0.13.2--schema.unstable.json", "SetProvidersRequest"): ("SetProviderRequest", "providers/set (agent) params"),
    ("v0.13.2--schema.unstable.json", "SetProvidersResponse"): ("SetProviderResponse", "providers/set (agent) result"),
}
#: The unstable lineage repeats the stable one's renames of v0.10.8 -> v0.11.0.
RENAMES.update({("v0.10.8--schema.unstable.json", old): found for (file, old), found in RENAMES.items()
                if file == "v0.10.8--schema.json"})


def test_every_rename_over_the_corpus_is_paired_on_evidence():
    """11 renames over the 91 consecutive pairs, each at the same place in both schemas; the two
    $defs of one shape that stand nowhere alike (v1.2.0 -> v1.3.0's SessionCloseCapabilities and
    ReplayFromStart, two objects of _meta alone) are a removal and an addition."""
    found = {}
    for old, new in consecutive_pairs():
        for change in changes_between(old, new):
            if change.kind == "def-renamed":
                match = re.fullmatch(r"now (\w+), same shape, at the same place \((.+)\)", change.detail)
                assert match, change.detail
                found[(old, change.subject)] = match.groups()
                assert change.severity == "python" and f"an import of {change.subject} fails" in change.python
    assert found == RENAMES and len(found) == 11


def test_from_the_last_releases_to_the_typescript_sdks_schemas_renames_are_paired_on_evidence():
    """The TypeScript SDK's schemas follow v1.7.0's. Shape alone paired 23 $defs gone with 23 come
    over the four (McpConnectionId with McpRequestId, NesJumpCapabilities with
    SessionStatusCapabilities, each an object of _meta alone, ...); one pair stands at one place:
    v2's AuthCapabilities, now ClientAuthCapabilities."""
    found = {}
    for lineage, sdk in (("schema.json", "v1-schema.json"), ("schema.unstable.json", "v1-schema.unstable.json"),
                         ("v2-schema.json", "v2-schema.json"), ("v2-schema.unstable.json", "v2-schema.unstable.json")):
        new = load_schema(SDK / sdk, validated=frozenset({hashlib.sha256((SDK / sdk).read_bytes()).hexdigest()}))
        found.update({(sdk, c.subject): c.detail for c in diff_schemas(schema(lineages()[lineage][-1]), new)
                      if c.kind == "def-renamed"})
    detail = "now ClientAuthCapabilities, same shape, at the same place (ClientCapabilities.auth)"
    assert found == {("v2-schema.json", "AuthCapabilities"): detail, ("v2-schema.unstable.json", "AuthCapabilities"): detail}


def test_from_the_bundled_schema_to_v1_7_0_model_id_is_removed_not_renamed():
    """Two string aliases, ModelId (the unstable session/set_model's) and AuthMethodId (new in
    v1.7.0, authenticate's), stand nowhere alike: the import of ModelId that fails is a removal."""
    changes = changes_between("v0.12.2--schema.unstable.json", "v1.7.0--v1-schema.json")
    assert not [c for c in changes if c.kind == "def-renamed"]
    by_subject = {(c.kind, c.subject): c for c in changes}
    removed, added = by_subject[("def-removed", "ModelId")], by_subject[("def-added", "AuthMethodId")]
    assert (removed.severity, removed.python, added.python) == ("breaking", "alias ModelId removed", "alias AuthMethodId added")


def test_the_worst_pair_reports_the_renamed_id_as_removed_and_required():
    changes = diff_schemas(schema("v1.2.0--v2-schema.unstable.json"), schema("v1.3.0--v2-schema.unstable.json"))
    by_subject = {(c.kind, c.subject): c for c in changes}
    removed = by_subject[("field-removed", "AuthMethodAgent.id")]
    added = by_subject[("field-added-required", "AuthMethodAgent.methodId")]
    assert (removed.breaks, removed.severity, added.breaks) == ("receiver", "breaking", "sender")
    assert added.python == "AuthMethodAgent(method_id=...) is a required keyword"


def _walk(locked: bool) -> dict[tuple[str, str], tuple[str, str]]:
    """(release, entity) -> (old name, new name) for every entity a regeneration renamed, walking
    each lineage from its oldest release; with ``locked``, each run keeps the previous run's names."""
    found = {}
    for files in lineages().values():
        previous = build_types(schema(files[0])).names
        for file in files[1:]:
            names = build_types(schema(file), locked=previous if locked else None).names
            found.update(((file, key), pair) for key, pair in renamed(previous, names).items())
            previous = names
    return found


def test_regenerating_release_after_release_renames_nothing_that_still_exists():
    assert _walk(locked=True) == {}


def test_without_the_lock_the_rules_rename_classes_an_unrelated_change_touched():
    free = _walk(locked=False)
    assert {
        ("v1.3.0--v2-schema.json", "variants/ContentBlock/text"): ("Text", "TextContentBlock"),
        ("v1.3.0--v2-schema.unstable.json", "variants/ContentBlock/text"): ("Text", "TextContentBlock"),
        ("v1.5.0--v2-schema.unstable.json", "variants/AuthMethod/terminal"): ("Terminal", "TerminalAuthMethod"),
        ("v0.5.0--schema.json", "variants/ContentBlock/resource_link"): ("ResourceLinkContentBlock", "ResourceLink"),
    }.items() <= free.items()
    assert len(free) == 18 and all(key.startswith("variants/") for _, key in free)


def test_a_new_def_that_wants_a_kept_name_takes_another():
    old = build_types(schema("v1.4.0--v2-schema.unstable.json")).names
    new = build_types(schema("v1.5.0--v2-schema.unstable.json"), locked=old).names
    assert old["variants/AuthMethod/terminal"] == new["variants/AuthMethod/terminal"] == "Terminal"
    assert "defs/Terminal" not in old and new["defs/Terminal"] == "Terminal_"
    assert build_types(schema("v1.5.0--v2-schema.unstable.json")).names["defs/Terminal"] == "Terminal"
