"""The conversation controls in the panel, on the real Claude Code: a conversation renamed keeps
its name across a reload; Delete asks first, then the conversation is gone from the panel's
list, the chat core's chat.list and the disk; Export downloads its Markdown (the person's and
the agent's text, tool calls one line each); the search finds conversations by title and by
text, and opens the one picked."""
from __future__ import annotations

from playwright.sync_api import expect

from storage.chat_store import encode_id
from tests.browser.core_list import core_chats
from tests.browser.panel import Panel
from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply, tool_use_reply


def core_chat_ids(daemon) -> list[str]:
    return [chat["chatId"] for chat in core_chats(daemon)]


def picked_session(panel) -> str:
    """What the session picker shows for the open conversation."""
    return panel.find("select.session").evaluate("(s) => s.selectedOptions[0].textContent")


def converse(panel, mock, text: str, reply: str) -> None:
    mock.add(text_reply(reply))
    panel.send(text)
    expect(panel.items("assistant").last).to_have_text(reply)


def test_a_renamed_conversation_keeps_its_name_across_a_reload(page, daemon, mock, shots):
    panel = Panel(page, daemon).open()
    rename = panel.find(".panel").get_by_role("button", name="Rename conversation")
    expect(rename).to_be_disabled()  # nothing to rename yet, and its tooltip says so
    expect(rename).to_have_attribute("title", "Rename conversation: Start a conversation first: there is none open yet")
    converse(panel, mock, "make the header blue", "The header is blue now.")
    expect(rename).to_be_enabled()
    rename.click()
    name = panel.find(".panel").get_by_label("Conversation name")
    expect(name).to_have_value("make the header blue")
    name.fill("")
    name.press("Enter")
    # The daemon says what to send, and the panel shows it.
    expect(panel.find(".hint")).to_contain_text("The conversation was not renamed: send")
    name.fill("Header colours")
    shots(page, "31-rename-conversation")
    name.press("Enter")
    expect(name).to_be_hidden()
    expect(rename).to_be_focused()
    expect(panel.find("select.session")).to_contain_text("Header colours")
    assert picked_session(panel).startswith("Header colours · Claude Code")
    panel.reload()
    assert picked_session(panel).startswith("Header colours · Claude Code")
    [record] = daemon.sessions()
    assert record["title"] == "Header colours"


def test_delete_asks_first_then_the_conversation_is_gone_everywhere(page, daemon, mock, shots):
    panel = Panel(page, daemon).open()
    converse(panel, mock, "a conversation to delete", "Noted.")
    [record] = daemon.sessions()
    assert record["chatId"] in core_chat_ids(daemon)
    stored = daemon.state_dir / "core" / "chats"
    kept = {f"{encode_id(record['chatId'])}.json", f"{encode_id(record['chatId'])}.log"}
    assert kept & {path.name for path in stored.iterdir()}
    delete = panel.find(".panel").get_by_role("button", name="Delete conversation")
    delete.click()
    dialog = panel.find(".panel").get_by_role("alertdialog", name="Delete this conversation?")
    expect(dialog).to_contain_text("Delete “a conversation to delete”? It goes from every list")
    shots(page, "32-delete-conversation")
    dialog.get_by_role("button", name="Keep it").click()  # asked, and kept
    expect(dialog).to_be_hidden()
    expect(delete).to_be_focused()  # back where the question came from
    delete.click()
    page.keyboard.press("Escape")  # answers the dialog: kept, and the panel stays open
    expect(dialog).to_be_hidden()
    expect(panel.find(".panel")).to_be_visible()
    expect(delete).to_be_focused()
    assert [s["id"] for s in daemon.sessions()] == [record["id"]]
    delete.click()
    dialog.get_by_role("button", name="Delete", exact=True).dblclick()  # a second click is no second delete
    expect(dialog).to_be_hidden()
    page.wait_for_timeout(500)  # a second DELETE would have been answered "no session" by now
    expect(panel.find(".hint")).not_to_contain_text("not deleted")
    expect(panel.find(f"select.session option[value='{record['id']}']")).to_have_count(0)
    expect(panel.items()).to_have_count(0)
    assert daemon.sessions() == []
    assert record["chatId"] not in core_chat_ids(daemon)
    assert not kept & {path.name for path in stored.iterdir()}
    panel.reload()  # and it does not come back
    expect(panel.find(f"select.session option[value='{record['id']}']")).to_have_count(0)


def test_export_downloads_the_conversation_as_markdown(page, daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch made.txt", "description": "Make the file"}),
             text_reply("I made **made.txt** for you."))
    panel = Panel(page, daemon).open()
    panel.send("please make a file")
    panel.items("tool").first.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_contain_text("I made made.txt for you.")
    with page.expect_download() as downloading:
        panel.find(".panel").get_by_role("button", name="Export conversation").click()
    download = downloading.value
    assert download.suggested_filename == "please-make-a-file.md"
    text = open(download.path(), encoding="utf-8").read()
    [record] = daemon.sessions()
    assert text.startswith("# please make a file\n\nClaude Code · in `" + record["projectRootPath"] + "` · started ")
    body = text.split("\n\n", 2)[2]
    assert body == ("## You\n\nplease make a file\n\n## Claude Code\n\n- **Bash** `touch made.txt` — done\n\n"
                    "I made **made.txt** for you.\n"), body


def test_the_search_finds_conversations_by_title_and_by_text_and_opens_one(page, daemon, mock, shots):
    panel = Panel(page, daemon).open()
    converse(panel, mock, "make the header blue", "Blue it is.")
    first = daemon.sessions()[0]["id"]
    panel.find(".new").click()
    converse(panel, mock, "fix the footer", "The footer now credits the PELICAN-7 team.")
    second = next(s["id"] for s in daemon.sessions() if s["id"] != first)
    search = panel.find(".panel").get_by_role("searchbox", name="Search conversations")
    results = panel.find(".panel").get_by_role("list", name="Conversations found")
    search.fill("HEADER")  # any case
    expect(results.get_by_role("listitem")).to_have_count(1)
    expect(results.get_by_role("button")).to_contain_text("make the header blue")
    search.fill("pelican-7")  # only in the agent's text
    expect(results.get_by_role("button")).to_have_count(1)
    hit = results.get_by_role("button")
    expect(hit.locator("strong")).to_have_text("fix the footer")
    expect(hit.locator(".excerpt")).to_contain_text("credits the PELICAN-7 team")
    search.fill("no such words anywhere")
    expect(results).to_have_text("No conversation has “no such words anywhere”.")
    search.fill("blue")  # in the first's title and its reply
    expect(results.get_by_role("button")).to_have_count(1)
    shots(page, "33-search-conversations")
    results.get_by_role("button").click()
    expect(results).to_be_hidden()
    expect(panel.find("select.session")).to_have_value(first)
    expect(panel.items("assistant")).to_have_text("Blue it is.")
    assert second != first


def test_the_routes_refuse_another_origin_and_say_what_to_change(daemon):
    """What the panel's controls call, from outside the panel: a state change needs the page's
    own Origin; bad input is a 4xx naming what to send."""
    record = daemon.create_session()
    base, query = f"/__devhost__/chat/sessions/{record['id']}", daemon.query()
    for origin in (None, "http://evil.localhost"):
        status, answer = daemon.request("DELETE", f"{base}?{query}", origin=origin)
        assert status == 403 and "Origin" in answer["error"], answer
        status, answer = daemon.request("PUT", f"{base}/title?{query}", {"title": "x"}, origin=origin)
        assert status == 403, answer
    status, answer = daemon.request("PUT", f"{base}/title?{query}", {"title": "a\u0007b"})
    assert status == 400 and answer["error"] == "the title may not hold control characters"
    status, answer = daemon.request("PUT", f"{base}/title?{query}", {"title": "x" * 121})
    assert status == 400 and answer["error"] == "the title is 121 characters; make it at most 120"
    status, answer = daemon.request("PUT", f"{base}/title?{query}", {"name": "x"})
    assert status == 400 and answer["error"].startswith('send {"title": "<name>"}')
    status, answer = daemon.request("GET", f"/__devhost__/chat/search?q=&{query}")
    assert status == 400 and answer["error"] == "q is what to look for: 1..200 characters"
    status, answer = daemon.request("DELETE", f"/__devhost__/chat/sessions/nope?{query}")
    assert status == 404 and answer["error"] == "no session nope in this directory"
    status, answer = daemon.request("PUT", f"{base}/title?{query}", {"title": "  Kept   name "})
    assert status == 200 and answer["title"] == "Kept name"
    assert daemon.sessions()[0]["title"] == "Kept name"


def test_after_a_daemon_restart_the_name_is_kept_and_a_closed_conversation_is_found_and_deleted(
        page, daemon, daemon_env, stack, mock):
    panel = Panel(page, daemon).open()
    converse(panel, mock, "remember the word otter", "I will remember OTTER-9.")
    panel.expect_status("idle")
    panel.find(".panel").get_by_role("button", name="Rename conversation").click()
    panel.find(".panel").get_by_label("Conversation name").fill("The otter one")
    panel.find(".panel").get_by_label("Conversation name").press("Enter")
    expect(panel.find("select.session")).to_contain_text("The otter one")
    assert daemon.stop() == 0

    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        panel = Panel(page, again).open()
        [record] = again.sessions()
        assert record["status"] == "closed" and record["title"] == "The otter one"  # kept on disk
        search = panel.find(".panel").get_by_role("searchbox", name="Search conversations")
        search.fill("otter-9")  # in the reply of a conversation only on disk
        hit = panel.find(".panel").get_by_role("list", name="Conversations found").get_by_role("button")
        expect(hit.locator("strong")).to_have_text("The otter one")
        expect(hit.locator(".excerpt")).to_have_text("I will remember OTTER-9.")
        hit.click()
        panel.expect_status("closed")
        expect(panel.items("assistant")).to_have_text("I will remember OTTER-9.")
        panel.find(".panel").get_by_role("button", name="Delete conversation").click()
        panel.find(".panel").get_by_role("alertdialog").get_by_role("button", name="Delete", exact=True).click()
        expect(panel.find(f"select.session option[value='{record['id']}']")).to_have_count(0)
        assert again.sessions() == [] and record["chatId"] not in core_chat_ids(again)
    finally:
        assert again.stop() == 0
