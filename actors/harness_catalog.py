"""The HarnessCatalog actor: which CLIs exist here and which models each offers.

Models are asked from the CLI itself without sending a prompt (Claude Code answers its
``initialize`` control request with its model list; no model request is made). A list is
cached per command line for ten minutes, so pages opening the picker do not start a CLI each
time; a failure only for a few seconds, so a CLI that was signed in or mended since shows up at
the next look, and a broken one is not started again on every page load.
"""
from __future__ import annotations

import json
import os
import shutil
import time

import gevent
import pykka
from gevent import subprocess

from actors import proctree
from actors.chatlog import daemon_log
from actors.harness import HARNESSES
from actors.session_rules import cut_utf8

CACHE_SECONDS = 600
RETRY_SECONDS = 5.0
LIST_TIMEOUT = 20.0


def command_for(harness_id: str, commands: dict) -> tuple[str, ...]:
    """How a CLI is run: the manifest's ``command`` for it (``commands``: harness id -> argv),
    else the CLI's own name."""
    return tuple(commands.get(harness_id) or HARNESSES[harness_id].DEFAULT_COMMAND)


class HarnessCatalog(pykka.ThreadingActor):
    def __init__(self, environment: dict | None = None, retry_seconds: float = RETRY_SECONDS):
        super().__init__()
        self._environment = environment if environment is not None else dict(os.environ)
        self._retry_seconds = retry_seconds
        self._cache: dict[tuple, tuple[float, dict]] = {}  # key -> (good until, entry)

    def ping(self) -> bool:
        return True

    def harnesses(self, commands: dict[str, tuple[str, ...]], cwd: str) -> list[dict]:
        # Each CLI is asked at the same time: one slow CLI costs its own wait, not the sum.
        jobs = [gevent.spawn(self._entry, module, command_for(harness_id, commands), cwd)
                for harness_id, module in HARNESSES.items()]
        gevent.joinall(jobs)
        return [job.get() for job in jobs]

    def _entry(self, module, command: tuple[str, ...], cwd: str) -> dict:
        key = (module.HARNESS_ID, command)
        cached = self._cache.get(key)
        if cached and time.monotonic() < cached[0]:
            return cached[1]
        entry = {"id": module.HARNESS_ID, "label": module.LABEL, "available": False, "models": []}
        if getattr(module, "PROTOCOL", None):  # an ACP agent the manifest names
            entry["protocol"] = module.PROTOCOL
        executable = executable_for(command, self._environment)
        if executable is None:
            entry["error"] = missing_cli_message(module, command)
            return entry  # not cached: installing the CLI should show up at the next look
        entry["available"] = True
        try:
            entry["models"] = list_models(module, (executable, *command[1:]), cwd, self._environment)
            keep = CACHE_SECONDS
        except ModelListError as exc:
            entry["error"] = str(exc)
            keep = self._retry_seconds
        self._cache[key] = (time.monotonic() + keep, entry)
        return entry


def executable_for(command: tuple[str, ...], environment: dict | None = None) -> str | None:
    """Where the CLI's executable is, as the daemon would start it, or None."""
    environment = os.environ if environment is None else environment
    return shutil.which(command[0], path=environment.get("PATH"))


def missing_cli_message(module, command: tuple[str, ...]) -> str:
    return (f"{command[0]} was not found on the daemon's PATH; install {module.LABEL} "
            f"or set [devtools.chat.{module.HARNESS_ID}] command in the manifest")


def unavailable(harness_id: str, command: tuple[str, ...], environment: dict | None = None) -> str | None:
    """Why the CLI a harness id names cannot be started with ``command`` (what to install or
    configure), or None when it can."""
    if executable_for(command, environment) is not None:
        return None
    return missing_cli_message(HARNESSES[harness_id], command)


class ModelListError(Exception):
    pass


def list_models(module, command: tuple[str, ...], cwd: str, environment: dict, seen: list | None = None) -> list[dict]:
    """Starts the CLI, asks for its model list without a prompt, ends the CLI. ``seen`` (a list)
    gets every frame the CLI wrote meanwhile (``devhostd doctor`` reads its account from them)."""
    env = dict(environment)
    tag = proctree.make_tag("models")
    env[tag[0]] = tag[1]
    try:
        proc = subprocess.Popen(module.listing_command_line(command), cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise ModelListError(f"could not start {command[0]}: {exc.strerror or exc}") from None
    try:
        _write(proc, module.listing_requests())
        with gevent.Timeout(LIST_TIMEOUT, False):
            for line in proc.stdout:
                try:
                    frame = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(frame, dict):
                    continue
                if seen is not None:
                    seen.append(frame)
                try:
                    models = module.listing_reply(frame)
                except ValueError as exc:
                    raise ModelListError(str(exc)) from None
                if models is not None:
                    _write(proc, module.Driver().stop_frames())
                    return models
        try:  # its output ended or it is silent: a CLI that is ending says why on stderr
            proc.wait(timeout=1.0)
            stderr = proc.stderr.read()
        except subprocess.TimeoutExpired:
            stderr = b""
        detail = cut_utf8(" ".join((stderr or b"").decode("utf-8", "replace").split()), 300)
        raise ModelListError(f"{module.LABEL} did not list its models" + (f": {detail}" if detail else ""))
    except OSError as exc:
        raise ModelListError(f"could not talk to {command[0]}: {exc}") from None
    finally:
        outcome = proctree.terminate(proc, tag, stdin_grace=1.0)
        if outcome.sigkill:
            daemon_log(f"model listing process needed SIGKILL to end: {outcome}")


def _write(proc, frames: list[dict]) -> None:
    if frames:
        proc.stdin.write(b"".join(json.dumps(frame).encode() + b"\n" for frame in frames))
        proc.stdin.flush()
