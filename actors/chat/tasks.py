"""Background work of a chat's CLI: delegated agents and background shells (actors/chat/actor.py).

A controller of the Chat actor. The subagent and task items are the durable face's, and
stopping one is the link's to write; its own state is who watches a subagent's transcript: the
core's watches (web/core/background.py) are told when the CLI says the agent did something
(a frame of its own, its item changed), so they read the file then instead of polling it.
"""
from __future__ import annotations

from actors.errors import ChatError


class Tasks:
    def __init__(self, chat):
        self._chat = chat
        self._watches: dict[str, set] = {}  # a subagent item's id -> the callables told of it
        self._refs: dict[str, str] = {}  # a watched agent's toolUseId (its frames' parent) -> its item id

    # ---- watches of a subagent's transcript ------------------------------------------------

    def watch(self, subagent_id: str, told) -> dict:
        """Tells ``told()`` (it must not block: it runs in the actor) whenever the CLI says the
        agent did something, until ``unwatch``; the agent's source, as ``subagent_source``."""
        source = self.subagent_source(subagent_id)
        self._watches.setdefault(source["subagentId"], set()).add(told)
        if source.get("toolUseId"):
            self._refs[source["toolUseId"]] = source["subagentId"]
        return source

    def unwatch(self, subagent_id: str, told) -> None:
        watchers = self._watches.get(subagent_id)
        if watchers is None:
            return
        watchers.discard(told)
        if not watchers:
            del self._watches[subagent_id]
            for ref in [ref for ref, item_id in self._refs.items() if item_id == subagent_id]:
                del self._refs[ref]

    def heard(self, ops: list[tuple]) -> None:
        """What the projection made of a CLI frame: each watched agent it concerns (an item under
        the agent, or the agent's own item) has its watches told, once for the frame."""
        if not self._watches or not ops:
            return
        held = self._chat.durable.thread.items  # as merged, read only (item() would join held deltas)
        touched = set()
        for op in ops:
            if op[0] not in ("upsert", "append"):
                continue
            item = held.get(op[1]["id"] if op[0] == "upsert" else op[1]) or {}
            if item.get("kind") == "subagent" and item.get("id") in self._watches:
                touched.add(item["id"])
            if item.get("parentToolUseId") in self._refs:
                touched.add(self._refs[item["parentToolUseId"]])
        for subagent_id in touched:
            for told in list(self._watches.get(subagent_id, ())):
                told()

    # ---- stopping background work --------------------------------------------------------

    def stop_task(self, task_id: str) -> dict:
        """Ends a background task (a background shell) of the chat's CLI."""
        item = next((i for i in self._running("task") if i.get("taskId") == task_id), None)
        if item is None:
            raise ChatError("task-not-found", f"This chat runs no such task: {task_id}")
        self._stop(item)
        return {}

    def stop_subagent(self, subagent_id: str) -> dict:
        """Ends a delegated agent where the CLI can; otherwise it is marked stopped (the seed's rule)."""
        item = next((i for i in self._running("subagent")
                     if subagent_id in (i["id"], i.get("taskId"), i.get("toolUseId"))), None)
        if item is None:
            raise ChatError("subagent-not-found", f"No subagent {subagent_id} is running in this chat")
        self._stop(item)
        return {}

    def stop_subagents(self) -> None:
        for item in self._running("subagent"):
            self._stop(item)

    def subagent_source(self, subagent_id: str) -> dict:
        """Where a delegated agent's own conversation is: the CLI's session and the agent's id
        (its task id), for reading its transcript at the edge."""
        chat = self._chat
        item = next((i for i in chat.durable.thread.snapshot()["items"] if i["kind"] == "subagent"
                     and subagent_id in (i["id"], i.get("taskId"), i.get("toolUseId"))), None)
        if item is None:
            raise ChatError("subagent-not-found", f"No subagent {subagent_id} in chat {chat.chat_id}")
        if not item.get("taskId") or not chat.link.native_id:
            raise ChatError("chat-unsupported", f"{chat.harness.LABEL} keeps no transcript of this agent to read")
        # Claude Code's agent: a transcript beside its session's, by task id; Codex's: a rollout of
        # its own, by its thread id.
        return {"harness": chat.harness.HARNESS_ID, "native": chat.link.native_id, "agent": item["taskId"],
                "status": item.get("status"), "subagentId": item["id"], "toolUseId": item.get("toolUseId"),
                "homeEnv": chat.link.home_env()}  # the transcript is under the account's home

    def _running(self, kind: str) -> list[dict]:
        return [item for item in self._chat.durable.thread.snapshot()["items"]
                if item["kind"] == kind and item.get("status") == "running"]

    def _stop(self, item: dict) -> None:
        chat = self._chat
        task_id = item.get("taskId")
        # Both drivers end one task (stop_task_frames); with no process, nothing of it runs.
        if not (task_id and chat.link.stop_task(task_id, item["kind"])):
            if item["kind"] == "task":
                raise ChatError("chat-unsupported", f"{chat.harness.LABEL} cannot stop one background task from here")
            # Nothing of it runs in the CLI now: it is marked stopped, and its later output is its own.
            chat.durable.upsert({**item, "status": "stopped"})
            return
        chat.log("task.stop", task=task_id, kind=item["kind"])
        # (The CLI's answer is read in a later message of the actor: the projector knows by then.)
        chat.durable.projector.stop_requested(task_id)
