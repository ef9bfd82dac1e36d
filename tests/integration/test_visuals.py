"""Visuals on a real devhostd: a page published in a chat (through the core, or by the agent's
own `devhostd visual publish` in a real Claude Code turn), kept, listed, told to attached
clients, served only on the visuals origin under a strict policy, refused with words that say
what to change, and taken along by clear, kill and a fork's copy."""
from __future__ import annotations

import http.client
import os
import shlex
from urllib.parse import quote

import pytest

from tests.integration.chats import items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import text_reply, tool_use_reply
from devhostd.core_client import CoreConnection, CoreRequestError
from actors.core.visuals import command_prefix

PAGE = "<!doctype html><html><head><title>n</title></head><body><svg width=200 height=80></svg></body></html>"


def fetch(daemon, host: str, path: str) -> tuple[int, dict, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": host})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def allowed_then_published(core, chat_id: str) -> dict:
    """The person allows the agent's command; the page it publishes is the chat's one visual."""
    wait_until(lambda: [a for a in items(core, chat_id, "approval") if a["decision"] == "pending"], timeout=60,
               what="the agent asking to run the command")
    [approval] = items(core, chat_id, "approval")
    core.chats.approve(chat_id, approval["requestId"], "allow")
    wait_until(lambda: core.chats.list_visuals(chat_id), timeout=60, what="the visual")
    [visual] = core.chats.list_visuals(chat_id)
    return visual


def page_path(chat_id: str, visual_id: str) -> str:
    return f"/v/{quote(chat_id, safe='')}/{visual_id}"


def test_a_published_page_is_kept_listed_told_and_served_only_on_the_visuals_origin(core, daemon, stack):
    core.chats.create("vis", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("vis")
    visual = core.chats.publish_visual("vis", " Benchmark ", PAGE, maxHeight=600, heights=[[640, 200]])["visual"]
    assert visual["title"] == "Benchmark" and visual["maxHeight"] == 600 and visual["heights"] == [[640, 200]]
    assert len(visual["id"]) == 16 and visual["size"] > len(PAGE) and "turnId" not in visual  # no turn ran
    told = core.wait_event(lambda e: e["event"] == "chat.visuals", what="the list to the attached client")
    assert told["payload"] == {"chatId": "vis", "visuals": [visual]}
    assert core.chats.list_visuals("vis") == [visual] == core.chats.attach("vis")["visuals"]
    as_file = core.chats.attachment("vis", visual["id"])  # a page is found as the chat's attachment too
    assert as_file["attachment"] == {"id": visual["id"], "name": "Benchmark.html", "mime": "text/html",
                                     "size": visual["size"]}

    status, headers, body = fetch(daemon, f"visuals.localhost:{daemon.port}", page_path("vis", visual["id"]))
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    for rule in ("default-src 'none'", "connect-src 'none'", "sandbox allow-scripts", "form-action 'none'",
                 f"frame-ancestors http://app.localhost:{daemon.port}"):
        assert rule in policy
    assert "allow-same-origin" not in policy and headers["x-content-type-options"] == "nosniff"
    assert body.startswith(b"<!doctype html><html><head><meta charset=\"utf-8\">") and len(body) == visual["size"]
    # Nothing else answers there, and the page is never served on an app's or the control origin.
    assert fetch(daemon, f"visuals.localhost:{daemon.port}", "/__devhost__/config")[0] == 404
    assert fetch(daemon, f"visuals.localhost:{daemon.port}", page_path("vis", "0" * 16))[0] == 404
    for odd in ("/v/%FF%FE/" + "0" * 16, "/v/" + "x" * 400 + "/" + "0" * 16, "/v/vis/" + visual["id"] + "/.."):
        assert fetch(daemon, f"visuals.localhost:{daemon.port}", odd)[0] == 404, odd  # never a 500
    assert fetch(daemon, daemon.host(), page_path("vis", visual["id"]))[2] != body
    assert fetch(daemon, daemon.control_origin.split("//")[1], page_path("vis", visual["id"]))[2] != body


@pytest.mark.parametrize("title, html, fields, code, words", [
    ("", PAGE, {}, "visual-invalid", "A visual needs a title"),
    ("T", "  ", {}, "visual-invalid", "The page is empty"),
    ("T", PAGE, {"maxHeight": 5000}, "visual-invalid", "The maximum height must be from 80 to 2000"),
    # Under 16 MiB as sent, over it once the bootstrap is in: the stored page is what counts.
    ("T", "<p>" + "x" * (16 * 1024 * 1024 - 2000), {}, "visual-too-large", "a visual may be at most 16.0 MiB"),
])
def test_a_page_that_breaks_a_limit_is_refused_with_what_to_change(core, stack, title, html, fields, code, words):
    core.chats.create("lim", provider="claude", cwd=str(stack / "project"))
    with pytest.raises(CoreRequestError) as refused:
        core.chats.publish_visual("lim", title, html, **fields)
    assert refused.value.code == code and words in refused.value.message
    assert core.chats.list_visuals("lim") == []


def test_an_unknown_chat_is_refused(core):
    with pytest.raises(CoreRequestError) as refused:
        core.chats.publish_visual("nobody", "T", PAGE)
    assert refused.value.code == "chat-not-found"


def test_visuals_outlive_a_restart_are_published_to_a_chat_nobody_loaded_and_go_with_remove_clear_kill_and_copy(
        daemon_env, stack):
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            for chat_id in ("a", "b", "fork"):
                core.chats.create(chat_id, provider="claude", cwd=str(stack / "project"))
            kept = core.chats.publish_visual("a", "Kept", PAGE)["visual"]
    finally:
        assert first.stop() == 0
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(again.control_origin, token=again.core_token) as core:
            late = core.chats.publish_visual("b", "Published unloaded", PAGE)["visual"]  # no client loaded "b"
            assert core.chats.list_visuals("a") == [kept] and core.chats.list_visuals("b") == [late]
            core.chats.create("a")
            assert core.chats.attach("a")["visuals"] == [kept]
            extra = core.chats.publish_visual("a", "Extra", PAGE)["visual"]
            assert core.chats.copy_visuals("a", "fork", keep=[kept["id"]]) == [kept]
            core.chats.create("fork")
            assert core.chats.remove_visual("a", kept["id"]) == [extra]
            assert core.chats.remove_visual("a", kept["id"]) == [extra]  # gone already: no error
            status, _, _ = fetch(again, f"visuals.localhost:{again.port}", page_path("fork", kept["id"]))
            assert status == 200  # the fork's own copy outlives the original's removal
            core.chats.clear("a")
            assert core.chats.list_visuals("a") == [] and core.chats.attach("a")["visuals"] == []
            core.chats.create("b")
            core.chats.kill("b")
            assert fetch(again, f"visuals.localhost:{again.port}", page_path("b", late["id"]))[0] == 404
            lists = [n for n in os.listdir(stack / "state" / "core" / "chats") if n.startswith("v-")]
            assert lists == ["v-fork.json"]
    finally:
        again.stop()


def test_an_agent_publishes_a_page_from_its_own_shell_in_a_real_turn(core, mock, stack):
    page = stack / "project" / "numbers.html"
    page.write_text(PAGE)
    command = f"{command_prefix()} --title 'Numbers I measured' {shlex.quote(str(page))}"
    mock.add(tool_use_reply("Bash", {"command": command, "description": "Publish the chart"}),
             text_reply("Published it."))
    core.chats.create("agent", provider="claude", cwd=str(stack / "project"), runtimeMode="supervised")
    core.chats.attach("agent")
    turn = core.chats.send("agent", "chart the numbers")["turnId"]
    visual = allowed_then_published(core, "agent")
    assert visual["title"] == "Numbers I measured" and visual["turnId"] == turn  # the turn that ran it
    wait_until(lambda: any(i["text"] == "Published it." for i in items(core, "agent", "assistant")), timeout=60,
               what="the turn going on")
    [bash] = [t for t in items(core, "agent", "tool") if t["name"] == "Bash"]
    assert "published visual" in (bash["output"] or "")


def test_a_codex_agent_publishes_from_its_shell_once_the_person_lets_it_out_of_the_sandbox(core, openai, stack):
    from tests.mock_openai import shell_reply, text_reply as codex_text
    page = stack / "project" / "codex.html"
    page.write_text(PAGE)
    command = f"{command_prefix()} --title 'From Codex' {shlex.quote(str(page))}"
    # Codex's sandbox has no network: the model asks to run the command outside it.
    openai.add(shell_reply(command, justification="publish the page to the person's chat"), codex_text("Done."))
    core.chats.create("cxvis", provider="codex", cwd=str(stack / "project"), runtimeMode="supervised")
    turn = core.chats.send("cxvis", "publish it")["turnId"]
    visual = allowed_then_published(core, "cxvis")
    assert visual["title"] == "From Codex" and visual["turnId"] == turn
