"""The HTTP routes around the chat: config, harnesses, sessions, panel, and their refusals."""
from __future__ import annotations

import shutil
import subprocess

from tests.integration.daemon import REPO, Daemon


def test_config_names_the_stack_and_its_control_origin_and_is_never_cached(daemon):
    status, config = daemon.request("GET", "/__devhost__/config.json", origin=None)
    assert status == 200
    assert config["name"] == "teststack"
    assert config["controlOrigin"] == daemon.control_origin
    assert config["devhostSourceRootPath"] == str(REPO)  # the tests run from a git checkout
    assert {s["host"] for s in config["services"]} == {"app.localhost", "other.localhost"}
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    connection.request("GET", "/__devhost__/config.json", headers={"Host": daemon.host()})
    response = connection.getresponse()
    response.read()
    assert response.getheader("Cache-Control") == "no-store"
    connection.close()


def test_harnesses_list_both_clis_with_their_models(daemon, mock):
    status, answer = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}")
    assert status == 200
    by_id = {h["id"]: h for h in answer["harnesses"]}
    claude = by_id["claude-code"]
    assert claude["available"] is True and claude["label"] == "Claude Code"
    assert all({"id", "label", "description"} <= set(m) for m in claude["models"])
    assert "sonnet" in {m["id"] for m in claude["models"]}
    codex = by_id["codex"]
    assert codex["available"] is True and codex["label"] == "Codex" and "error" not in codex
    assert codex["models"] and all({"id", "label", "description"} <= set(m) for m in codex["models"])
    assert mock.requests == []  # no prompt was sent to learn the models


def test_a_missing_cli_makes_its_harness_unavailable(stack, daemon_env):
    env = dict(daemon_env, PATH="/usr/bin:/bin")
    running = Daemon(env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        status, answer = running.request("GET", f"/__devhost__/chat/harnesses?{running.query()}")
        claude = next(h for h in answer["harnesses"] if h["id"] == "claude-code")
        assert claude["available"] is False and "not found" in claude["error"]
        status, body = running.request("POST", "/__devhost__/chat/sessions",
                                       {"harness": "claude-code", "pageURL": running.page(), "target": "project"})
        assert status == 400 and "not available" in body["error"]
    finally:
        assert running.stop() == 0


def test_session_requests_with_bad_fields_get_400_with_a_reason(daemon):
    page = daemon.page()
    cases = [
        ({"harness": "claude-code", "pageURL": page}, "target"),
        ({"harness": "claude-code", "pageURL": page, "target": "elsewhere"}, "target"),
        ({"harness": "nope", "pageURL": page, "target": "project"}, "harness"),
        ({"harness": "claude-code", "target": "project"}, "pageURL"),
        ({"harness": "claude-code", "pageURL": "ftp://app.localhost/", "target": "project"}, "pageURL"),
        ({"harness": "claude-code", "pageURL": "http://unrouted.localhost/", "target": "project"}, "routed"),
        ({"harness": "claude-code", "pageURL": page, "target": "project", "model": "--dangerous"}, "model"),
        ({"harness": "claude-code", "pageURL": page, "target": "project", "resumeId": "--continue"}, "resumeId"),
    ]
    for body, word in cases:
        status, answer = daemon.request("POST", "/__devhost__/chat/sessions", body)
        assert status == 400 and word in answer["error"], (body, answer)
    status, answer = daemon.request("POST", "/__devhost__/chat/sessions", raw=b"{not json")
    assert status == 400 and "JSON" in answer["error"]
    status, answer = daemon.request("POST", "/__devhost__/chat/sessions", raw=b"[1, 2]")
    assert status == 400
    status, answer = daemon.request("GET", "/__devhost__/chat/sessions")  # no query at all
    assert status == 400
    status, answer = daemon.request("DELETE", "/__devhost__/config.json")
    assert status in (404, 405) and "error" in answer
    status, answer = daemon.request("GET", "/__devhost__/no/such/route", origin=None)
    assert status == 404 and "error" in answer


def test_closing_an_unknown_session_is_404(daemon):
    status, answer = daemon.close_session("0000000000000000")
    assert status == 404 and "no session" in answer["error"]


def test_the_devhost_target_works_in_the_daemons_own_checkout(daemon, mock):
    record = daemon.create_session(target="devhost")
    assert record["projectRootPath"] == str(REPO)
    assert daemon.sessions() == []  # the project's list is another directory
    status, value = daemon.request("GET", f"/__devhost__/chat/sessions?{daemon.query(target='devhost')}")
    assert [s["id"] for s in value["sessions"]] == [record["id"]]


def test_the_devhost_target_is_refused_outside_a_development_build(stack, daemon_env, tmp_path):
    installed = tmp_path / "installed-devhostd"
    for part in ("actors", "web", "storage", "devhostd", "bin"):
        shutil.copytree(REPO / part, installed / part, ignore=shutil.ignore_patterns("__pycache__"))
    running = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state",
                     code_dir=installed)
    try:
        status, config = running.request("GET", "/__devhost__/config.json", origin=None)
        assert config["devhostSourceRootPath"] == ""
        status, body = running.request("POST", "/__devhost__/chat/sessions",
                                       {"harness": "claude-code", "pageURL": running.page(), "target": "devhost"})
        assert status == 400 and "development build" in body["error"]
    finally:
        assert running.stop() == 0
    assert subprocess.run(["git", "-C", str(installed), "status"], capture_output=True).returncode != 0


def test_the_panel_position_is_kept_per_manifest(daemon, stack):
    status, answer = daemon.request("GET", "/__devhost__/chat/panel", origin=None)
    assert status == 200 and answer == {"position": None}
    status, answer = daemon.request("PUT", "/__devhost__/chat/panel", {"position": {"left": 12, "top": 340.5}})
    assert status == 200 and answer == {"position": {"left": 12, "top": 340.5}}
    # Another routed hostname of the same stack sees the same position.
    status, answer = daemon.request("GET", "/__devhost__/chat/panel", host=daemon.host("other.localhost"), origin=None)
    assert answer == {"position": {"left": 12, "top": 340.5}}
    for bad in ({"position": {"left": "12", "top": 1}}, {"position": {"left": 1}}, {"where": None},
                {"position": {"left": 1e308 * 10, "top": 0}}):
        status, answer = daemon.request("PUT", "/__devhost__/chat/panel", raw=_json(bad))
        assert status == 400 and "position" in answer["error"], bad
    status, answer = daemon.request("PUT", "/__devhost__/chat/panel", {"position": None})
    assert status == 200 and answer == {"position": None}


def test_without_a_manifest_the_current_directory_is_the_project_and_the_panel_is_404(tmp_path, daemon_env):
    project = tmp_path / "plain-project"
    project.mkdir()
    running = Daemon(daemon_env, cwd=project, config=None, state_dir=tmp_path / "state")
    try:
        status, config = running.request("GET", "/__devhost__/config.json", host=f"localhost:{running.port}",
                                         origin=None)
        assert status == 200 and config["name"] == "plain-project"
        assert config["services"][0]["projectRootPath"] == str(project)
        status, answer = running.request("GET", "/__devhost__/chat/panel", host=f"localhost:{running.port}",
                                         origin=None)
        assert status == 404 and "manifest" in answer["error"]
    finally:
        assert running.stop() == 0


def _json(value) -> bytes:
    import json
    return json.dumps(value, allow_nan=True).encode()
