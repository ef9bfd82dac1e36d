"""Claude Code, as devhost drives it: one package holds what devhost knows of this CLI.

- ``protocol``: its stream-json protocol; the driver reads each frame once and answers the
  chat's effects and the thread's items (pure translation, no I/O);
- ``projection``: its frames as thread items (the driver's second half, per process);
- ``files``: where it keeps its config and transcripts (read on the threadpool);
- ``saved``: its saved conversations, listed and read back as items;
- ``records``: what its transcript records mean to the agents scanner.

The names below are the harness's face (actors/harness/__init__.py lists the harnesses).
"""
from actors.harness.claude.files import find_conversation_cwd
from actors.harness.claude.projection import ClaudeProjector as Projection
from actors.harness.claude.protocol import (DEFAULT_COMMAND, HARNESS_ID, LABEL, PLAN_MODE, TESTED_VERSION, ClaudeDriver,
                                            Driver,
                                            command_line, listing_command_line, listing_reply, listing_requests,
                                            mode_settings, models_from_initialize, session_only)

__all__ = ["DEFAULT_COMMAND", "HARNESS_ID", "LABEL", "PLAN_MODE", "TESTED_VERSION", "ClaudeDriver", "Driver",
           "Projection",
           "command_line", "find_conversation_cwd", "listing_command_line", "listing_reply", "listing_requests",
           "mode_settings", "models_from_initialize", "session_only"]
