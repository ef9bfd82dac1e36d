"""Two logins per CLI for the tests of accounts: each a config home of its own, named in the
stack's manifest (the setup measured in tests/fixtures/record_modes.py ``claude_accounts`` /
``codex_accounts``).

Claude Code: each home has a ``.credentials.json`` OAuth login, and devhostd's environment has
no ANTHROPIC_API_KEY (the CLI would use it under every home). Codex: each CODEX_HOME has its own
``auth.json`` key and a provider that takes the login's key (``requires_openai_auth``).
"""
from __future__ import annotations

import json

import pytest

from tests.peers import codex_env

NAMES = ("work", "personal")


@pytest.fixture
def homes(tmp_path, stack, openai):
    """{(provider, name): config home}, each with its own login."""
    made = {}
    for name in NAMES:
        claude_home = tmp_path / f"claude-{name}"
        claude_home.mkdir()
        (claude_home / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {
            "accessToken": f"sk-ant-oat01-{name}", "refreshToken": f"sk-ant-ort01-{name}",
            "expiresAt": 4102444800000, "scopes": ["user:inference", "user:profile"], "subscriptionType": "pro"}}))
        env = codex_env(tmp_path / f"codex-{name}", openai.url, approval_policy="on-request",
                        project_dirs=(stack / "project",))
        codex_home = tmp_path / f"codex-{name}" / ".codex"
        config = (codex_home / "config.toml").read_text()
        (codex_home / "config.toml").write_text(
            config.replace('env_key = "MOCK_OPENAI_API_KEY"', "requires_openai_auth = true"))
        (codex_home / "auth.json").write_text(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": f"sk-{name}-key"}))
        assert env["CODEX_HOME"] == str(codex_home)
        made["claude", name], made["codex", name] = str(claude_home), str(codex_home)
    with open(stack / "devhost.toml", "a") as manifest:
        for (provider, name), home in made.items():
            manifest.write(f"[accounts.{provider}.{name}]\nconfig_home = {json.dumps(home)}\n")
    return made


def without_api_key(env: dict) -> dict:
    """A daemon environment without the API key every Claude Code home would use."""
    return {key: value for key, value in env.items() if key != "ANTHROPIC_API_KEY"}


def turn_keys(server, since: int = 0) -> list[str]:
    """The key each model request since ``since`` came with."""
    return [entry["headers"].get("authorization") or entry["headers"].get("x-api-key")
            for entry in server.log[since:] if entry["kind"] == "turn"]
