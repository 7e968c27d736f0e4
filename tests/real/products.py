"""The real products `make conformance-real` holds the kits against, and how each is set up.

Each agent gets a throwaway HOME (and every config folder its product reads below it), the
local fake of the model API it speaks (`fake_models.py`), and the settings that keep it off the
network: its telemetry, update checks and model catalogue downloads turned off. Each client
names the checking stub agent in its own way: a flag, a registry file, or a library call.
The versions are pinned in `package-lock.json` and `requirements.txt` beside this file.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_BIN = HERE / "node_modules" / ".bin"
REAL_BIN = HERE / ".venv" / "bin"
ACPC_BIN = HERE / ".venv-acpc" / "bin"


@dataclass(frozen=True)
class Place:
    """Where one product runs: its HOME, the folder it works in, the fake model's URL."""

    home: Path
    cwd: Path
    fake: str
    stub_agent: Path = Path()  # the checking stub agent's command, for a client


@dataclass(frozen=True)
class Product:
    name: str
    kind: str  # "agent" or "client"
    package: str
    registry: str  # "npm" or "pypi"
    command: Callable[[Place], list[str]]
    setup: Callable[[Place], dict[str, str]] = lambda place: {}
    api: str = ""  # the model API its fake speaks (agents)
    note: str = ""
    python: Path = REAL_BIN / "python"  # a PyPI product's interpreter, for its version


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- agents ---------------------------------------------------------------------------------


def claude_setup(place: Place) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": place.fake,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "ANTHROPIC_MODEL": "claude-fake",
        "CLAUDE_CONFIG_DIR": str(place.home / ".claude"),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Claude Code refuses to skip permission prompts as root unless it is told it runs in
        # a sandbox; the harness runs in a network namespace of its own, a throwaway HOME.
        "IS_SANDBOX": "1",
    }


def codex_setup(place: Place) -> dict[str, str]:
    codex_home = place.home / ".codex"
    write(codex_home / "config.toml", "\n".join([
        'model = "gpt-fake"',
        'model_provider = "fake"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "{place.fake}/v1"',
        'wire_api = "responses"',
        'env_key = "FAKE_API_KEY"',
        "",
    ]))
    return {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "fake"}


def gemini_setup(place: Place) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    write(place.home / ".gemini" / "settings.json", json.dumps(settings))
    return {
        "GEMINI_API_KEY": "fake",
        "GOOGLE_GEMINI_BASE_URL": place.fake,
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }


def qwen_setup(place: Place) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True},
    }
    write(place.home / ".qwen" / "settings.json", json.dumps(settings))
    return {"OPENAI_API_KEY": "fake", "OPENAI_BASE_URL": place.fake + "/v1",
            "OPENAI_MODEL": "qwen-fake"}


def xdg(place: Place) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(place.home / ".config"),
        "XDG_DATA_HOME": str(place.home / ".local" / "share"),
        "XDG_CACHE_HOME": str(place.home / ".cache"),
        "XDG_STATE_HOME": str(place.home / ".local" / "state"),
    }


def opencode_setup(place: Place) -> dict[str, str]:
    config = {
        "autoupdate": False,
        "share": "disabled",
        "model": "fake/fake-model",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": place.fake + "/v1", "apiKey": "fake"},
            "models": {"fake-model": {"name": "Fake"}},
        }},
    }
    return dict(xdg(place), OPENCODE_CONFIG_CONTENT=json.dumps(config),
                OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1",
                OPENCODE_DISABLE_LSP_DOWNLOAD="1")


def fast_agent_setup(place: Place) -> dict[str, str]:
    return dict(xdg(place), GENERIC_BASE_URL=place.fake + "/v1", GENERIC_API_KEY="fake")


AGENTS = [
    Product("claude-agent-acp", "agent", "@agentclientprotocol/claude-agent-acp", "npm",
            lambda p: [str(NODE_BIN / "claude-agent-acp")], claude_setup,
            api="Anthropic Messages"),
    Product("codex-acp", "agent", "@zed-industries/codex-acp", "npm",
            lambda p: [str(NODE_BIN / "codex-acp")], codex_setup, api="OpenAI Responses"),
    Product("gemini-cli", "agent", "@google/gemini-cli", "npm",
            lambda p: [str(NODE_BIN / "gemini"), "--acp"], gemini_setup, api="Gemini"),
    Product("qwen-code", "agent", "@qwen-code/qwen-code", "npm",
            lambda p: [str(NODE_BIN / "qwen"), "--acp"], qwen_setup,
            api="OpenAI Chat Completions"),
    Product("opencode", "agent", "opencode-ai", "npm",
            lambda p: [str(NODE_BIN / "opencode"), "acp"], opencode_setup,
            api="OpenAI Chat Completions (its openai-compatible provider)"),
    Product("fast-agent", "agent", "fast-agent-mcp", "pypi",
            lambda p: [str(REAL_BIN / "fast-agent-acp"), "--model", "generic.qwen-fake"],
            fast_agent_setup, api="OpenAI Chat Completions (its generic provider)"),
]


# --- clients --------------------------------------------------------------------------------

PROMPT = "Say hello."


def acpc_setup(place: Place) -> dict[str, str]:
    env = xdg(place)
    agent = "\n".join([
        'identity = "stub"',
        'name = "Checking stub agent"',
        'author = "acpgen"',
        f"run_command = {json.dumps(shlex.join([str(place.stub_agent)]))}",
        'install_command = "true"',
        "",
    ])
    write(Path(env["XDG_CONFIG_HOME"]) / "acpc" / "agents" / "stub.toml", agent)
    return env


CLIENTS = [
    Product("acpx", "client", "acpx", "npm",
            lambda p: [str(NODE_BIN / "acpx"), "--cwd", str(p.cwd), "--approve-all",
                       "--agent", shlex.join([str(p.stub_agent)]), "exec", PROMPT],
            note="the agent named by `--agent COMMAND`, one-shot `exec`"),
    Product("acp-client", "client", "acp-client", "pypi",
            lambda p: [str(REAL_BIN / "python"), str(HERE / "drive_acp_client.py"),
                       str(p.stub_agent), str(p.cwd), PROMPT],
            note="a library: `Agent([COMMAND], cwd).ask(...)` (drive_acp_client.py)"),
    Product("acpc", "client", "acpc", "pypi",
            lambda p: [str(ACPC_BIN / "acpc"), "prompt", "stub", PROMPT, "--cwd", str(p.cwd)],
            acpc_setup, note="the agent named in its registry, `acpc/agents/stub.toml`",
            python=ACPC_BIN / "python"),
    Product("acplint", "client", "acplint", "pypi",
            lambda p: [str(REAL_BIN / "acplint"), "--agent", str(p.stub_agent), "--cwd",
                       str(p.cwd), "--output", "json", "--timeout", "20"],
            note="the agent named by `--agent COMMAND`"),
]

PRODUCTS = AGENTS + CLIENTS
