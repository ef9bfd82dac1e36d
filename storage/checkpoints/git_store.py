"""One bare git repository per checkout, where devhostd keeps its snapshots, and how git is run
against it.

Every call runs with GIT_DIR=<store>, GIT_WORK_TREE=<checkout> and GIT_INDEX_FILE=<store>/indexes/
<index>, so the person's repository (refs, index, stash, hooks, config) is never read or written:
the inherited GIT_* variables are dropped first (a GIT_DIR or GIT_INDEX_FILE left from the shell
that started devhostd would point git at the person's repository), and neither the system nor the
global config is read (no user hooks, filters, aliases or fsmonitor). The store's
info/attributes turns off every byte-changing attribute, above any .gitattributes of the
checkout, so a snapshot holds the exact bytes on disk and never runs LFS or a filter.

Blocking subprocess calls: under gevent's patch they wait cooperatively.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile

from storage.checkpoints.errors import CheckpointError

CONFIG = (("core.autocrlf", "false"), ("core.safecrlf", "false"), ("gc.auto", "0"),
          ("core.fsmonitor", "false"), ("core.quotePath", "false"),
          # the snapshot needs no reflog of its refs
          ("core.logAllRefUpdates", "false"),
          # zlib's fastest level: a first snapshot of a large checkout spends most of its CPU
          # compressing (level 1 costs about half of git's default, for a somewhat larger store)
          ("core.looseCompression", "1"))
ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding\n"
IDENTITY = {"GIT_AUTHOR_NAME": "devhostd", "GIT_AUTHOR_EMAIL": "devhostd@localhost",
            "GIT_COMMITTER_NAME": "devhostd", "GIT_COMMITTER_EMAIL": "devhostd@localhost"}
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class Deadline(Exception):
    """A git call ran past the time it was given (it was killed)."""


def store_folder(state_root: str, checkout: str) -> str:
    real = os.path.realpath(checkout)
    return os.path.join(state_root, hashlib.sha256(os.fsencode(real)).hexdigest()[:32])


def ref_name(name, what: str = "ref") -> str:
    """A ref (or ref prefix) from the caller, '/'-separated, as a valid git ref name: each part
    percent-encoded where git or a file system would refuse it (a chat id may hold spaces,
    colons, any letter: the same id always gives the same name, two ids never one)."""
    if not isinstance(name, str) or not name or any(not part for part in name.split("/")):
        raise CheckpointError(f"{what} {name!r} is no valid name: no empty parts between '/'")
    return "/".join(_encoded(part) for part in name.split("/"))


def index_name(name) -> str:
    """An index name from the caller as one file name ('/' encoded too)."""
    if not isinstance(name, str) or not name:
        raise CheckpointError(f"index {name!r} is no valid name")
    return _encoded(name)


def _encoded(part: str) -> str:
    out = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                  for c in part)
    # git refuses a part that starts or ends with '.', holds '..' or ends in '.lock'
    out = out.replace("..", ".%2E")
    if out.startswith("."):
        out = "%2E" + out[1:]
    if out.endswith("."):
        out = out[:-1] + "%2E"
    if out.endswith(".lock"):
        out = out[:-5] + "%2Elock"
    if len(out) > 200:  # a file name (loose ref, index) has 255 bytes at most
        out = out[:120] + "-" + hashlib.sha256(out.encode()).hexdigest()[:32]
    return out


def checked_commit(commit) -> str:
    if not isinstance(commit, str) or not _COMMIT.match(commit):
        raise CheckpointError(f"{commit!r} is no checkpoint commit")
    return commit


class GitStore:
    """The bare repository for one checkout, created on first use."""

    def __init__(self, state_root: str, checkout: str):
        self.checkout = os.path.realpath(checkout)
        if not os.path.isdir(self.checkout):
            raise CheckpointError(f"{checkout} is no folder")
        self.path = store_folder(state_root, checkout)
        if not os.path.isfile(os.path.join(self.path, "HEAD")):
            self._create(state_root)
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self._env.update(IDENTITY, GIT_DIR=self.path, GIT_WORK_TREE=self.checkout, GIT_CONFIG_NOSYSTEM="1",
                         GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", LC_ALL="C")

    def _create(self, state_root: str) -> None:
        # Built aside and renamed in place: two first uses at once never see a half-made store.
        os.makedirs(state_root, mode=0o700, exist_ok=True)
        temp = tempfile.mkdtemp(prefix=".new-", dir=state_root)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
            # --template= : no sample hooks or template files from the system's git install
            _checked(subprocess.run(["git", "init", "--bare", "-q", "--template=", temp], env=env,
                                    capture_output=True, check=False), "git init")
            for key, value in CONFIG:
                _checked(subprocess.run(["git", "--git-dir", temp, "config", key, value], env=env,
                                        capture_output=True, check=False), "git config")
            for folder in ("info", "indexes"):
                os.makedirs(os.path.join(temp, folder), exist_ok=True)
            with open(os.path.join(temp, "info", "attributes"), "wb") as handle:
                handle.write(ATTRIBUTES)
            with open(os.path.join(temp, "checkout"), "wb") as handle:  # for a person looking in
                handle.write(os.fsencode(self.checkout) + b"\n")
            try:
                os.rename(temp, self.path)
            except OSError:
                if not os.path.isfile(os.path.join(self.path, "HEAD")):
                    raise
        finally:
            shutil.rmtree(temp, ignore_errors=True)

    def index_path(self, index: str) -> str:
        return os.path.join(self.path, "indexes", index_name(index))

    def git(self, *args: str, index: str | None = None, index_file: str | None = None, data: bytes | None = None,
            timeout: float | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        """stdout of `git <args>` (raises CheckpointError on another exit code, Deadline past
        ``timeout``); ``index``: the store's index of that name, ``index_file``: a path."""
        env = self._env
        if index is not None or index_file is not None:
            env = {**env, "GIT_INDEX_FILE": index_file or self.index_path(index)}
        try:
            done = subprocess.run(["git", *args], input=data, env=env, cwd=self.checkout, capture_output=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired as error:
            raise Deadline(args[0]) from error
        except OSError as error:
            raise CheckpointError(f"git could not run: {error}") from error
        if done.returncode not in ok:
            _checked(done, f"git {args[0]}")
        return done.stdout

    def update_ref(self, ref: str, commit: str) -> None:
        self.git("update-ref", f"refs/devhostd/{ref_name(ref)}", checked_commit(commit))

    def delete_refs(self, prefix: str) -> list[str]:
        """Deletes refs/devhostd/<prefix> and every ref under it; returns their names."""
        base = f"refs/devhostd/{ref_name(prefix, 'prefix')}"
        names = [n for n in self.git("for-each-ref", "--format=%(refname)", base).decode().splitlines() if n]
        if names:
            self.git("update-ref", "--stdin", data="".join(f"delete {n}\n" for n in names).encode())
        return names


def _checked(done: subprocess.CompletedProcess, what: str) -> None:
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CheckpointError(f"{what} failed: {message[-1] if message else f'exit {done.returncode}'}")
