"""The chat log, read as a person reads the terminal: one aligned line per record, with the
fields the seed's table names, from a real Claude Code and a real Codex turn (a tool, an
approval, a queued message, a heartbeat made quick by DEVHOSTD_HEARTBEAT_SECONDS, usage, an
error); never a prompt, a reply, a tool's output or an approval's answer; and the same records
as a stream a page of the directory reads.
"""
from __future__ import annotations

import json
import re

import pytest
import websocket

from tests.integration.daemon import wait_until
from tests.mock_anthropic import error_reply, text_reply, tool_use_reply
from tests.mock_openai import shell_reply
from tests.mock_openai import text_reply as openai_text

LINE = re.compile(r"^\d\d:\d\d:\d\d chat (?P<session>\S+)\s+(?P<harness>\S+)\s+(?P<record>\S+)\s*(?P<fields>.*)$")
SECRETS = ("PROMPT-OTTER-7", "REPLY-HERON-3", "OUTPUT-IBIS-9", "ANSWER-CRANE-5")


@pytest.fixture
def daemon_env(daemon_env):
    return {**daemon_env, "DEVHOSTD_HEARTBEAT_SECONDS": "1"}


def records(daemon, session: str | None = None) -> list[dict]:
    """Every chat line of the daemon's log as {session, harness, record, fields}."""
    found = []
    for line in daemon.log().splitlines():
        match = LINE.match(line)
        if not match or (session and match["session"] != session):
            continue
        fields = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', match["fields"]))
        found.append({**match.groupdict(), "fields": {k: v.strip('"') for k, v in fields.items()}})
    return found


def first(found, record, **fields) -> dict:
    for entry in found:
        if entry["record"] == record and all(entry["fields"].get(k) == v for k, v in fields.items()):
            return entry["fields"]
    raise AssertionError(f"no {record} {fields} in {[(e['record'], e['fields']) for e in found]}")


def test_a_claude_turn_logs_its_session_turns_messages_tool_approval_heartbeat_usage_and_error(daemon, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": "echo OUTPUT-IBIS-9 > out.txt", "description": "Write it"}),
             text_reply("REPLY-HERON-3"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    first_id = sock.send_message("PROMPT-OTTER-7 please")
    queued_id = sock.send_message("and a second message")  # waits in devhostd's outbox for the first's ack
    state = sock.wait_for(lambda f: f["type"] == "state" and f["pendingRequestIds"], what="the approval")
    [request_id] = state["pendingRequestIds"]
    wait_until(lambda: any(r["record"] == "turn.heartbeat" for r in records(daemon)), timeout=10,
               what="a heartbeat while the approval waits")
    sock.send({"type": "respond", "requestId": request_id, "result": {
        "behavior": "allow", "updatedInput": {"command": "echo OUTPUT-IBIS-9 > out.txt", "description": "Write it"},
        "message": "ANSWER-CRANE-5"}})
    # Claude Code takes the second message into the same turn's next request.
    wait_until(lambda: any(r["record"] == "turn.end" for r in records(daemon)), timeout=60, what="the turn's end")
    sock.wait_status("idle", timeout=60)
    mock.add(error_reply(401, "authentication_error", "invalid x-api-key", times=2))  # and its one retry
    sock.send_message("this one fails")
    sock.wait_event(lambda p: p["type"] == "result" and p.get("is_error"), timeout=60)
    sock.close()
    wait_until(lambda: any(r["record"] == "turn.end" and r["fields"].get("outcome") == "failed"
                           for r in records(daemon)), what="the failed turn")

    found = records(daemon, record["chatId"])
    assert found and all(r["harness"] == "claude-code" for r in found)
    start = first(found, "session.start")
    assert start["project"] == record["projectRootPath"] and start["model"] == "default"
    assert first(found, "session.native")["native"]
    turn = first(found, "turn.start", turn="1")
    assert turn["model"] == "default"
    ended = first(found, "turn.end", turn="1")
    assert ended["outcome"] == "completed" and ended["took"].endswith("s") and ended["model"].startswith("claude-")
    assert first(found, "message.sent", command=first_id)["attachments"] == "0"
    assert first(found, "message.ack", command=first_id)["delivery"] == "queued"
    queued = first(found, "message.sent", command=queued_id)
    assert queued["outbox"].endswith("s")  # the time it waited in devhostd's outbox
    tool = first(found, "tool.start", name="Bash")
    assert tool["tool"].startswith("toolu_") and tool["turn"] == "1"
    assert first(found, "tool.end", name="Bash")["outcome"] == "done"
    opened = first(found, "request.open", request=request_id)
    assert opened["kind"] == "can_use_tool" and opened["turn"] == "1"
    answered = first(found, "request.answered", request=request_id)
    assert answered["waited"].endswith("s") and float(answered["waited"][:-1]) >= 1 and answered["delivered"] == "yes"
    beat = first(found, "turn.heartbeat")
    assert beat["pending"] == request_id and beat["quiet"].endswith("s") and beat["turn"] == "1"
    usage = first(found, "turn.usage", turn="1")
    assert int(usage["output_tokens"]) > 0 and re.fullmatch(r"\d+(\.\d{1,6})?(e-\d+)?", usage["total_cost_usd"])
    assert first(found, "turn.end", outcome="failed")["error"]
    # Nothing a person or the agent said, nor what a tool printed, nor an answer's words.
    log = daemon.log()
    for secret in SECRETS:
        assert secret not in log, secret
    assert all(len(line.encode()) <= 2048 for line in log.splitlines())


def test_a_codex_turn_logs_its_command_with_exit_code_and_token_usage(daemon, openai, stack):
    openai.add(shell_reply("echo OUTPUT-IBIS-9", justification="to show it"), openai_text("REPLY-HERON-3"))
    record = daemon.create_session(harness="codex")
    sock = daemon.connect(record["id"])
    sock.send_message("PROMPT-OTTER-7")
    state = sock.wait_for(lambda f: f["type"] == "state" and f["pendingRequestIds"], what="the approval")
    [request_id] = state["pendingRequestIds"]
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "accept"}})
    sock.wait_event(lambda p: p.get("method") == "turn/completed", timeout=60)
    sock.close()
    wait_until(lambda: any(r["record"] == "turn.end" for r in records(daemon)), what="the turn's end")
    found = records(daemon, record["chatId"])
    assert all(r["harness"] == "codex" for r in found)
    ended = first(found, "turn.end", turn="1")
    assert ended["outcome"] == "completed" and ended["cli_turn"]  # Codex's own turn id
    done = first(found, "tool.end", name="shell")
    assert done["outcome"] == "done" and done["exit"] == "0"
    assert first(found, "tool.start", name="shell")["path"] == record["projectRootPath"]
    assert first(found, "request.answered", request=str(request_id))["delivered"] == "yes"
    assert int(first(found, "turn.usage")["outputTokens"]) >= 0
    log = daemon.log()
    for secret in SECRETS:
        assert secret not in log, secret


def test_a_page_reads_its_directorys_log_as_a_stream_and_no_other(daemon, mock):
    mock.add(text_reply("REPLY-HERON-3"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("PROMPT-OTTER-7")
    sock.wait_event(lambda p: p["type"] == "result")
    host = daemon.host()
    url = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/log?{daemon.query()}"
    log = websocket.create_connection(url, host=host, origin=f"http://{host}", timeout=10)
    snapshot = json.loads(log.recv())
    assert snapshot["type"] == "snapshot"
    kinds = [e["record"] for e in snapshot["entries"]]
    assert "session.start" in kinds and "turn.end" in kinds
    assert all(e["session"] == record["chatId"] and "root" not in e for e in snapshot["entries"])
    assert not any(secret in json.dumps(snapshot) for secret in SECRETS)
    daemon.close_session(record["id"])
    # Live entries follow (the turn's last records may still come first: its changes are read
    # after the CLI's result, and what is logged then arrives before the close's).
    live = [json.loads(log.recv())]
    while live[-1]["entry"]["record"] not in ("session.close", "session.status") and len(live) < 20:
        live.append(json.loads(log.recv()))
    assert all(entry["type"] == "entry" for entry in live)
    assert live[-1]["entry"]["record"] in ("session.close", "session.status"), live
    log.close()
    other = daemon.host("other.localhost")
    other_url = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/log?{daemon.query('other.localhost')}"
    quiet = websocket.create_connection(other_url, host=other, origin=f"http://{other}", timeout=10)
    assert json.loads(quiet.recv()) == {"type": "snapshot", "entries": []}
    quiet.close()
    control = daemon.control_origin.split("//")[1]
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(url, host=control, origin=f"http://{control}", timeout=10)
    assert refused.value.status_code == 403


def test_a_retried_model_request_is_logged_shown_in_the_session_state_and_as_a_note(daemon, mock):
    mock.add(error_reply(529, "overloaded_error", "Overloaded"), text_reply("after the retry"))
    record = daemon.create_session()
    thread = daemon.connect_thread(record["id"])
    thread.send_message("PROMPT-OTTER-7")
    note = thread.wait_item(lambda i: i["kind"] == "note" and "529" in i["text"], what="the retry's note")
    assert "retrying" in note["text"]
    retrying = thread.wait_for(lambda f: f["type"] == "state" and "retrying" in f["session"], what="the state")
    assert retrying["session"]["retrying"]["status"] == 529
    thread.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    done = thread.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "idle")
    assert "retrying" not in done["session"]  # over with its turn
    thread.close()
    retry = first(records(daemon, record["chatId"]), "turn.retry")
    assert (retry["turn"], retry["attempt"], retry["status"], retry["error"]) == ("1", "1", "529", "overloaded")
