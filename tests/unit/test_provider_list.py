"""actors.provider_list: provider.list's answer, from files only (no CLI is run)."""
import json
import os

from actors.provider_list import provider_list


def claude_login(home, entry: dict | None = None):
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, ".credentials.json"), "w") as handle:
        json.dump({"claudeAiOauth": entry if entry is not None else {"accessToken": "sk-ant-oat01-x"}}, handle)


def listing(tmp_path, accounts=None, last=None, env=None, commands=None):
    env = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "bin"), **(env or {})}
    commands = commands or {"claude": ("claude",), "codex": ("codex",)}
    return {entry["id"]: entry for entry in provider_list(accounts or {}, last or {}, commands, env)}


def test_each_provider_lists_its_default_account_first_then_the_manifests_by_name(tmp_path):
    work, personal = str(tmp_path / "claude-work"), str(tmp_path / "claude-personal")
    claude_login(work)
    found = listing(tmp_path, {"claude": {"work": work, "personal": personal}}, {"claude": "work"})
    assert found["claude"] == {
        "id": "claude", "label": "Claude Code", "available": False, "lastAccount": "work",
        "accounts": [{"name": None, "configHome": str(tmp_path / "home" / ".claude"), "signedIn": False,
                      "default": True},
                     {"name": "personal", "configHome": personal, "signedIn": False},
                     {"name": "work", "configHome": work, "signedIn": True}]}
    assert found["codex"]["accounts"] == [{"name": None, "configHome": str(tmp_path / "home" / ".codex"),
                                           "signedIn": False, "default": True}]
    assert found["codex"]["lastAccount"] is None and found["codex"]["label"] == "Codex"


def test_a_provider_is_available_when_its_executable_is_on_devhostds_path(tmp_path):
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "codex"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    found = listing(tmp_path)
    assert found["codex"]["available"] and not found["claude"]["available"]


def test_claude_is_signed_in_by_an_oauth_entry_only(tmp_path):
    homes = {name: str(tmp_path / name) for name in ("oauth", "empty", "other", "broken")}
    claude_login(homes["oauth"])
    claude_login(homes["empty"], {"accessToken": ""})
    os.makedirs(homes["other"])
    with open(os.path.join(homes["other"], ".credentials.json"), "w") as handle:
        json.dump({"mcpOAuth": {}}, handle)
    os.makedirs(homes["broken"])
    with open(os.path.join(homes["broken"], ".credentials.json"), "w") as handle:
        handle.write("{not json")
    accounts = listing(tmp_path, {"claude": homes})["claude"]["accounts"]
    assert {a["name"]: a["signedIn"] for a in accounts} == {None: False, "oauth": True, "empty": False,
                                                            "other": False, "broken": False}


def test_an_api_key_in_devhostds_environment_signs_in_claudes_default_account_only(tmp_path):
    work = str(tmp_path / "work")
    os.makedirs(work)
    accounts = listing(tmp_path, {"claude": {"work": work}}, env={"ANTHROPIC_API_KEY": "sk-x"})["claude"]["accounts"]
    assert [(a["name"], a["signedIn"]) for a in accounts] == [(None, True), ("work", False)]


def test_codex_is_signed_in_by_its_stored_login(tmp_path):
    work = tmp_path / "codex-work"
    work.mkdir()
    (work / "auth.json").write_text("{}")
    default = tmp_path / "home" / ".codex"
    default.mkdir(parents=True)
    accounts = listing(tmp_path, {"codex": {"work": str(work)}})["codex"]["accounts"]
    assert [(a["name"], a["signedIn"]) for a in accounts] == [(None, False), ("work", True)]
