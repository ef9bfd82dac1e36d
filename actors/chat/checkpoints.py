"""Every turn a checkpoint (actors/chat/actor.py): what a turn changed in the checkout, and
taking it back, a file, a hunk or the whole turn.

A controller of the Chat actor. Before a message opens a new turn (the link asks,
``link_turn_opening``, before it writes the message), the checkout is snapshot into
devhostd's own store (storage/checkpoints/: a bare repository per checkout with the chat's
own index; the person's repository is never touched). When the turn ends, and again when the
background work it left ends, the tree is snapshot again and the difference is the turn's
``changes`` item. The two commits are kept on the turn item (``checkpoint``,
``checkpointAfter``: the seed's fields), so the changes of any turn can be read and taken
back after a restart too.

The store runs git as subprocesses in this actor's greenlet: gevent's subprocess waits
cooperatively, so only this chat waits (about 0.1 s with the index reused; the store's
deadline bounds a first snapshot of a huge tree, and the turn then says it has none).
"""
from __future__ import annotations

import os
from urllib.parse import quote

from actors.errors import ChatError
from actors.guard import spawn_logged
from actors.tell import call
from storage.checkpoints import SNAPSHOT_SECONDS, CheckpointConflict, CheckpointError, CheckpointStore, Snapshot

NO_STORE = "this chat keeps no checkpoints"
# How long a snapshot may take before the turn goes without one (a test may make it short).
DEADLINE = float(os.environ.get("DEVHOSTD_CHECKPOINT_SECONDS") or SNAPSHOT_SECONDS)
WARM_DEADLINE = float(os.environ.get("DEVHOSTD_CHECKPOINT_WARM_SECONDS") or 300.0)  # once, in the background


def change_summary(turn_id: str, listed: dict) -> dict:
    """The ``changes`` item of a turn: its files with +/- counts, no hunks (those are asked for)."""
    files = [{key: entry[key] for key in ("path", "status", "oldPath", "added", "removed", "binary") if key in entry}
             for entry in listed["files"]]
    item = {"id": f"changes-{turn_id}", "kind": "changes", "turnId": turn_id, "files": files,
            "added": sum(f["added"] for f in files), "removed": sum(f["removed"] for f in files)}
    if listed.get("skipped"):
        item["skipped"] = list(listed["skipped"])
    return item


class Checkpoints:
    def __init__(self, chat, root: str | None):
        self._chat = chat
        self._root = root  # devhostd's folder of checkpoint stores; None: this chat keeps none
        self._store: CheckpointStore | None = None
        self._before = None  # the snapshot taken for the turn about to open
        self._settling: str | None = None  # a turn whose background work may still change files
        # Why turns go without a checkpoint for now: a checkout too large to snapshot in time
        # is snapshot once more in the background with a long deadline (``_warm``), and no
        # message waits for it; when it is done the index is warm and turns have checkpoints.
        self._gave_up: str | None = None
        self._prefix = quote(chat.chat_id, safe="")  # a chat id may hold '/': refs of its own
        self._warming = None

    @property
    def store(self) -> CheckpointStore | None:
        if self._store is None and self._root is not None:
            self._store = CheckpointStore(self._root, self._chat.link.root, snapshot_seconds=DEADLINE)
        return self._store

    @property
    def _index(self) -> str:
        return f"chat-{self._chat.chat_id}"

    # ---- the turn's two snapshots ------------------------------------------------------------

    def turn_opening(self) -> None:
        """A message is about to open a turn: the checkout as it is now, before the CLI has it."""
        if self.store is None or self._chat.durable.record.frozen:
            return
        if self._gave_up is not None:
            self._before = Snapshot(None, (), self._gave_up)
            return
        self._before = self.store.snapshot(index=self._index, ref=f"{self._prefix}/before")
        if self._before.error:
            self._chat.log("checkpoint.skipped", error=self._before.error, took=f"{self._before.took:.1f}s")
        if self._before.timed_out:
            self._gave_up = (f"the checkout is too large to snapshot in {self.store.snapshot_seconds:g} s: "
                             "devhostd is snapshotting it in the background, and the next turns will have "
                             "checkpoints once it is done")
            warm_store = CheckpointStore(self._root, self._chat.link.root, snapshot_seconds=WARM_DEADLINE)
            self._warming = spawn_logged(self._warm, warm_store, self._index, f"{self._prefix}/warm",
                                         self._chat.actor_ref)

    def _warm(self, store: CheckpointStore, index: str, ref: str, actor_ref) -> None:
        """In its own greenlet (git's waits are cooperative): the chat's index filled once, with
        a deadline long enough for a large checkout; the chat hears the outcome in its turn."""
        done = store.snapshot(index=index, ref=ref)
        call(actor_ref, self._warmed, done.error, done.took)

    def stop(self) -> None:
        """The chat stops: a background snapshot ends with it (its git is killed)."""
        if self._warming is not None:
            self._warming.kill(block=False)

    def _warmed(self, error: str | None, took: float) -> None:
        self._warming = None
        self._chat.log("checkpoint.warmed", took=f"{took:.1f}s", error=error)
        self._gave_up = None if error is None else (
            f"no checkpoints in this chat: {error.replace(': this turn has no checkpoint', '')}")

    def turn_opened(self) -> None:
        """The turn the message opened (or joined) is in the thread: it gets the snapshot."""
        before, self._before = self._before, None
        durable = self._chat.durable
        turn_id = durable.info.get("activeTurnId")
        if before is None or turn_id is None or durable.record.frozen:
            return
        turn = durable.thread.item(turn_id)
        if turn is None or turn.get("checkpoint") or turn.get("checkpointNote"):
            return  # a joined message: the turn has its snapshot from its first message
        if before.commit is None:
            durable.upsert({"id": turn_id, "kind": "turn", "checkpointNote": before.error})
            return
        self._keep(before.commit, turn_id, "before")
        changes = {"id": turn_id, "kind": "turn", "checkpoint": before.commit}
        if before.skipped:
            changes["checkpointSkipped"] = list(before.skipped)
        durable.upsert(changes)

    def turn_finished(self, turn_id: str | None) -> None:
        """The turn ended: what it changed is its ``changes`` item. Its background work may go
        on changing files: when that ends, the changes are read again (``background_settled``)."""
        if turn_id is None:
            return
        turn = self._chat.durable.thread.item(turn_id) or {}
        if turn.get("checkpoint") or turn.get("checkpointNote"):
            self._settle(turn_id)
            self._settling = turn_id if self._chat.durable.info.get("background") else None
        else:
            # A turn the CLI began by itself (reporting on background work) has no snapshot of
            # its own: what it changes is the earlier turn's, read again once all of it is done.
            self.background_settled()

    def background_settled(self) -> None:
        """Called after the CLI's frames: once the background work a turn left is done, its
        changes are read again (a subagent's or a shell's edits are the turn's too)."""
        if self._settling is not None and not self._chat.durable.info.get("background") \
                and not self._chat.link.turn_active:
            turn_id, self._settling = self._settling, None
            self._settle(turn_id)

    def _settle(self, turn_id: str) -> None:
        durable = self._chat.durable
        turn = durable.thread.item(turn_id)
        if self.store is None or turn is None or durable.record.frozen or durable.record.removed:
            return
        if not turn.get("checkpoint"):
            if turn.get("checkpointNote"):
                durable.upsert({"id": f"changes-{turn_id}", "kind": "changes", "turnId": turn_id, "files": [],
                                "added": 0, "removed": 0, "note": turn["checkpointNote"]})
            return
        after = self.store.snapshot(index=self._index, ref=self._ref(turn_id, "after"))
        if after.commit is None:
            durable.upsert({"id": f"changes-{turn_id}", "kind": "changes", "turnId": turn_id, "files": [],
                            "added": 0, "removed": 0, "note": after.error})
            return
        durable.upsert({"id": turn_id, "kind": "turn", "checkpointAfter": after.commit})
        self._publish_changes(turn_id, turn["checkpoint"], after.commit)

    def _publish_changes(self, turn_id: str, before: str, after: str, reverted: list | None = None) -> dict:
        listed = self._changes(before, after)
        item = change_summary(turn_id, listed)
        old = self._chat.durable.thread.item(item["id"]) or {}
        done = sorted(set(old.get("reverted") or []) | set(reverted or []))
        if done:
            item["reverted"] = done
        self._chat.durable.upsert(item)
        return listed

    def _changes(self, before: str, after: str) -> dict:
        try:
            return self.store.changes(before, after)
        except CheckpointError as exc:
            raise ChatError("storage-failed", f"the turn's changes cannot be read: {exc}") from None

    def _ref(self, turn_id: str, side: str) -> str:
        return f"{self._prefix}/{quote(turn_id, safe='')}/{side}"

    def _keep(self, commit: str, turn_id: str, side: str) -> None:
        """A ref per turn and side keeps its commit in the store for as long as the chat lives."""
        try:
            self.store.keep(commit, self._ref(turn_id, side))
        except CheckpointError as exc:
            self._chat.log("error", kind="checkpoint", error=str(exc))

    # ---- the core's requests -----------------------------------------------------------------

    def _turn(self, turn_id) -> tuple[str, str]:
        """(before, after) of a finished turn, or a ChatError saying why there are none."""
        if not isinstance(turn_id, str) or not turn_id:
            raise ChatError("bad-request", "`turnId` must be the id of one of the chat's turns")
        turn = self._chat.durable.thread.item(turn_id)
        if turn is None or turn.get("kind") != "turn":
            raise ChatError("item-not-found", f"No turn {turn_id} in chat {self._chat.chat_id}")
        if self.store is None:
            raise ChatError("chat-unsupported", NO_STORE)
        if not turn.get("checkpoint"):
            raise ChatError("chat-unsupported", f"turn {turn_id} has no checkpoint"
                            + (f": {turn['checkpointNote']}" if turn.get("checkpointNote") else ""))
        if turn.get("state") == "running" or not turn.get("checkpointAfter"):
            raise ChatError("chat-busy", f"turn {turn_id} is still running: its changes are read when it ends")
        return turn["checkpoint"], turn["checkpointAfter"]

    def changes(self, turn_id) -> dict:
        before, after = self._turn(turn_id)
        return {"turnId": turn_id, **self._changes(before, after)}

    def revert(self, turn_id, paths=None, hunks=None, force: bool = False) -> dict:
        before, after = self._turn(turn_id)
        reverted, new_after = self._revert(before, after, paths, hunks, force)
        self._keep(new_after, turn_id, "after")
        self._chat.durable.upsert({"id": turn_id, "kind": "turn", "checkpointAfter": new_after})
        listed = self._publish_changes(turn_id, before, new_after, reverted)
        self._chat.log("checkpoint.revert", turn=turn_id, files=len(reverted), forced=bool(force) or None)
        return {"turnId": turn_id, "reverted": reverted, **listed}

    def _revert(self, before: str, after: str, paths, hunks, force: bool) -> tuple[list, str]:
        try:
            done = self.store.revert(before, after, paths=paths, hunks=hunks, force=force)
        except CheckpointConflict as exc:
            raise ChatError("conflict", "these files changed since the turn: look at them, then revert again with "
                            "force to overwrite them: " + ", ".join(exc.paths), details={"paths": exc.paths}) \
                from None
        except CheckpointError as exc:
            raise ChatError("bad-request", str(exc)) from None
        return done["reverted"], done["after"]

    def revert_since(self, turn_id, force: bool = False) -> list:
        """The files back to before ``turn_id``: every turn from it on, and what changed between
        them, taken back at once (a rewind's files). The latest checkpoint is the one to match."""
        before, _after = self._turn(turn_id)
        latest = self._latest_after()
        reverted, _new = self._revert(before, latest, None, None, force)
        self._chat.log("checkpoint.rewind", turn=turn_id, files=len(reverted), forced=bool(force) or None)
        return reverted

    def _latest_after(self) -> str:
        for turn in reversed(self._chat.durable.thread.turns()):
            if turn.get("checkpointAfter"):
                return turn["checkpointAfter"]
        raise ChatError("chat-unsupported", "no turn of this chat has a checkpoint")

    def forget(self) -> None:
        """A removed chat's checkpoints go with it."""
        if self.store is not None:
            try:
                self.store.forget(self._prefix, index=self._index)
            except CheckpointError as exc:
                self._chat.log("error", kind="checkpoint", error=str(exc))
