"""The real peer CLIs the tests drive, installed by ``bash tests/peers.sh`` into .peers/.

``claude_env(home, mock_url)`` is the whole environment for one isolated claude run: nothing
of the developer's own environment (keys, HOME, config dirs, proxies) gets through.
"""
import functools
import os
import re
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS_SH = REPO / "tests" / "peers.sh"
PEERS_BIN = REPO / ".peers" / "node_modules" / ".bin"
CLAUDE = PEERS_BIN / "claude"


class PeersMissing(RuntimeError):
    pass


def pinned_versions():
    """{"claude": "2.1.328", "codex": "0.169.0"}, read from tests/peers.sh (the one record)."""
    text = PEERS_SH.read_text()
    return {name.lower(): version
            for name, version in re.findall(r"^(CLAUDE|CODEX)_VERSION=(\S+)$", text, re.M)}


@functools.cache
def _check(name):
    exe = PEERS_BIN / name
    fix = f"Install the pinned CLIs with `bash tests/peers.sh` (in {REPO})."
    if not (exe.exists() and os.access(exe, os.X_OK)):
        raise PeersMissing(f"{exe} is missing: the tests drive the real CLIs. {fix}")
    want = pinned_versions()[name]
    with tempfile.TemporaryDirectory() as home:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60,
                             env={"PATH": f"{PEERS_BIN}:/usr/bin:/bin", "HOME": home}).stdout
    if want not in out.split():
        raise PeersMissing(f"{exe} --version says {out.strip()!r}, the tests pin {want}. {fix}")


def require_peers(*names):
    """Fail loudly (never skip) unless the pinned peer CLIs are installed. Default: claude."""
    for name in names or ("claude",):
        _check(name)


def claude_env(home, mock_url):
    """A complete environment for running claude against ``mock_url`` with HOME=``home``.

    ``home`` should be a fresh temporary directory; claude writes ~/.claude.json and ~/.claude/
    there. No onboarding file is needed in print mode with an API key. TMPDIR points inside
    ``home`` as well, so the Bash tool's scratch files stay there too.
    """
    home = Path(home)
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": f"{PEERS_BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
        "ANTHROPIC_BASE_URL": mock_url,
        "ANTHROPIC_API_KEY": "sk-test",
        # Without this the CLI also sends HEAD /api/hello and resolves api.anthropic.com.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        # The default of 10 retries makes a 401 take about three minutes; 1 takes about a second.
        "CLAUDE_CODE_MAX_RETRIES": "1",
    }
