"""chat.compact on the real CLIs: Claude Code folds by its /compact prompt, Codex natively
(thread/compact/start); either way a turn of its own that leaves a compaction item, and the
conversation goes on after it."""
from __future__ import annotations

import pytest

from tests.integration.chats import items
from tests.integration.daemon import wait_until
from tests.mock_anthropic import text_reply
from tests.mock_openai import text_reply as codex_text
from devhostd.core_client import CoreRequestError






def settled(core, chat_id: str, count: int) -> list[dict]:
    wait_until(lambda: len(items(core, chat_id, "turn")) == count
               and all(t["state"] != "running" for t in items(core, chat_id, "turn")), timeout=60,
               what=f"{count} turns ended")
    return items(core, chat_id, "turn")


@pytest.mark.parametrize("provider", ["codex", "claude"])
def test_compact_is_a_turn_of_its_own_that_leaves_a_compaction_and_the_chat_goes_on(core, mock, openai, stack,
                                                                                     provider):
    if provider == "codex":
        openai.add(codex_text("first answer"), codex_text("Summary of the conversation."), codex_text("after"))
    else:
        mock.add(text_reply("first answer"), text_reply("Summary of the conversation."), text_reply("after"))
    core.chats.create("fold", provider=provider, cwd=str(stack / "project"))
    core.chats.send("fold", "hello")
    settled(core, "fold", 1)
    core.chats.compact("fold")
    with pytest.raises(CoreRequestError) as busy:
        core.chats.compact("fold")  # one fold at a time
    assert busy.value.code == "chat-busy"
    compacted = settled(core, "fold", 2)[1]
    assert compacted["state"] == "done"
    assert items(core, "fold", "compaction"), core.chats.history("fold", limit=100)["items"]
    core.chats.send("fold", "go on")
    assert settled(core, "fold", 3)[2]["state"] == "done"
