"""``devhostd doctor`` with the pinned CLIs, a missing CLI, a CLI of another version (a tiny
wrapper that reports one and runs the real CLI otherwise), no CLI at all, and an unreachable
upstream: what it says, and its exit status."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys

from tests.integration.daemon import DEVHOSTD
from tests.peers import CLAUDE, PEERS_BIN
from devhostd.doctor import compare_versions


def doctor(stack, env, *args) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(DEVHOSTD), "doctor", *args], cwd=stack, env=env,
                          capture_output=True, text=True, timeout=180)
    return done.returncode, done.stdout + done.stderr


def with_chat_commands(stack, **commands) -> None:
    manifest = stack / "devhost.toml"
    text = manifest.read_text()
    for harness, command in commands.items():
        text += f"\n[devtools.chat.{harness}]\ncommand = {json.dumps(command)}\n"
    manifest.write_text(text)


def test_the_pinned_clis_signed_in_and_a_routed_stack_can_chat(stack, daemon_env):
    code, out = doctor(stack, daemon_env, "--state-dir", str(stack / "state"))
    assert code == 0, out
    assert out.count("the version devhostd is tested with") == 2
    assert "answers without a prompt" in out and "signed in (ANTHROPIC_API_KEY)" in out
    assert "uses the provider 'mock' with its key (MOCK_OPENAI_API_KEY)" in out
    assert re.search(r"app\.localhost: folder .*project", out) and "Chat can work with 2 CLIs." in out


def test_a_missing_cli_is_named_with_what_to_do_and_the_other_still_chats(stack, daemon_env):
    with_chat_commands(stack, codex=["no-such-codex"])
    code, out = doctor(stack, daemon_env)
    assert code == 0, out
    assert "[FAIL] not found: no-such-codex was not found on the daemon's PATH; install Codex" in out
    assert "Chat can work with 1 CLI (fix what is marked FAIL above to use the other)." in out


def test_a_cli_of_another_version_is_named_against_the_tested_one(stack, daemon_env, tmp_path):
    wrapper = tmp_path / "claude-next"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = "--version" ] && {{ echo "2.2.0 (Claude Code)"; exit 0; }}\n'
                       f'exec {CLAUDE} "$@"\n')
    wrapper.chmod(0o755)
    with_chat_commands(stack, **{"claude-code": [str(wrapper)]})
    code, out = doctor(stack, daemon_env)
    assert code == 0, out
    assert "[warn] version: 2.2.0 is newer than the tested 2.1.328" in out
    assert compare_versions("3.0.0", "2.1.328")[1].startswith("3.0.0 is a different major version")
    assert compare_versions("2.1.300", "2.1.328")[1].startswith("2.1.300 is older")


def test_without_any_cli_chat_cannot_work_and_the_exit_status_says_so(stack, daemon_env):
    env = {**daemon_env, "PATH": "/usr/bin:/bin"}
    assert (PEERS_BIN / "claude").as_posix() not in env["PATH"]
    code, out = doctor(stack, env)
    assert code == 1, out
    assert out.count("[FAIL] not found") == 2 and "Chat cannot work" in out


def test_an_unreachable_upstream_and_a_state_folder_others_can_read_are_named(stack, daemon_env):
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text().replace('root = "project"\n', 'root = "project"\n'
                                                     'upstream = "http://127.0.0.1:9"\n', 1))
    state = stack / "state"
    state.mkdir()
    os.chmod(state, 0o755)
    (state / "core-token").write_text("secret\n")
    os.chmod(state / "core-token", 0o644)
    code, out = doctor(stack, daemon_env, "--state-dir", str(state))
    assert "[warn] app.localhost upstream: http://127.0.0.1:9 is not reachable" in out
    assert f"[FAIL] permissions: 0o755 lets others read conversations: chmod 700 {state}" in out
    assert f"[FAIL] chat-core secret: others may read {state / 'core-token'}: chmod 600" in out
    assert code == 1, out


def test_every_account_of_the_manifest_is_checked_for_its_home_and_its_login(stack, daemon_env, tmp_path):
    signed, unsigned, codex_home = tmp_path / "claude-work", tmp_path / "claude-personal", tmp_path / "codex-work"
    for home in (signed, unsigned, codex_home):
        home.mkdir()
    (signed / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-x"}}))
    (codex_home / "auth.json").write_text("{}")
    missing = tmp_path / "nowhere"
    with open(stack / "devhost.toml", "a") as manifest:
        for provider, name, home in (("claude", "work", signed), ("claude", "personal", unsigned),
                                     ("claude", "gone", missing), ("codex", "work", codex_home)):
            manifest.write(f"[accounts.{provider}.{name}]\nconfig_home = {json.dumps(str(home))}\n")
    code, out = doctor(stack, daemon_env, "--state-dir", str(stack / "state"))
    assert f"[  ok] work ({signed}): signed in (.credentials.json holds a login)" in out
    assert f"[FAIL] personal ({unsigned}): not signed in: run `CLAUDE_CONFIG_DIR={unsigned} claude` and log in" in out
    assert f"[FAIL] gone ({missing}): the config home does not exist" in out
    assert "fix [accounts.claude.gone] config_home in the manifest" in out
    assert f"[  ok] work ({codex_home}): signed in (auth.json holds a login)" in out
    # Both CLIs still chat under their default accounts; the person hears which accounts cannot.
    assert code == 0, out
    assert "A chat under an account marked FAIL above cannot work until it is fixed." in out


def test_an_acp_agent_is_checked_by_its_handshake_alone_and_its_measured_abilities_reported(stack, daemon_env,
                                                                                            tmp_path):
    from tests.acp_peers import OPENCODE, opencode_env, require_opencode
    require_opencode()
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text() + f'\n[devtools.chat.opencode]\nprotocol = "acp"\n'
                        f'command = [{json.dumps(str(OPENCODE))}, "acp"]\nlabel = "OpenCode"\n')
    env = {**daemon_env, **{k: v for k, v in opencode_env(tmp_path / "oc", "http://127.0.0.1:9/v1").items()
                            if k != "PATH"}}
    code, out = doctor(stack, env, "--state-dir", str(stack / "state"))
    assert code == 0, out
    section = out[out.index("\nOpenCode\n"):]
    assert "[  ok] version: 1.18.33, the version devhostd is tested with" in section
    assert "answers ACP initialize (protocol 1) without a prompt; it is OpenCode 1.18.33" in section
    assert "advertises: resume (session/load), images, embedded context" in section
    assert "no session yet: what it does (cancel, permissions, images, resume) is measured" in section
    assert "Chat can work with 3 CLIs or agents." in out
    # No session was opened to check it: nothing landed in the agent's own history (its
    # sessions database has none, where a session/new makes one: measured).
    for database in (tmp_path / "oc").rglob("opencode.db"):
        with sqlite3.connect(database) as db:
            assert db.execute("select count(*) from session").fetchone() == (0,)
    # What a session measured is shown once there is one.
    (stack / "state" / "core").mkdir(parents=True, exist_ok=True)
    (stack / "state" / "core" / "agent-abilities.json").write_text(json.dumps(
        {"opencode": {"loadSession": True, "seen": {"cancel": True, "images": False}, "measuredAt": 1}}))
    code, out = doctor(stack, env, "--state-dir", str(stack / "state"))
    assert "[  ok] seen: cancel: yes: session/cancel ended the prompt" in out
    assert "[warn] seen: images: no: a prompt with an image was taken" in out
