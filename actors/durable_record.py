"""A chat's record and log on disk (actors/durable_face.py), and what a disk that refuses them leaves.

A plain part of the DurableFace. It owns the log's numbering (``seq``, and ``reset_seq``: the
seq of the last clear), the fold of the log into the record, and the chat that cannot be saved:
``store_error`` and its code, the first seq not on disk, the retry timer. It is also where the
chat stops reaching the disk: ``frozen`` (shutting down: the record is written as things
stand) and ``removed`` (killed: nothing of it is written again).

What the record holds is the face's: ``whole`` gives the thread's snapshot, after the face has
logged any text it still holds back (the record must not hold text whose event is not logged).
"""
from __future__ import annotations

import os

from actors.core.thread import Thread
from actors.guard import on_threadpool
from actors.tell import call, call_later
from storage import write_failure
from storage.chat_store import FOLD_LOG_BYTES, read_log_after

# A log line longer than this is appended on the hub's threadpool: a write that large can wait
# on the disk; the small ones (most of them) are cheaper on the hub than a thread switch.
APPEND_ON_HUB = 64 << 10
# While the chat cannot be saved (a full disk), saving it whole is tried again this often, and at
# every send (a test may make it quick).
STORE_RETRY_SECONDS = float(os.environ.get("DEVHOSTD_STORE_RETRY_SECONDS") or 5.0)


class ChatRecord:
    def __init__(self, *, chat_id: str, store, log, actor_ref, whole, on_store_changed=None, seq: int = 0,
                 reset_seq: int = 0):
        self._chat_id = chat_id
        self._store = store
        self._log = log
        self._actor_ref = actor_ref  # the chat's own, for the retry timer and on_store_changed
        self._whole = whole  # () -> the thread's snapshot, every event of it logged
        self._on_store_changed = on_store_changed  # () -> None: the chat stops its turn and tells the person
        self.seq = seq  # the last event's
        self.reset_seq = reset_seq  # the last clear's: history cursors of before it expire
        self.removed = False  # killed: nothing of this chat reaches the disk again
        self.frozen = False  # shutting down: the running turn stays running in the record
        self._fold_at = FOLD_LOG_BYTES  # the log's size past which it is folded into the record
        # Why the chat cannot be saved now (words for the person), or None. While it is set the
        # thread in memory is the only whole copy: nothing is appended (the log would get a gap),
        # and the record is written again (STORE_RETRY_SECONDS, each send) until it takes.
        self.store_error: str | None = None
        self.store_code = "storage-full"  # the core's code for it (storage-full, storage-failed)
        self._unsaved_from: int | None = None  # the first seq that is not on disk
        self._retry = None
        self._record_size = 0  # what the last record written took

    def log(self, event: dict) -> int | None:
        """Numbers an event and appends it to the log (unless the chat cannot be saved: then
        the record is tried); its seq, or None when the chat was removed and the event goes
        nowhere. A fold or a record written here logs the text held back first, under later
        seqs: the caller sends by the seq this returns."""
        if self.removed:
            return None
        self.seq += 1
        seq = self.seq
        if self.store_error is None:
            try:
                line = self._store.line(self.seq, event)
                if len(line) > APPEND_ON_HUB:
                    size = on_threadpool(self._store.append_line, self._chat_id, line)
                else:
                    size = self._store.append_line(self._chat_id, line)
                if size > self._fold_at:
                    self.write(fold=True)
            except OSError:
                self.write()  # a line that did not reach disk is folded into the record
        return seq

    def mark_reset(self) -> None:
        """The chat was cleared at the last event: cursors of before expire."""
        self.reset_seq = self.seq

    def events_after(self, since: int) -> list[dict] | None:
        """The events after ``since`` from the log, or None when it no longer has them all."""
        if since == self.seq:
            return []  # a reconnect that missed nothing reads nothing
        # Only the log's end that holds them is read, and only those lines parsed
        # (storage/chat_store.py read_log_after), on the hub's threadpool. Nothing is appended
        # meanwhile: this chat's actor waits here.
        lines = on_threadpool(read_log_after, self._store.log_path(self._chat_id), since)
        if [line["seq"] for line in lines] != list(range(since + 1, self.seq + 1)):
            return None
        return [line["event"] for line in lines]

    def write(self, fold: bool = False) -> bool:
        """Writes the whole thread as the chat's record; False when the disk refused it (the
        chat then cannot be saved until a write of it takes: ``store_error``). A ``fold`` that
        fails loses nothing (the log still holds every event): it is tried again later."""
        if self.removed:
            return True
        snapshot = self._whole()
        try:
            # fsync and rename on the hub's threadpool: file work never holds the hub.
            record = {**snapshot, "seq": self.seq, "resetSeq": self.reset_seq}
            size = on_threadpool(self._store.write_record, self._chat_id, record)
            # The log folds again once it is as large as the record it would be folded into:
            # a long chat is not rewritten whole for every FOLD_LOG_BYTES it grows.
            self._fold_at = max(FOLD_LOG_BYTES, size)
            self._record_size = size
        except OSError as exc:
            if fold and self.store_error is None:
                self._fold_at += FOLD_LOG_BYTES
                return False
            self._failed(exc)
            return False
        if self.store_error is not None:
            self._saved()
        return True

    def retry(self) -> bool:
        """Tries to save the chat whole again; True when it is saved (or was all along). A disk
        that has less free than the last record took is not tried: encoding a long chat for a
        write that cannot fit would cost the hub for nothing."""
        if self.store_error is None or self.removed:
            return True
        free = self._store.free_bytes()
        if (free is None or free >= self._record_size) and self.write():
            return True
        self._arm_retry()
        return False

    def freeze(self) -> None:
        """Shutdown: the record is written as things stand; what a full disk still refuses
        is said in the log, since nothing will hold it after this."""
        self.frozen = True
        self._cancel_retry()
        if not self.write() and not self.removed:
            self._log("store.unsaved", unsaved=f"{self._unsaved_from}..{self.seq}")

    def remove(self) -> None:
        """Killed: nothing is written again (the files go with ``remove_files``)."""
        self.removed = True
        self._cancel_retry()

    def remove_files(self) -> None:
        """The chat's record and log (file work: on the hub's threadpool)."""
        self._store.remove(self._chat_id)

    def _failed(self, exc: OSError) -> None:
        if self.store_error is not None:
            return  # said once: a chat that cannot be saved is not reported for every event
        self.store_error = write_failure.chat_not_saved(os.path.dirname(self._store.folder), exc)
        self.store_code = write_failure.code(exc)
        self._unsaved_from = self.seq
        where = exc.filename or self._store.folder
        self._log("error", kind="store", error=f"{exc.strerror or exc} ({where}); the events from seq {self.seq} "
                                               f"on are kept in memory until it can be saved")
        self._arm_retry()
        self._tell_store_changed()

    def _saved(self) -> None:
        self._log("store.saved", unsaved=f"{self._unsaved_from}..{self.seq}")
        self.store_error = None
        self._unsaved_from = None
        self._cancel_retry()
        self._tell_store_changed()

    def _tell_store_changed(self) -> None:
        # After the event being logged (a call to the chat's actor), not in the middle of it.
        if self._on_store_changed is not None:
            call(self._actor_ref, self._on_store_changed)

    def _arm_retry(self) -> None:
        if self._retry is not None:
            self._retry.kill(block=False)
        if not (self.frozen or self.removed):
            self._retry = call_later(STORE_RETRY_SECONDS, self._actor_ref, self.retry)

    def _cancel_retry(self) -> None:
        if self._retry is not None:
            self._retry.kill(block=False)
            self._retry = None


def replayed(record: dict | None, log_lines: list[dict], info: dict) -> tuple[Thread, int, int]:
    """The thread a record and the log after it hold (``info``: the record's, or a new one when
    it has none), with the seq of its last event and of its last clear (kept as resetSeq:
    history cursors of before it expire, also after a restart)."""
    thread = Thread(info, (record or {}).get("items"))
    seq = (record or {}).get("seq", 0)
    reset_seq = (record or {}).get("resetSeq", 0)
    for line in log_lines:
        thread.apply(line["event"])
        seq = line["seq"]
        if line["event"].get("type") == "reset":
            reset_seq = line["seq"]
    return thread, seq, reset_seq

