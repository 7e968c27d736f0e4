"""What the ``Agent`` base does by default, read from the schema (``acpgen/model/agent_duties.py``):
the bundled schema's initialize names the agent, session/new answers an id, and each request
that creates, opens, names or ends a session is marked; a schema where no request opens one has no
session check (every prompt would be refused), and one without ``agentInfo`` no default
``initialize``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from acpgen import Options
from acpgen.pipeline import build_spec
from acpgen.schema.bundled import bundled_schema


def _defaults(schema: Path | None = None):  # type: ignore[no-untyped-def]
    spec, _ = build_spec(Options(schema=schema))
    return spec.role("agent").defaults, {m.wire_name for m in spec.methods}


def test_the_bundled_schemas_agent_has_every_default():
    defaults, _ = _defaults()
    assert defaults.initialize == ("InitializeResponse", "agent_info", "Implementation")
    assert defaults.session_new == ("NewSessionResponse", "session_id")
    assert dict(defaults.sessions) == {
        "session/new": "CREATES", "session/fork": "CREATES", "session/load": "OPENS", "session/resume": "OPENS",
        "session/prompt": "NAMES", "session/set_mode": "NAMES", "session/set_config_option": "NAMES",
        "session/set_model": "NAMES", "session/close": "CLOSES",
    }  # not nes/start, whose result has a sessionId of another kind of session


def test_without_a_request_that_opens_sessions_or_without_agent_info_the_defaults_step_aside(tmp_path):
    document = json.loads(bundled_schema().read_text())
    for name in ("NewSessionRequest", "NewSessionResponse", "LoadSessionRequest", "LoadSessionResponse",
                 "ResumeSessionRequest", "ResumeSessionResponse", "ForkSessionRequest", "ForkSessionResponse"):
        document["$defs"][name].pop("x-method", None)
    trimmed = copy.deepcopy(document)
    del trimmed["$defs"]["InitializeResponse"]["properties"]["agentInfo"]
    (tmp_path / "schema.json").write_text(json.dumps(trimmed))
    defaults, methods = _defaults(tmp_path / "schema.json")
    assert "session/prompt" in methods and "session/new" not in methods and "initialize" in methods
    assert (defaults.initialize, defaults.session_new, defaults.sessions) == (None, None, ())
