"""The conformance kits' report: requirements, their verdicts, and the forms a CI reads.

A kit (``conformance`` for an agent, the stub agent's checking mode for a client) holds a peer to
:class:`Requirement` s, each citing the spec's section it comes from, and ends with one
:class:`Verdict` per requirement: ``passed``, ``failed`` (its detail quotes the message that broke
it), ``advised`` (the peer does not do what a requirement of the level ADVICE asks: a note, never
a failure) or ``not applicable`` (its detail says why: the peer advertised no such capability, or
gave the kit no chance to test it; never "passed"). This module only prints them:

* :func:`report_lines`: one line per requirement, for a terminal or a CI log;
* :func:`report_json`: the whole report as a JSON object (``--json``);
* :func:`write_junit`: JUnit XML, one test case per requirement (``--junit FILE``);
* :func:`exit_status`: 0 when every MUST holds, 1 when one fails.

A requirement's level is its text's (:func:`level_for`): MUST or SHOULD where the sentence it
cites binds the peer under test with that keyword; ADVICE where it binds the other peer, or binds
nobody with a keyword of RFC 2119 (what a good peer does beyond the text). A failed SHOULD is
reported, but does not fail the run; advice not followed is a note.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ADVICE",
    "ADVISED",
    "FAILED",
    "KEYWORDS",
    "LEVELS",
    "MUST",
    "NOT_APPLICABLE",
    "OUTCOMES",
    "PASSED",
    "PEERS",
    "SHOULD",
    "Requirement",
    "Verdict",
    "exit_status",
    "level_for",
    "report_json",
    "report_lines",
    "summary",
    "write_junit",
]

MUST, SHOULD, ADVICE = "MUST", "SHOULD", "ADVICE"
LEVELS = (MUST, SHOULD, ADVICE)
PASSED, FAILED, ADVISED, NOT_APPLICABLE = "passed", "failed", "advised", "not applicable"
OUTCOMES = (PASSED, FAILED, ADVISED, NOT_APPLICABLE)
#: How each outcome opens its line.
_MARKS = {PASSED: "PASS", FAILED: "FAIL", ADVISED: "NOTE", NOT_APPLICABLE: "N/A "}
#: The keywords of RFC 2119 (in capitals: RFC 8174), and the level each gives the peer it binds;
#: "" is a text with none (a lower-case "should" is none).
KEYWORDS = {
    "MUST": MUST,
    "MUST NOT": MUST,
    "REQUIRED": MUST,
    "SHALL": MUST,
    "SHALL NOT": MUST,
    "SHOULD": SHOULD,
    "SHOULD NOT": SHOULD,
    "RECOMMENDED": SHOULD,
    "MAY": ADVICE,
    "OPTIONAL": ADVICE,
    "": ADVICE,
}
#: Whom a sentence binds: one peer, or either (a rule of both, or of the role, such as JSON-RPC's
#: server, that the peer under test plays).
PEERS = ("agent", "client", "either")


def level_for(binds: str, keyword: str, peer: str) -> str:
    """The level of a requirement on ``peer`` whose text binds ``binds`` with ``keyword``: the
    keyword's where it binds ``peer`` (or either), ADVICE where it binds the other peer or where
    no sentence of the text is cited (``binds`` and ``keyword`` both "")."""
    if keyword not in KEYWORDS:
        raise ValueError(f"{keyword!r} is not a keyword of RFC 2119")
    if not binds and not keyword:
        return ADVICE  # no sentence of the text: what a good peer does
    if binds not in PEERS or peer not in PEERS[:2]:
        raise ValueError(f"binds {binds!r}, peer {peer!r}: each is one of {', '.join(PEERS)}")
    return KEYWORDS[keyword] if binds in (peer, "either") else ADVICE


@dataclass(frozen=True)
class Requirement:
    """One rule of the spec a peer is held to."""

    id: str  # "initialization.version-negotiation"
    level: str  # "MUST" | "SHOULD" | "ADVICE"
    section: str  # the spec's section cited (doc page and heading, or URL)
    text: str  # what the peer must do, in a sentence
    binds: str = ""  # the peer the cited sentence binds: "agent" | "client" | "either"
    keyword: str = ""  # the keyword of RFC 2119 it binds with ("MUST NOT", ...; "" none)
    says: str = ""  # what the cited sentence asks, in the kit's own words

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(
                f"requirement {self.id}: level {self.level!r} is not one of {', '.join(LEVELS)}"
            )


@dataclass(frozen=True)
class Verdict:
    """What the kit found of one requirement."""

    requirement: Requirement
    outcome: str  # "passed" | "failed" | "not applicable"
    detail: str = ""  # failed: the message that broke it, quoted; not applicable: why

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(
                f"requirement {self.requirement.id}: outcome {self.outcome!r} is not one of "
                f"{', '.join(OUTCOMES)}"
            )
        if self.outcome == FAILED and self.requirement.level == ADVICE:
            object.__setattr__(self, "outcome", ADVISED)  # advice not followed is no failure

    @property
    def breaks(self) -> bool:
        """A MUST that failed: the run fails."""
        return self.outcome == FAILED and self.requirement.level == MUST


def summary(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """How many verdicts of each outcome (``advised``: advice not followed), and how many failed
    MUSTs."""
    counts = dict.fromkeys(OUTCOMES, 0)
    failed_must = 0
    for verdict in verdicts:
        counts[verdict.outcome] += 1
        failed_must += verdict.breaks
    return {**counts, "failed MUST": failed_must}


def report_lines(verdicts: Iterable[Verdict]) -> list[str]:
    """One line per requirement (``PASS MUST   id  section: detail``; advice not followed opens
    ``NOTE ADVICE``), then a line of totals."""
    verdicts = list(verdicts)
    width = max((len(v.requirement.id) for v in verdicts), default=0)
    lines = []
    for verdict in verdicts:
        requirement = verdict.requirement
        line = f"{_MARKS[verdict.outcome]} {requirement.level:<6} {requirement.id:<{width}}  {requirement.section}"
        if verdict.detail:
            line += ": " + " ".join(verdict.detail.split())
        lines.append(line)
    counts = summary(verdicts)
    advised = f"{counts[ADVISED]} advised, " if counts[ADVISED] else ""
    lines.append(
        f"{counts[PASSED]} passed, {counts[FAILED]} failed ({counts['failed MUST']} MUST), "
        f"{advised}{counts[NOT_APPLICABLE]} not applicable"
    )
    return lines


def report_json(verdicts: Iterable[Verdict], *, subject: str) -> dict[str, Any]:
    """The whole report: what was tested, each requirement and its verdict, the totals and the
    exit status."""
    verdicts = list(verdicts)
    return {
        "subject": subject,
        "requirements": [
            {
                "id": v.requirement.id,
                "level": v.requirement.level,
                "section": v.requirement.section,
                "binds": v.requirement.binds,
                "keyword": v.requirement.keyword,
                "says": v.requirement.says,
                "text": v.requirement.text,
                "outcome": v.outcome,
                "detail": v.detail,
            }
            for v in verdicts
        ],
        "summary": summary(verdicts),
        "exitStatus": exit_status(verdicts),
    }


def write_junit(verdicts: Iterable[Verdict], path: str | os.PathLike[str], *, suite: str) -> None:
    """Write JUnit XML to ``path``: one test suite, one test case per requirement (its class the
    requirement's level, ``<suite>.MUST``, ``.SHOULD`` or ``.ADVICE``; its name the id); a failure
    is ``<failure>``, a requirement not applicable ``<skipped>``, advice not followed a case that
    passes with the advice as its ``advice`` property and its ``<system-out>`` (a CI counts no
    failure for it, and shows it). Written whole or not at all."""
    verdicts = list(verdicts)
    counts = summary(verdicts)
    root = ET.Element("testsuites", name=suite)
    element = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(verdicts)),
        failures=str(counts[FAILED]),
        errors="0",
        skipped=str(counts[NOT_APPLICABLE]),
    )
    for verdict in verdicts:
        requirement = verdict.requirement
        case = ET.SubElement(
            element, "testcase", classname=f"{suite}.{requirement.level}", name=requirement.id
        )
        properties = ET.SubElement(case, "properties")
        properties.extend(
            [
                ET.Element("property", name="section", value=requirement.section),
                ET.Element("property", name="requirement", value=requirement.text),
            ]
        )
        if requirement.binds:
            properties.extend(
                ET.Element("property", name=name, value=value)
                for name, value in (
                    ("binds", requirement.binds),
                    ("keyword", requirement.keyword or "none"),
                    ("says", requirement.says),
                )
            )
        if verdict.outcome == ADVISED:
            properties.append(ET.Element("property", name="advice", value=verdict.detail))
            ET.SubElement(case, "system-out").text = (
                f"advice: {verdict.detail}\n{requirement.text} ({requirement.section})"
            )
        elif verdict.outcome == FAILED:
            ET.SubElement(case, "failure", message=verdict.detail, type=requirement.level).text = (
                f"{requirement.text} ({requirement.section})\n{verdict.detail}"
            )
        elif verdict.outcome == NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=verdict.detail)
    ET.indent(root)
    data = ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".junit-", suffix=".xml")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def exit_status(verdicts: Iterable[Verdict]) -> int:
    """0 when every MUST holds (a failed SHOULD aside), 1 when one fails."""
    return 1 if any(verdict.breaks for verdict in verdicts) else 0
