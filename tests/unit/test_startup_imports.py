"""What devhostd's start imports: only what its first answer needs (bench/startup.py; the rest
loads at its first use), and the harnesses' faces that make that possible."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each is most of a family of the daemon's code, and no part of answering its first request.
LOADED_AT_FIRST_USE = [
    "actors.chat",  # the Chat actor: at the first chat
    "actors.harness.claude.protocol", "actors.harness.codex.protocol",  # at the first CLI or model list
    "actors.harness.saved",  # at the first saved-conversation listing or resume
    "actors.harness.acp.protocol", "actors.harness.acp.projection",  # at the first agent the manifest names
    "actors.agents.activity", "actors.agent_scanner",  # at the first agents request
    "web.chat_socket", "web.thread_socket",  # at the first socket
    "web.core.service",  # at the first chat-core request
    "web.proxy.relay", "web.source_maps",  # at the first proxied request, the first locate
    "devhostd.doctor",
]


def test_the_daemon_s_main_imports_nothing_its_first_answer_does_not_need():
    script = ("from gevent import monkey; monkey.patch_all()\n"
              "import json, sys; import devhostd.main; print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                                       check=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout)
    assert [name for name in LOADED_AT_FIRST_USE if name in loaded] == []


def test_the_harnesses_are_listed_by_id_and_each_package_is_its_own_face():
    from actors.harness import HARNESSES, claude, codex
    assert list(HARNESSES) == ["claude-code", "codex"]
    assert {harness_id: module.HARNESS_ID for harness_id, module in HARNESSES.items()} == {
        "claude-code": "claude-code", "codex": "codex"}
    assert HARNESSES["claude-code"] is claude and HARNESSES["codex"] is codex
    assert "pi" not in HARNESSES and HARNESSES.get("pi") is None


def test_a_face_s_names_are_its_modules_and_an_unknown_one_is_an_attribute_error():
    from actors.harness import claude
    from actors.harness.claude import protocol
    assert claude.ClaudeDriver is protocol.ClaudeDriver and claude.session_only is protocol.session_only
    assert sorted(claude.__all__) == sorted(claude._FACE)
    with pytest.raises(AttributeError):
        getattr(claude, "no_such_name")
