"""The ACP agents the tests drive (OpenCode, Gemini CLI), pinned in tests/peers.sh like the other peers.

``opencode_env(home, mock_url)`` is the whole environment for one isolated ``opencode acp``
run against a ``MockOpenAI`` (tests/mock_openai.py): nothing of the developer's own
environment (keys, HOME, config dirs, proxies) gets through. OpenCode reads its config from
``OPENCODE_CONFIG``; the provider ``mock`` is AI SDK's ``@ai-sdk/openai`` (bundled in the
binary: nothing is installed at run time) with ``baseURL`` set to the mock, and that package
speaks the Responses API (``POST {baseURL}/responses``), so the Codex mock serves it unchanged
(measured with opencode-ai 1.18.33: tests/fixtures/acp/opencode/README.md).

``gemini_env(home, mock_url)`` is the same for ``gemini --acp`` against a ``MockGemini``
(tests/mock_gemini.py): an API key (any: the mock reads none) and ``GOOGLE_GEMINI_BASE_URL``
send every model request to the mock (measured with @google/gemini-cli 0.61.0).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.mock_openai import Reply, _new_id
from tests.peers import PEERS_BIN, PEERS_SH, PeersMissing

# OPENCODE_BIN: another install of the same pinned version (a scratch folder while recording).
OPENCODE = Path(os.environ.get("OPENCODE_BIN") or PEERS_BIN / "opencode")
MODEL = "mock/gpt-5.5"  # <provider>/<model>, as OpenCode names models (session/new's configOptions)
# OpenCode asks the model for a title of every new session with this system prompt, beside the
# turn's own request: route it (MockOpenAI.route) so it never takes the turn's scripted reply.
TITLE_MARKER = "You are a title generator"


# GEMINI_BIN: another install of the same pinned version (a scratch folder while developing).
GEMINI = Path(os.environ.get("GEMINI_BIN") or PEERS_BIN / "gemini")


def tool_reply(name: str, **arguments):
    """A mock model reply (tests/mock_openai.py) calling one of OpenCode's own tools (bash,
    apply_patch, todowrite...) with ``arguments``."""
    return Reply([{"type": "function_call", "name": name, "call_id": _new_id("call_mock_"),
                   "arguments": json.dumps(arguments)}])


def pinned_opencode() -> str:
    return re.search(r"^OPENCODE_VERSION=(\S+)$", PEERS_SH.read_text(), re.M).group(1)


def require_opencode() -> None:
    _require(OPENCODE)


def pinned_gemini() -> str:
    return re.search(r"^GEMINI_VERSION=(\S+)", PEERS_SH.read_text(), re.M).group(1)


def require_gemini() -> None:
    _require(GEMINI)


def _require(exe: Path) -> None:
    if not (exe.exists() and os.access(exe, os.X_OK)):
        raise PeersMissing(f"{exe} is missing: install the pinned peers with `bash tests/peers.sh`.")


def opencode_config(mock_url: str, permission: dict | None = None) -> dict:
    """OpenCode's config for the mock: one provider, its one model the default, nothing shared
    or updated. ``permission``: OpenCode's own rules (``{"bash": "ask", "edit": "ask"}`` makes it
    ask through session/request_permission; its default lets both run unasked)."""
    config = {"$schema": "https://opencode.ai/config.json", "model": MODEL, "small_model": MODEL,
              "autoupdate": False, "share": "disabled",
              "provider": {"mock": {"npm": "@ai-sdk/openai", "name": "Mock",
                                    "options": {"baseURL": mock_url, "apiKey": "sk-mock"},
                                    "models": {"gpt-5.5": {
                                        "name": "GPT 5.5 (mock)",
                                        # Without these OpenCode turns a prompt's image into an
                                        # "ERROR: Cannot read" text for the model (measured).
                                        "attachment": True,
                                        "modalities": {"input": ["text", "image"], "output": ["text"]}}}}}}
    if permission:
        config["permission"] = permission
    return config


def opencode_env(home, mock_url: str, permission: dict | None = None) -> dict:
    """A complete environment for ``opencode acp`` with HOME=``home``: its config written to
    ``<home>/opencode.json`` (OPENCODE_CONFIG), every XDG folder (its sessions database among
    them) and TMPDIR inside ``home``, the models.dev fetch and the self-update off (no network
    but loopback)."""
    home = Path(home)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    config = home / "opencode.json"
    config.write_text(json.dumps(opencode_config(mock_url, permission), indent=1))
    return {"PATH": f"{OPENCODE.parent}:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home / "tmp"),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
            "OPENCODE_CONFIG": str(config), "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}


# Gemini CLI's own settings (<home>/.gemini/settings.json) for a test: no update check or
# notification, no usage statistics, no telemetry (each would reach Google's servers).
GEMINI_SETTINGS = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}


def gemini_env(home, mock_url: str) -> dict:
    """A complete environment for ``gemini --acp`` with HOME=``home``: its settings in
    ``<home>/.gemini/`` (its sessions are kept there too), TMPDIR inside
    ``home``, the model API at ``mock_url``, and the CLI kept in one process (it would otherwise
    relaunch itself with a larger heap: a second process the test would have to end)."""
    home = Path(home)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=1))
    return {"PATH": f"{GEMINI.parent}:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home / "tmp"),
            "GEMINI_API_KEY": "mock-key", "GOOGLE_GEMINI_BASE_URL": mock_url,
            "GEMINI_CLI_NO_RELAUNCH": "1", "GEMINI_TELEMETRY_ENABLED": "false"}
