"""Claude Code, as devhost drives it: one package holds what devhost knows of this CLI.

- ``protocol``: its stream-json protocol; the driver reads each frame once and answers the
  chat's effects and the thread's items (pure translation, no I/O);
- ``projection``: its frames as thread items (the driver's second half, per process);
- ``files``: where it keeps its config and transcripts (read on the threadpool);
- ``saved``: its saved conversations, listed and read back as items;
- ``records``: what its transcript records mean to the agents scanner.

The names below are the harness's face (actors/harness/__init__.py lists the harnesses).
"""
from __future__ import annotations

from actors.harness.lazy import lazy_names

# The face's names are imported from their modules at their first use (PEP 562): the protocol and
# its projection are much of the daemon's code, and what needs only this CLI's files (the agents
# scanner, the saved conversations, the daemon's start) must not import them with this package.
_FACE = {
    "find_conversation_cwd": ("actors.harness.claude.files", "find_conversation_cwd"),
    "Projection": ("actors.harness.claude.projection", "ClaudeProjector"),
    "DEFAULT_COMMAND": ("actors.harness.claude.protocol", "DEFAULT_COMMAND"),
    "HARNESS_ID": ("actors.harness.claude.protocol", "HARNESS_ID"),
    "LABEL": ("actors.harness.claude.protocol", "LABEL"),
    "PLAN_MODE": ("actors.harness.claude.protocol", "PLAN_MODE"),
    "TESTED_VERSION": ("actors.harness.claude.protocol", "TESTED_VERSION"),
    "ClaudeDriver": ("actors.harness.claude.protocol", "ClaudeDriver"),
    "Driver": ("actors.harness.claude.protocol", "Driver"),
    "command_line": ("actors.harness.claude.protocol", "command_line"),
    "listing_command_line": ("actors.harness.claude.protocol", "listing_command_line"),
    "listing_reply": ("actors.harness.claude.protocol", "listing_reply"),
    "listing_requests": ("actors.harness.claude.protocol", "listing_requests"),
    "mode_settings": ("actors.harness.claude.protocol", "mode_settings"),
    "models_from_initialize": ("actors.harness.claude.protocol", "models_from_initialize"),
    "session_only": ("actors.harness.claude.protocol", "session_only"),
}

__all__ = ["DEFAULT_COMMAND", "HARNESS_ID", "LABEL", "PLAN_MODE", "TESTED_VERSION", "ClaudeDriver", "Driver",
           "Projection",
           "command_line", "find_conversation_cwd", "listing_command_line", "listing_reply", "listing_requests",
           "mode_settings", "models_from_initialize", "session_only"]


__getattr__ = lazy_names(globals(), _FACE)
