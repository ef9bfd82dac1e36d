"""Where a core chat lives on disk: a record (snapshot) and an append-only event log.

    <data>/chats/<encoded id>.json   {info, items, seq, resetSeq, ...}  atomic: temp + fsync + rename
    <data>/chats/<encoded id>.log    one JSON line per event: {seq, at, event}

Reading takes the record and replays the log lines after its ``seq``. A torn last line (a
crash mid-append) is ignored and the next append starts on a fresh line. A record that does
not parse is refused as unreadable and left exactly as it is, log included. Ids are
percent-encoded, so no id can name a path outside the folder. Files are 0600 in 0700 folders.
"""
from __future__ import annotations

import errno
import json
import os
import time
from urllib.parse import quote

from storage.atomic import write_json_atomically

FOLD_LOG_BYTES = 1 << 20  # past this the log is folded into a new record
MAX_NAME = 255 - len(".json")  # an encoded id plus its longest suffix must fit a file name (NAME_MAX)


class ChatUnreadable(Exception):
    """The record exists but cannot be used; it is left untouched."""


def encode_id(chat_id: str) -> str:
    """The file name stem of a chat; ValueError for an id too long to name a file at all."""
    # surrogatepass: an id from JSON may hold a lone surrogate; it still gets a name of its own
    encoded = quote(chat_id.encode("utf-8", "surrogatepass"), safe="")
    # "." and ".." stay as they are under quote(); a prefix keeps every name an ordinary file name.
    if len("c-" + encoded) > MAX_NAME:
        raise ValueError(f"the chat id is too long to be stored ({len(encoded)} characters once encoded, "
                         f"at most {MAX_NAME - 2})")
    return "c-" + encoded


class ChatStore:
    def __init__(self, data_dir: str):
        self.folder = os.path.join(data_dir, "chats")

    def _paths(self, chat_id: str) -> tuple[str, str]:
        base = os.path.join(self.folder, encode_id(chat_id))
        return base + ".json", base + ".log"

    def log_path(self, chat_id: str) -> str:
        return self._paths(chat_id)[1]

    def exists(self, chat_id: str) -> bool:
        record, log = self._paths(chat_id)
        return os.path.exists(record) or os.path.exists(log)

    def load(self, chat_id: str) -> tuple[dict | None, list[dict]]:
        """(record or None, log events after the record's seq, in order)."""
        record_path, log_path = self._paths(chat_id)
        record = None
        if os.path.exists(record_path):
            try:
                with open(record_path, encoding="utf-8") as handle:
                    record = json.load(handle)
            except (OSError, ValueError, RecursionError) as exc:
                raise ChatUnreadable(f"the record of chat {chat_id} cannot be read: {exc}") from None
            problem = record_problem(record)
            if problem:
                raise ChatUnreadable(f"the record of chat {chat_id} is not a chat record: {problem}")
        since = record.get("seq", 0) if record else 0
        log = [line for line in read_log(log_path) if line["seq"] > since]
        for line in log:
            problem = event_problem(line["event"])
            if problem:
                raise ChatUnreadable(f"the log of chat {chat_id} holds an event that is not one: {problem}")
        if record is None and log and (log[0]["seq"] != 1 or log[0]["event"].get("type") not in ("info", "reset")):
            # A log without its record can only rebuild a chat from its very start.
            raise ChatUnreadable(f"chat {chat_id} has a log but no record to read it against")
        return record, log

    def write_record(self, chat_id: str, record: dict) -> int:
        """Writes the snapshot and folds the log lines it covers; returns the record's size."""
        record_path, log_path = self._paths(chat_id)
        size = write_json_atomically(record_path, record)
        try:
            os.unlink(log_path)  # every line is in the record now
        except FileNotFoundError:
            pass
        return size

    @staticmethod
    def line(seq: int, event: dict) -> bytes:
        """One event as its log line."""
        return json.dumps({"seq": seq, "at": int(time.time() * 1000), "event": event},
                          separators=(",", ":")).encode() + b"\n"

    def append(self, chat_id: str, seq: int, event: dict) -> int:
        """Appends one event line; returns the log's size (the caller folds past FOLD_LOG_BYTES)."""
        return self.append_line(chat_id, self.line(seq, event))

    def append_line(self, chat_id: str, line: bytes) -> int:
        """Appends a line made by ``line``, whole or not at all: OSError when the disk refuses
        part of it (the part that was written is cut off again)."""
        _, log_path = self._paths(chat_id)
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        fd = os.open(log_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(fd, size) != b"\n":
                line = b"\n" + line  # a torn last line stays torn, and is skipped on reading
            try:
                write_all(fd, line)
            except OSError:
                try:
                    os.ftruncate(fd, size)  # shrinking needs no space: no half line is left behind
                except OSError:
                    pass  # the half line is torn, and skipped on reading
                raise
            return size + len(line)
        finally:
            os.close(fd)

    def free_bytes(self) -> int | None:
        """What the folder's disk has free for this user (None when it cannot tell)."""
        try:
            found = os.statvfs(self.folder)
        except OSError:
            return None
        return found.f_bavail * found.f_frsize

    def remove(self, chat_id: str) -> None:
        # The log first: a crash between the two leaves a record (a whole chat), never a lone log.
        for path in reversed(self._paths(chat_id)):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def chat_ids(self) -> list[str]:
        from urllib.parse import unquote
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        ids = set()
        for name in names:
            for suffix in (".json", ".log"):
                if name.startswith("c-") and name.endswith(suffix):
                    ids.add(unquote(name[2:-len(suffix)], errors="surrogatepass"))
        return sorted(ids)


_INFO_KEYS = {"chatId": str, "provider": str, "cwd": str, "queue": list, "usage": dict, "status": str}


def info_problem(info) -> str | None:
    if not isinstance(info, dict):
        return "info is not an object"
    for key, kind in _INFO_KEYS.items():
        if not isinstance(info.get(key), kind):
            return f"info.{key} is missing or not a {kind.__name__}"
    if not os.path.isabs(info["cwd"]):
        return "info.cwd is not an absolute folder"
    return None


def item_problem(item) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"] \
            or not isinstance(item.get("kind"), str):
        return "an item without an id or a kind"
    return None


def record_problem(record) -> str | None:
    if not isinstance(record, dict):
        return "not an object"
    if not isinstance(record.get("items"), list):
        return "no item list"
    return info_problem(record.get("info")) or next(
        (p for p in (item_problem(item) for item in record["items"]) if p), None)


def event_problem(event: dict) -> str | None:
    kind = event.get("type")
    if kind == "item":
        return item_problem(event.get("item"))
    if kind == "delta":
        return None if isinstance(event.get("itemId"), str) and isinstance(event.get("text"), str) else "a bad delta"
    if kind == "info":
        return info_problem(event.get("info"))
    if kind == "reset":
        return info_problem(event.get("info")) or (None if isinstance(event.get("items"), list) else "a bad reset")
    return f"unknown event type {kind!r}"


def write_all(fd: int, data: bytes, write=os.write) -> None:
    """Writes all of ``data``: a write may take only part of it (a disk filling up, a signal),
    so the rest is written after it; OSError when the disk takes nothing more."""
    view = memoryview(data)
    while view:
        written = write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "the disk took none of the write")
        view = view[written:]


def _last_byte(fd: int, size: int) -> bytes:
    return os.pread(fd, 1, size - 1)


def read_log(path: str) -> list[dict]:
    """The log's lines in order; a torn or garbled line is skipped, and lines must climb in seq."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    lines, last = [], 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # torn by a crash mid-write
        if not isinstance(line, dict) or not isinstance(line.get("seq"), int) or line["seq"] <= last \
                or not isinstance(line.get("event"), dict):
            continue
        lines.append(line)
        last = line["seq"]
    return lines


# What read_log_after reads from the log's end at a time, going back until it passes ``since``.
TAIL_CHUNK = 64 << 10
_SEQ_PREFIX = b'{"seq":'  # every line ChatStore.line writes starts so: its seq is read without parsing it


def _line_seq(raw: bytes) -> int | None:
    """The seq a log line starts with (ChatStore.line writes it first), read without parsing
    the line; None for a line that does not start so (torn, garbled)."""
    if not raw.startswith(_SEQ_PREFIX):
        return None
    digits = raw[len(_SEQ_PREFIX):len(_SEQ_PREFIX) + 20].split(b",", 1)[0]
    return int(digits) if digits.isdigit() else None


def read_log_after(path: str, since: int) -> list[dict]:
    """The log's lines after ``since``, in order, reading only the end of the log that holds
    them: from the end back (a piece, then twice as much, ...) to the first line at or before
    ``since``, and only the lines after it parsed (read_log's rules: a torn or garbled line is
    skipped, seqs climb). Empty when the log does not reach back to ``since + 1`` (its start
    was folded into the record): nothing is parsed then. The caller checks what it got is whole."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return []
    with handle:
        end = handle.seek(0, os.SEEK_END)
        position, step, data, first_line = end, TAIL_CHUNK, b"", 0
        while position > 0:
            position = max(0, position - step)
            step *= 2  # a long way back costs reads of twice the size, never the whole log again and again
            handle.seek(position)
            data = handle.read(end - position)
            # What comes before the first line break may be half a line: a line starts after it.
            first_line = 0 if position == 0 else data.find(b"\n") + 1
            if first_line == 0 and position > 0:
                continue
            seq = next((s for s in map(_line_seq, data[first_line:].split(b"\n")) if s is not None), None)
            if seq is not None and seq <= since:
                break
        lines = data[first_line:].split(b"\n")
    starts = [s for s in map(_line_seq, lines) if s is not None]
    if not starts or starts[0] > since + 1:
        return []
    out, last = [], since
    for raw in lines:
        seq = _line_seq(raw)
        if seq is None or seq <= last:
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # torn by a crash mid-write
        if not isinstance(line, dict) or line.get("seq") != seq or not isinstance(line.get("event"), dict):
            continue
        out.append(line)
        last = seq
    return out


class FolderInUse(Exception):
    pass


def lock_folder(folder: str):
    """Takes the folder for this daemon alone; FolderInUse if another one writes it."""
    import fcntl
    os.makedirs(folder, mode=0o700, exist_ok=True)
    handle = open(os.path.join(folder, "lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise FolderInUse(f"another devhostd keeps its chats in {folder}; give this one its own --state-dir") from None
    return handle  # held open (and locked) for the daemon's life
