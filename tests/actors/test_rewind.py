"""A rewind of the conversation on the real CLIs: the chat core in-process (Registry, Chat actors).

Two turns ("remember the word alpha", "remember the word beta"), the second rewound, a third
sent: the third request the mock model receives holds alpha's turn and not beta's. The anchor is
taken from the chat's own turn items (actors/harness/rewind.py) by ``chat.rewind`` and handed to
the chat's link (``CliLink.rewind``); the rewound turn leaves the thread.
"""
from __future__ import annotations


import pytest

from tests import mock_anthropic, mock_openai
from tests.actors.shutdown import registries
from tests.actors.test_core_chat import turn_ended
from tests.peers import CLAUDE, CODEX, claude_env, codex_env, require_peers
from tests.sinks import Sink
from tests.tiers import needs
from web.core.wire import encode

ASK = 30


@pytest.fixture
def host(tmp_path, capsys):
    with registries(tmp_path / "data", ASK) as start:
        yield start
    assert "bug:" not in capsys.readouterr().err


def converse(registry, chat_id: str, provider: str, project: str) -> list[dict]:
    """Alpha, beta, beta rewound, the third message; the chat's turn items at the end."""
    registry.create_chat({"chatId": chat_id, "cwd": project, "provider": provider}).get(timeout=ASK)
    chat, sink = registry.chat(chat_id).get(timeout=ASK), Sink(encode)
    chat.core_attach(sink).get(timeout=ASK)
    turns = []
    for text in ("remember the word alpha", "remember the word beta"):
        sent = chat.core_send(text).get(timeout=ASK)
        assert turn_ended(sink, sent["turnId"])["state"] == "done"
        turns.append(sent["turnId"])
    answer = chat.rewind(turns[1]).get(timeout=ASK)
    assert answer["conversation"] == "rewound" and answer["files"] == "reverted", answer
    assert answer["reverted"] == []  # these turns changed no file
    left = [item["id"] for item in chat.history(None, 100).get(timeout=ASK)["items"] if item["kind"] == "turn"]
    assert left == turns[:1]  # beta's turn left the thread
    sent = chat.core_send("what words do you remember?").get(timeout=ASK)
    assert turn_ended(sink, sent["turnId"])["state"] == "done"
    return chat.history(None, 100).get(timeout=ASK)["items"]


@needs("peers")
def test_claude_code_resumed_before_the_rewound_turn_no_longer_sends_it(tmp_path, monkeypatch, host):
    require_peers("claude")
    mock = mock_anthropic.MockAnthropic([mock_anthropic.text_reply(t) for t in
                                         ("Noted: alpha.", "Noted: beta.", "You told me alpha.")])
    mock.start()
    try:
        for key, value in claude_env(tmp_path / "home", mock.url).items():
            monkeypatch.setenv(key, value)
        project = tmp_path / "project"
        project.mkdir()
        items = converse(host({"claude-code": (str(CLAUDE),)}), "r1", "claude", str(project))
        third = mock_anthropic.message_text(mock.requests[2])
        assert "remember the word alpha" in third and "Noted: alpha." in third
        assert "beta" not in third and "what words do you remember?" in third
        turns = [item for item in items if item["kind"] == "turn"]
        assert all(turn["native"]["lastUuid"] for turn in turns)
    finally:
        mock.stop()


@needs("peers")
def test_codex_reverted_before_the_rewound_turn_no_longer_sends_it(tmp_path, monkeypatch, host):
    require_peers("codex")
    mock = mock_openai.MockOpenAI([mock_openai.text_reply(t) for t in
                                   ("Noted: alpha.", "Noted: beta.", "You told me alpha.")])
    mock.start()
    try:
        project = tmp_path / "project"
        project.mkdir()
        for key, value in codex_env(tmp_path / "home", mock.url, project_dirs=[project],
                                    approval_policy="never").items():
            monkeypatch.setenv(key, value)
        items = converse(host({"codex": (str(CODEX),)}), "r2", "codex", str(project))
        third = mock_openai.message_text(mock.requests[2])
        assert "remember the word alpha" in third and "Noted: alpha." in third
        assert "beta" not in third and "what words do you remember?" in third
        turns = [item for item in items if item["kind"] == "turn"]
        assert len({turn["native"]["turnId"] for turn in turns}) == 2
        assert not [item for item in items if item["kind"] == "note" and item["level"] == "warning"]
    finally:
        mock.stop()
