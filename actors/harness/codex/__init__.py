"""Codex, as devhost drives it: one package holds what devhost knows of this CLI.

- ``protocol``: its app-server protocol (JSON-RPC); the driver reads each frame once and
  answers the chat's effects and the thread's items (pure translation, no I/O);
- ``projection``: its frames as thread items (the driver's second half, per process);
- ``files``: where it keeps its home and rollouts (read on the threadpool);
- ``saved``: its saved conversations, listed and read back as items;
- ``records``: what its rollout records mean to the agents scanner.

The names below are the harness's face (actors/harness/__init__.py lists the harnesses).
"""
from __future__ import annotations

from actors.harness.lazy import lazy_names

# The face's names are imported from their modules at their first use (PEP 562): the protocol and
# its projection are much of the daemon's code, and what needs only this CLI's files (the agents
# scanner, the saved conversations, the daemon's start) must not import them with this package.
_FACE = {
    "find_conversation_cwd": ("actors.harness.codex.files", "find_conversation_cwd"),
    "Projection": ("actors.harness.codex.projection", "CodexProjector"),
    "ANSWERABLE_REQUESTS": ("actors.harness.codex.protocol", "ANSWERABLE_REQUESTS"),
    "APPROVAL_DECISIONS": ("actors.harness.codex.protocol", "APPROVAL_DECISIONS"),
    "CLIENT_INFO": ("actors.harness.codex.protocol", "CLIENT_INFO"),
    "DEFAULT_COMMAND": ("actors.harness.codex.protocol", "DEFAULT_COMMAND"),
    "FAILED_TURN": ("actors.harness.codex.protocol", "FAILED_TURN"),
    "HARNESS_ID": ("actors.harness.codex.protocol", "HARNESS_ID"),
    "LABEL": ("actors.harness.codex.protocol", "LABEL"),
    "NETWORK_WAIT_KEY": ("actors.harness.codex.protocol", "NETWORK_WAIT_KEY"),
    "NETWORK_WAIT_LIMIT": ("actors.harness.codex.protocol", "NETWORK_WAIT_LIMIT"),
    "REPLY_DEADLINE": ("actors.harness.codex.protocol", "REPLY_DEADLINE"),
    "TESTED_VERSION": ("actors.harness.codex.protocol", "TESTED_VERSION"),
    "CodexDriver": ("actors.harness.codex.protocol", "CodexDriver"),
    "Driver": ("actors.harness.codex.protocol", "Driver"),
    "command_line": ("actors.harness.codex.protocol", "command_line"),
    "listing_command_line": ("actors.harness.codex.protocol", "listing_command_line"),
    "listing_reply": ("actors.harness.codex.protocol", "listing_reply"),
    "listing_requests": ("actors.harness.codex.protocol", "listing_requests"),
    "mode_settings": ("actors.harness.codex.protocol", "mode_settings"),
    "models_from_list": ("actors.harness.codex.protocol", "models_from_list"),
    "PLAN_MODE": ("actors.harness.codex.protocol", "PLAN_MODE"),
}

__all__ = ["ANSWERABLE_REQUESTS", "APPROVAL_DECISIONS", "CLIENT_INFO", "DEFAULT_COMMAND", "FAILED_TURN", "HARNESS_ID",
           "LABEL", "NETWORK_WAIT_KEY", "NETWORK_WAIT_LIMIT", "REPLY_DEADLINE", "TESTED_VERSION", "CodexDriver",
           "Driver", "Projection", "command_line", "find_conversation_cwd", "listing_command_line", "listing_reply",
           "listing_requests", "mode_settings", "models_from_list", "PLAN_MODE"]


__getattr__ = lazy_names(globals(), _FACE)
