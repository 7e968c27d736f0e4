"""The conformance kits' report: requirements, their verdicts, and the forms a CI reads.

A kit (``conformance`` for an agent, the stub agent's checking mode for a client) holds a peer to
:class:`Requirement` s, each citing the spec's section it comes from, and ends with one
:class:`Verdict` per requirement: ``passed``, ``failed`` (its detail quotes the message that broke
it) or ``not applicable`` (its detail says why: the peer advertised no such capability, or gave
the kit no chance to test it; never "passed"). This module only prints them:

* :func:`report_lines`: one line per requirement, for a terminal or a CI log;
* :func:`report_json`: the whole report as a JSON object (``--json``);
* :func:`write_junit`: JUnit XML, one test case per requirement (``--junit FILE``);
* :func:`exit_status`: 0 when every MUST holds, 1 when one fails.

A failed SHOULD is reported, but does not fail the run.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FAILED",
    "LEVELS",
    "MUST",
    "NOT_APPLICABLE",
    "OUTCOMES",
    "PASSED",
    "SHOULD",
    "Requirement",
    "Verdict",
    "exit_status",
    "report_json",
    "report_lines",
    "summary",
    "write_junit",
]

MUST, SHOULD = "MUST", "SHOULD"
LEVELS = (MUST, SHOULD)
PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"
OUTCOMES = (PASSED, FAILED, NOT_APPLICABLE)
#: How each outcome opens its line.
_MARKS = {PASSED: "PASS", FAILED: "FAIL", NOT_APPLICABLE: "N/A "}


@dataclass(frozen=True)
class Requirement:
    """One rule of the spec a peer is held to."""

    id: str  # "initialization.version-negotiation"
    level: str  # "MUST" | "SHOULD"
    section: str  # the spec's section cited (doc page and heading, or URL)
    text: str  # what the peer must do, in a sentence

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

    @property
    def breaks(self) -> bool:
        """A MUST that failed: the run fails."""
        return self.outcome == FAILED and self.requirement.level == MUST


def summary(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """How many verdicts of each outcome, and how many failed MUSTs."""
    counts = dict.fromkeys(OUTCOMES, 0)
    failed_must = 0
    for verdict in verdicts:
        counts[verdict.outcome] += 1
        failed_must += verdict.breaks
    return {**counts, "failed MUST": failed_must}


def report_lines(verdicts: Iterable[Verdict]) -> list[str]:
    """One line per requirement (``PASS MUST   id  section: detail``), then a line of totals."""
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
    lines.append(
        f"{counts[PASSED]} passed, {counts[FAILED]} failed ({counts['failed MUST']} MUST), "
        f"{counts[NOT_APPLICABLE]} not applicable"
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
    requirement's level, its name the id); a failure is ``<failure>``, a requirement not
    applicable ``<skipped>``. Written whole or not at all."""
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
        ET.SubElement(case, "properties").extend(
            [
                ET.Element("property", name="section", value=requirement.section),
                ET.Element("property", name="requirement", value=requirement.text),
            ]
        )
        if verdict.outcome == FAILED:
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
