"""Reading what git says changed between two snapshots (pure: bytes in, values out).

Two outputs of `git diff-tree -r -M` are read together: ``--raw -z`` for each file's status,
modes, blob ids and exact paths (NUL-separated, never quoted), and ``-p`` for the hunks. The
patch's blocks come in the same order as the raw entries, one each — except a type change
(a file becoming a symlink), which git writes as a deletion and a creation: two blocks.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

PER_FILE_LINES = 2000
TOTAL_LINES = 20000
STATUSES = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "modified"}
_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
GITLINK = "160000"
SYMLINK = "120000"


@dataclass
class Hunk:
    header: str           # "@@ -a,b +c,d @@", as the request names it
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[bytes]    # " ctx", "-old", "+new", "\\ No newline at end of file"


@dataclass
class FileDiff:
    letter: str           # git's status letter: A M D R T
    path: str             # the path in `after` (for a deletion: the path that was)
    old_path: str | None  # the path in `before` when it differs (a rename)
    old_mode: str
    new_mode: str
    old_id: str
    new_id: str
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def status(self) -> str:
        return STATUSES[self.letter]

    @property
    def before_path(self) -> str | None:
        """Where the file was before the turn (None: the turn added it)."""
        return None if self.letter == "A" else (self.old_path or self.path)

    @property
    def after_path(self) -> str | None:
        """Where the file is after the turn (None: the turn deleted it)."""
        return None if self.letter == "D" else self.path

    def counts(self) -> tuple[int, int]:
        added = sum(1 for h in self.hunks for line in h.lines if line[:1] == b"+")
        removed = sum(1 for h in self.hunks for line in h.lines if line[:1] == b"-")
        return added, removed


def parse_raw(raw: bytes) -> list[FileDiff]:
    fields = raw.split(b"\0")
    entries, i = [], 0
    while i < len(fields) and fields[i]:
        old_mode, new_mode, old_id, new_id, status = fields[i][1:].decode().split(" ")
        letter = status[0]
        if letter in "RC":
            old_path, path, i = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2]), i + 3
        else:
            old_path, path, i = None, os.fsdecode(fields[i + 1]), i + 2
        if letter == "C":  # not asked for (-M only); a copy reads as an addition
            letter, old_path = "A", None
        entries.append(FileDiff(letter, path, old_path, old_mode, new_mode, old_id, new_id))
    return entries


def parse(raw: bytes, patch: bytes) -> list[FileDiff]:
    """The files of the diff, each with its hunks (binary files: none, ``binary`` set)."""
    entries = parse_raw(raw)
    blocks = _blocks(patch)
    wanted = sum(2 if e.letter == "T" else 1 for e in entries)
    if len(blocks) != wanted:
        raise ValueError(f"the patch has {len(blocks)} blocks for {wanted} expected")
    position = 0
    for entry in entries:
        for block in blocks[position:position + (2 if entry.letter == "T" else 1)]:
            binary, hunks = _read_block(block)
            entry.binary = entry.binary or binary
            entry.hunks.extend(hunks)
        position += 2 if entry.letter == "T" else 1
    return entries


def _blocks(patch: bytes) -> list[list[bytes]]:
    blocks: list[list[bytes]] = []
    lines = patch.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        if line.startswith(b"diff --git "):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return blocks


def _read_block(block: list[bytes]) -> tuple[bool, list[Hunk]]:
    hunks: list[Hunk] = []
    binary = False
    for line in block[1:]:
        match = _HEADER.match(line) if line.startswith(b"@@") else None
        if match:
            a, b, c, d = match.groups()
            hunks.append(Hunk(match.group(0).decode(), int(a), 1 if b is None else int(b),
                              int(c), 1 if d is None else int(d), []))
        elif hunks and line[:1] in (b" ", b"-", b"+", b"\\"):
            hunks[-1].lines.append(line)
        elif not hunks and (line.startswith(b"Binary files ") or line == b"GIT binary patch"):
            binary = True
    return binary, hunks


def described(entries: list[FileDiff], per_file: int = PER_FILE_LINES, total: int = TOTAL_LINES) -> list[dict]:
    """The files as the contract shows them; hunk lines past a budget are cut (``truncated``),
    the counts stay those of the whole diff."""
    files, budget = [], total
    for entry in entries:
        added, removed = entry.counts()
        item: dict = {"path": entry.path, "status": entry.status, "added": added, "removed": removed}
        if entry.old_path is not None:
            item["oldPath"] = entry.old_path
        if entry.binary:
            item["binary"] = True
        hunks, room, cut = [], min(per_file, budget), False
        for hunk in entry.hunks:
            if room <= 0:
                cut = True
                break
            lines = hunk.lines[:room]
            cut = cut or len(lines) < len(hunk.lines)
            room -= len(lines)
            budget -= len(lines)
            hunks.append({"header": hunk.header, "lines": [line.decode("utf-8", "replace") for line in lines]})
        item["hunks"] = hunks
        if cut:
            item["truncated"] = True
        files.append(item)
    return files
