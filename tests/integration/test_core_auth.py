"""Who may ask the chat core, on a real devhostd with the real Claude Code behind it: the
person's programs with the secret kept in ``<state-dir>/core-token``, an agent with its own
chat's ``DEVHOSTD_TOKEN`` (its visuals, nothing else), and nobody without one."""
from __future__ import annotations

import json
import os
import stat

import pytest
import websocket

from tests.integration.daemon import processes_with_env, wait_until
from tests.mock_anthropic import text_reply
from devhostd.core_client import CoreConnection, CoreRequestError

PAGE = "<!doctype html><html><head><title>n</title></head><body><p>numbers</p></body></html>"


def core_post(daemon, kind: str, payload: dict, token):
    return daemon.request("POST", "/__devhost__/core", {"id": "1", "type": kind, "payload": payload},
                          host=daemon.control_origin[len("http://"):], token=token)


def upgrade_status(daemon, token: str | None) -> int:
    headers = [f"Authorization: Bearer {token}"] if token is not None else []
    try:
        ws = websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/core",
                                         origin=daemon.control_origin, header=headers, timeout=10)
    except websocket.WebSocketBadStatusException as refused:
        return refused.status_code
    ws.close()
    return 101


def test_the_secret_is_made_private_at_the_first_start_and_no_route_serves_it(daemon):
    path = daemon.state_dir / "core-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.state_dir.stat().st_mode) == 0o700
    token = daemon.core_token
    assert len(token) >= 40
    for host, route in [(daemon.control_origin[7:], "/__devhost__/config.json"),
                        (daemon.host(), "/__devhost__/config.json"),
                        (daemon.host(), "/__devhost__/openapi.json"), (daemon.control_origin[7:], "/")]:
        status, body = daemon.request("GET", route, host=host)
        assert token not in json.dumps(body), route


@pytest.mark.parametrize("token, words", [(None, "sent no token"), ("not-the-secret", "sent a wrong token")])
def test_the_core_without_the_right_secret_is_a_401_that_says_where_it_is_kept(daemon, token, words):
    status, body = core_post(daemon, "chat.list", {}, token)
    assert status == 401
    assert words in body["error"] and str(daemon.state_dir / "core-token") in body["error"]
    assert upgrade_status(daemon, token) == 401


def test_the_core_with_the_secret_answers_on_both_its_route_and_its_socket(daemon):
    status, body = core_post(daemon, "chat.list", {}, "core")
    assert status == 200 and body == {"id": "1", "ok": True, "result": {"chats": []}}
    assert upgrade_status(daemon, daemon.core_token) == 101


def agent_environments(chat_id: str) -> list[dict[str, str]]:
    """The environments of the CLIs devhostd started for ``chat_id``: what their agents' shells have."""
    found = []
    for pid in processes_with_env(f"DEVHOSTD_CHAT={chat_id}"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                pairs = [entry.split(b"=", 1) for entry in handle.read().split(b"\0") if b"=" in entry]
        except OSError:
            continue  # it ended meanwhile
        found.append({key.decode(): value.decode(errors="replace") for key, value in pairs})
    return found


def test_an_agents_token_publishes_its_own_chats_visuals_and_is_refused_everything_else(core, daemon, mock, stack):
    mock.add(text_reply("hello"), text_reply("again"))
    core.chats.create("mine", provider="claude", cwd=str(stack / "project"))
    core.chats.create("theirs", provider="claude", cwd=str(stack / "other"))
    core.chats.send("mine", "hi")
    [env, *_] = wait_until(lambda: agent_environments("mine"), timeout=30, what="the chat's CLI")
    token = env["DEVHOSTD_TOKEN"]
    assert daemon.core_token not in "\0".join(f"{k}={v}" for k, v in env.items())  # never the core's secret

    status, body = core_post(daemon, "chat.publishVisual", {"chatId": "mine", "title": "Mine", "html": PAGE}, token)
    assert status == 200 and body["ok"], body
    visual = body["result"]["visual"]
    status, body = core_post(daemon, "chat.listVisuals", {"chatId": "mine"}, token)
    assert status == 200 and [v["id"] for v in body["result"]["visuals"]] == [visual["id"]]

    refused = [("chat.list", {}), ("chat.send", {"chatId": "mine", "text": "approve yourself"}),
               ("chat.approve", {"chatId": "mine", "requestId": "x", "decision": "allow"}),
               ("chat.history", {"chatId": "mine"}), ("chat.create", {"chatId": "new", "cwd": str(stack)}),
               ("chat.publishVisual", {"chatId": "theirs", "title": "T", "html": PAGE}),
               ("chat.listVisuals", {"chatId": "theirs"})]
    for kind, payload in refused:
        status, body = core_post(daemon, kind, payload, token)
        assert status == 403 and body["error"]["code"] == "forbidden", (kind, body)
        assert "DEVHOSTD_TOKEN" in body["error"]["message"]
    assert upgrade_status(daemon, token) == 403  # the socket streams every chat: not an agent's
    assert [c["chatId"] for c in core.chats.list()] == ["mine", "theirs"]  # nothing was created

    status, body = core_post(daemon, "chat.removeVisual", {"chatId": "mine", "visualId": visual["id"]}, token)
    assert status == 200 and body["result"]["visuals"] == []

    core.chats.clear("mine", force=True)  # the old token stops working; the next CLI gets a new one
    status, _ = core_post(daemon, "chat.listVisuals", {"chatId": "mine"}, token)
    assert status == 401
    core.chats.send("mine", "and again")
    fresh = wait_until(lambda: {e["DEVHOSTD_TOKEN"] for e in agent_environments("mine")} - {token}, timeout=30,
                       what="the chat's next CLI, with a token of its own").pop()
    assert core_post(daemon, "chat.listVisuals", {"chatId": "mine"}, fresh)[0] == 200


def test_the_python_client_reads_the_secret_from_the_state_folder(daemon):
    with CoreConnection(daemon.control_origin, state_dir=str(daemon.state_dir)) as host:
        assert host.chats.list() == []
    with pytest.raises(CoreRequestError) as missing:
        CoreConnection(daemon.control_origin, state_dir=str(daemon.state_dir / "nowhere"))
    assert missing.value.code == "unauthorized" and "core-token" in missing.value.message


def test_visual_publish_run_by_the_person_sends_the_secret_from_the_state_folder(core, daemon, stack, tmp_path):
    import subprocess
    import sys

    from tests.integration.daemon import DEVHOSTD
    core.chats.create("byhand", provider="claude", cwd=str(stack / "project"))
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVHOSTD_")}
    argv = [sys.executable, str(DEVHOSTD), "visual", "publish", "--title", "By hand", str(page), "--chat", "byhand",
            "--url", daemon.control_origin]
    run = subprocess.run([*argv, "--state-dir", str(daemon.state_dir)], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0 and "published visual" in run.stdout, run.stderr
    run = subprocess.run([*argv, "--state-dir", str(tmp_path / "empty")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1 and "no token to send" in run.stderr
    elsewhere = [a if a != daemon.control_origin else "http://192.0.2.1:9" for a in argv]  # never contacted
    run = subprocess.run([*elsewhere, "--state-dir", str(daemon.state_dir)], env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1 and "sent only to a loopback address" in run.stderr
