"""devhostd's runtime modes, and what each means on each CLI's own settings.

Pure, except that a path is resolved (``os.path.realpath``: a few lstat calls) to tell whether
it stays inside the checkout. The mapping is the one measured on the pinned CLIs (Claude Code
2.1.328, Codex 0.169.0; tests/fixtures/modes/README.md). Where a CLI has no setting exactly as
wide as a mode, the CLI runs under the next narrower one and devhostd itself answers the requests
the mode lets through, so a chat never runs wider than asked.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from actors.harness.mode_names import CORE_DEFAULT, RUNTIME_MODES, SESSION_DEFAULT, stored_mode  # noqa: F401

# Claude Code's file-editing tools and where each names its file.
CLAUDE_EDIT_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
                     "NotebookEdit": "notebook_path"}
# Requests that want the person, whatever the mode: a question, the plan's approval.
CLAUDE_PERSON_TOOLS = ("AskUserQuestion", "ExitPlanMode")

NOBODY, EDITS_IN_CHECKOUT, EVERYTHING = "nobody", "edits-in-checkout", "everything"


@dataclass(frozen=True)
class ClaudeSettings:
    permission_mode: str  # --permission-mode (and set_permission_mode)
    allowed_tools: tuple[str, ...]  # --allowedTools: only a new process changes it
    allows: str  # what devhostd answers "allow" to itself: NOBODY, EDITS_IN_CHECKOUT, EVERYTHING
    effective: str  # the devhostd mode this amounts to

    def flags(self) -> list[str]:
        # The flag has no "default" (set_permission_mode has no "manual"): "manual" is reported
        # back as default. Always named, so a user's settings file never widens the mode.
        flags = [f"--permission-mode={'manual' if self.permission_mode == 'default' else self.permission_mode}"]
        if self.allowed_tools:
            flags.append(f"--allowedTools={','.join(self.allowed_tools)}")
        return flags

    def needs_launch(self, launched: "ClaudeSettings") -> bool:
        """Whether a process started under ``launched`` cannot move to these settings: it takes
        bypassPermissions by set_permission_mode only when started with it (bypass_not_launched),
        and reads --allowedTools only at its start."""
        return self.allowed_tools != launched.allowed_tools or (
            self.permission_mode == "bypassPermissions" != launched.permission_mode)


def claude_settings(mode: str, *, as_root: bool, sandbox_declared: bool) -> ClaudeSettings:
    """``as_root``: devhostd runs as root, where the CLI refuses bypassPermissions unless the
    environment declares a sandbox (``IS_SANDBOX=1``, the CLI's own switch: ``sandbox_declared``).
    devhostd never sets that switch itself: it would tell the CLI something devhostd cannot know."""
    if mode == "full-access":
        if not as_root or sandbox_declared:
            return ClaudeSettings("bypassPermissions", (), NOBODY, "full-access")
        # Measured to ask for nothing in the scripted turn; what still asks (an edit outside the
        # CLI's folder, a web fetch) devhostd allows itself, so nothing asks, as the mode says.
        return ClaudeSettings("acceptEdits", ("Bash",), EVERYTHING, "full-access")
    if mode in ("auto-accept-edits", "auto"):
        # acceptEdits would also let file commands (touch, rm) through unasked, and the CLI's
        # auto mode denied every classified step here: both wider or other than asked.
        return ClaudeSettings("default", (), EDITS_IN_CHECKOUT, "auto-accept-edits")
    return ClaudeSettings("default", (), NOBODY, "supervised")


# While planning, Claude Code runs its own plan mode (an edit of the project asks, with
# decision_reason_type "mode"; its plan file under the config home goes unasked) and devhostd
# allows nothing itself: whatever the chat's mode, nothing changes without the person.
CLAUDE_PLAN = ClaudeSettings("plan", (), NOBODY, "supervised")
# The rest of a turn whose approved plan moves it to a mode only a new process has (the swap follows).
CLAUDE_UNTIL_SWAP = ClaudeSettings("default", (), NOBODY, "supervised")


def claude_allows(settings: ClaudeSettings, request: dict, root: str, cwd: str) -> bool:
    """Whether devhostd answers this ``can_use_tool`` request "allow" itself (the person is not asked)."""
    if not isinstance(request, dict) or request.get("subtype") != "can_use_tool":
        return False
    tool = request.get("tool_name")
    if settings.allows == NOBODY or tool in CLAUDE_PERSON_TOOLS:
        return False
    if settings.allows == EVERYTHING:
        return True
    field = CLAUDE_EDIT_TOOLS.get(tool)
    tool_input = request.get("input") if isinstance(request.get("input"), dict) else {}
    return field is not None and inside(tool_input.get(field), root, cwd)


@dataclass(frozen=True)
class CodexSettings:
    approval_policy: str
    sandbox: str  # thread/start's SandboxMode
    accepts_edits: bool  # devhostd accepts a file change itself when every path is in the checkout
    effective: str

    def sandbox_policy(self) -> dict:
        """The same sandbox as turn/start and thread/settings/update take it."""
        return {"type": {"read-only": "readOnly", "workspace-write": "workspaceWrite",
                         "danger-full-access": "dangerFullAccess"}[self.sandbox]}


def codex_settings(mode: str) -> CodexSettings:
    if mode == "full-access":
        return CodexSettings("never", "danger-full-access", False, "full-access")
    if mode == "auto":
        # Codex's own automatic preset: edits and sandboxed commands go, escalations ask.
        return CodexSettings("on-request", "workspace-write", False, "auto")
    if mode == "auto-accept-edits":
        # on-request would also run commands unasked: untrusted asks for both, devhostd accepts edits.
        return CodexSettings("untrusted", "workspace-write", True, "auto-accept-edits")
    return CodexSettings("untrusted", "workspace-write", False, "supervised")


def codex_accepts(settings: CodexSettings, paths, root: str, cwd: str) -> bool:
    """Whether devhostd accepts a file change itself: every changed path inside the checkout
    (an item whose changes it never saw is the person's to decide)."""
    if not settings.accepts_edits or not paths:
        return False
    return all(inside(path, root, cwd) for path in paths)


def inside(path, root: str, cwd: str) -> bool:
    """Whether ``path`` (absolute, or relative to ``cwd``) names a file inside ``root``, with
    ``..`` and symlinks resolved: a link that points out of the checkout is outside it."""
    if not isinstance(path, str) or not path or "\x00" in path or not root:
        return False
    full = path if os.path.isabs(path) else os.path.join(cwd or root, path)
    real, base = os.path.realpath(full), os.path.realpath(root)
    prefix = base if base.endswith(os.sep) else base + os.sep
    return real.startswith(prefix)
