"""The real peer CLIs the tests drive, installed by ``bash tests/peers.sh`` into .peers/.

``claude_env(home, mock_url)`` is the whole environment for one isolated claude run: nothing
of the developer's own environment (keys, HOME, config dirs, proxies) gets through.
``codex_env(home, mock_url)`` is the same for codex; it also writes codex's config.toml.
"""
import functools
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS_SH = REPO / "tests" / "peers.sh"
PEERS_BIN = REPO / ".peers" / "node_modules" / ".bin"
CLAUDE = PEERS_BIN / "claude"
CODEX = PEERS_BIN / "codex"


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


def claude_env(home, mock_url, oauth=False):
    """A complete environment for running claude against ``mock_url`` with HOME=``home``.

    ``oauth``: log in with a (fake) subscription token instead of an API key; only then does
    Claude Code read the API's unified rate-limit headers and report usage limits.

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
        **({"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-test"} if oauth else {"ANTHROPIC_API_KEY": "sk-test"}),
        # Without this the CLI also sends HEAD /api/hello and resolves api.anthropic.com.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        # The default of 10 retries makes a 401 take about three minutes; 1 takes about a second.
        "CLAUDE_CODE_MAX_RETRIES": "1",
    }


def _toml_str(value):
    """A TOML basic string (JSON string escapes are valid TOML ones for what we write)."""
    return json.dumps(str(value))


def codex_env(home, mock_url, *, approval_policy="untrusted", project_dirs=(), features=()):
    """A complete environment for running codex against ``mock_url`` with HOME=``home``.

    Writes ``<home>/.codex/config.toml`` (CODEX_HOME) pointing the model provider ``mock`` at
    ``mock_url`` (a ``MockOpenAI().url``, ending in ``/v1``) with model ``gpt-5.5`` (the slug
    whose tools a simple mock can drive), sandbox workspace-write, no provider retries, and
    every outbound feature off: with ``features.plugins = false`` codex contacts nothing but
    the provider (otherwise it syncs curated plugins from github.com). Each of
    ``project_dirs`` is marked trusted. TMPDIR points inside ``home``.

    ``features``: more ``[features]`` switches turned on, e.g. ``("multi_agent_v2",)`` for the
    ``collaboration`` tools that spawn child agents (off by default in 0.169.0).

    ``approval_policy``: codex-cli 0.169.0 refuses ``approval_policy = "untrusted"`` in
    config.toml (and in ``-c``): `codex app-server` exits at start-up with "Error:
    approval_policy = "untrusted" is no longer supported; remove this setting". So
    "untrusted" (the default here) and None leave the key out, and codex's own default,
    "on-request", applies to a thread that asks for nothing else: a client wanting
    "untrusted" passes ``"approvalPolicy": "untrusted"`` on ``thread/start`` (or as a
    ``turn/start`` override), which codex accepts. Any other value ("on-request", "never",
    "on-failure") is written as the default.

    A CODEX_HOME under the temporary directory makes codex print a harmless "could not create
    PATH aliases" warning on stderr; with TMPDIR inside ``home`` codex does not see /tmp as
    that directory and stays quiet.
    """
    home = Path(home)
    codex_home = home / ".codex"
    tmp = home / "tmp"
    codex_home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "gpt-5.5"',
        'model_provider = "mock"',
        *([] if approval_policy in (None, "untrusted")
          else [f"approval_policy = {_toml_str(approval_policy)}"]),
        'sandbox_mode = "workspace-write"',
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[otel]",
        'exporter = "none"',
        "",
        "[features]",
        "plugins = false",
        "unbounded_connection_retries = false",
        *(f"{name} = true" for name in features),
        "",
        "[model_providers.mock]",
        'name = "Mock OpenAI"',
        f"base_url = {_toml_str(mock_url)}",
        'wire_api = "responses"',
        'env_key = "MOCK_OPENAI_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "stream_idle_timeout_ms = 30000",
    ]
    for project in project_dirs:
        lines += ["", f"[projects.{_toml_str(Path(project).resolve())}]",
                  'trust_level = "trusted"']
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
    return {
        "PATH": f"{PEERS_BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
        "MOCK_OPENAI_API_KEY": "sk-mock-dummy",
    }
