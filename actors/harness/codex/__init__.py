"""Codex, as devhost drives it: one package holds what devhost knows of this CLI.

- ``protocol``: its app-server protocol (JSON-RPC); the driver reads each frame once and
  answers the chat's effects and the thread's items (pure translation, no I/O);
- ``projection``: its frames as thread items (the driver's second half, per process);
- ``files``: where it keeps its home and rollouts (read on the threadpool);
- ``saved``: its saved conversations, listed and read back as items;
- ``records``: what its rollout records mean to the agents scanner.

The names below are the harness's face (actors/harness/__init__.py lists the harnesses).
"""
from actors.harness.codex.files import find_conversation_cwd
from actors.harness.codex.projection import CodexProjector as Projection
from actors.harness.codex.protocol import (ANSWERABLE_REQUESTS, APPROVAL_DECISIONS, CLIENT_INFO, DEFAULT_COMMAND,
                                           FAILED_TURN, HARNESS_ID, LABEL, NETWORK_WAIT_KEY, NETWORK_WAIT_LIMIT,
                                           REPLY_DEADLINE, TESTED_VERSION, CodexDriver, Driver, command_line,
                                           listing_command_line, listing_reply, listing_requests, mode_settings,
                                           models_from_list, PLAN_MODE)

__all__ = ["ANSWERABLE_REQUESTS", "APPROVAL_DECISIONS", "CLIENT_INFO", "DEFAULT_COMMAND", "FAILED_TURN", "HARNESS_ID",
           "LABEL", "NETWORK_WAIT_KEY", "NETWORK_WAIT_LIMIT", "REPLY_DEADLINE", "TESTED_VERSION", "CodexDriver",
           "Driver", "Projection", "command_line", "find_conversation_cwd", "listing_command_line", "listing_reply",
           "listing_requests", "mode_settings", "models_from_list", "PLAN_MODE"]
