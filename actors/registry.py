"""The Registry actor: every conversation of this daemon, by chat id and by session id.

One conversation is one Chat actor, seen by both surfaces: the Chat API names it by its
session id (while a session is open; a resumed session gets a new one), the chat core by its
chat id. Every conversation is kept on disk (storage/chat_store.py), so it outlives the daemon:
at start the registry reads what every stored chat says of itself, lists them all (to the Chat
API as ``closed`` sessions), and loads a chat as an actor only when something needs it: a
request, a resume, or a turn a stop left running (settled without waiting for a client).

Chats tell the registry their record and info whenever they change, so listing never asks a
chat. Refusals are ``ChatError`` with a code; the web edge renders them.
"""
from __future__ import annotations

import os
import resource
import secrets

import gevent
import gevent.event
import pykka

from actors.chatlog import daemon_log
from actors.errors import ChatError
from actors.guard import guarded, on_threadpool, spawn_logged
from actors.harness import BUILT_IN, HARNESS_PROVIDERS, HARNESSES, PROVIDERS
from actors.harness.mode_names import CORE_DEFAULT, RUNTIME_MODES, SESSION_DEFAULT, stored_mode
from actors.harness_catalog import command_for
from actors.tell import tell
from storage.agent_abilities import AgentAbilities
from storage.accounts import LastPicked, account_env, home_of, unknown_account
from storage.chat_store import ChatStore, ChatUnreadable

ASK = 10.0


class CoreClients:
    """Every connected core client, for chat.status (which goes to all of them)."""

    def __init__(self):
        self._sinks: set = set()

    def add(self, sink) -> None:
        self._sinks.add(sink)

    def remove(self, sink) -> None:
        self._sinks.discard(sink)

    def broadcast(self, message) -> None:
        for sink in list(self._sinks):
            sink.push(message)


class Registry(pykka.ThreadingActor):
    def __init__(self, data_dir: str, clients: CoreClients, commands=None, resuming_on=False,
                 environment: dict | None = None, chat_options: dict | None = None, limit_resume=False,
                 visual_store=None, accounts=None, idle_cli_minutes=None):
        super().__init__()
        self._store = ChatStore(data_dir)
        self._accounts = accounts or (lambda: {})  # the manifest's accounts, as it is now (storage/accounts.py)
        self._last_picked = LastPicked(data_dir)  # the account a new chat of each provider gets
        self._agent_abilities = AgentAbilities(data_dir)  # what each ACP agent was measured to do
        self._clients = clients
        self._commands = commands or (lambda: {})  # harness id -> command, from the manifest
        self._resuming_on = resuming_on  # [core] settings: a bool, or a callable each chat asks at every use
        self._environment = environment if environment is not None else dict(os.environ)
        # For tests: e.g. a shorter acknowledgement timeout; and [core] resume_at_reset.
        self._chat_options = {**(chat_options or {}), "limit_resume": limit_resume, "visual_store": visual_store}
        # [devtools.chat] idle_cli_minutes: a number, or a callable each chat asks when it goes idle.
        self._chat_options.setdefault("idle_cli_minutes", idle_cli_minutes)
        # Every chat's turn checkpoints (actors/chat/checkpoints.py): one store per checkout, here.
        self._chat_options.setdefault("checkpoints_root", os.path.join(data_dir, "checkpoints"))
        self._order: list[str] = []  # chat ids, oldest first
        self._infos: dict[str, dict] = {}  # every chat, loaded or only stored
        self._refs: dict[str, pykka.ActorRef] = {}
        # One proxy per chat, made once: building one introspects the whole actor (~0.4 ms).
        self._proxies: dict[str, pykka.ActorProxy] = {}
        self._records: dict[str, dict] = {}  # Chat-API records of loaded chats
        self._sessions: dict[str, str] = {}  # session id -> chat id
        self._ending: list = []  # cli_gone events of killed chats whose CLI may still be ending

    def ping(self) -> bool:
        return True

    def on_start(self) -> None:
        for chat_id in self._store.chat_ids():
            try:
                record, log = self._store.load(chat_id)
                info = (record or {}).get("info") or log[0]["event"]["info"]
                for line in log:
                    if line["event"].get("type") in ("info", "reset"):
                        info = line["event"]["info"]
            except ChatUnreadable:
                continue  # answered chat-unreadable when a client asks for it; left as it is
            except Exception as exc:  # noqa: BLE001 - one bad chat must not keep the others from loading
                daemon_log(f"bug: chat {chat_id} could not be read at start: {exc!r}")
                continue
            self._note(chat_id, {**info, "runtimeMode": stored_mode(info)})
            if info.get("activeTurnId") or info.get("running") or info.get("resumeAt"):
                # (A take-up owed after a usage limit keeps its time: the chat's timer runs loaded.)
                # Settle what a stop left running, without waiting for a client.
                try:
                    self._load(chat_id, (record, log))  # read once: not again from disk
                except Exception as exc:  # noqa: BLE001 - as above
                    daemon_log(f"bug: chat {chat_id} could not be settled at start: {exc!r}")

    # ---- the Chat API: sessions ----------------------------------------------------------------

    def create_session(self, harness_id: str, root: str, command: tuple[str, ...], model: str | None,
                       resume_id: str | None, runtime_mode: str = SESSION_DEFAULT, choice: dict | None = None):
        """A new session's record; for a resume, an AsyncResult of it. The CLI's files (a
        transcript may be 64 MiB) are read in a greenlet of their own on the hub's threadpool,
        so neither the hub nor this registry waits for them: other pages are served meanwhile.
        ``runtime_mode``: what a conversation new to devhostd starts in (the mode last picked for
        the folder); a closed one resumed keeps its own. ``choice``: ``{"account": name}`` when the
        page picked one (None: the default account), else the one last picked for the provider; a
        saved conversation is looked for under that account's config home."""
        harness = HARNESSES.get(harness_id)
        if harness is None:
            raise ChatError("bad-request", f"unknown harness {harness_id!r}; use one of: {', '.join(HARNESSES)}")
        if runtime_mode not in RUNTIME_MODES:
            raise ChatError("bad-request", f"runtimeMode must be one of: {', '.join(RUNTIME_MODES)}")
        provider = HARNESS_PROVIDERS[harness_id]
        account = self._account_for(provider, choice or {})
        if choice and "account" in choice and not resume_id:
            # A resume names the account its conversation was saved under: that is no pick of
            # the account new conversations get (and the resume may yet fail).
            self.account_picked(provider, account)
        if not resume_id:
            return self._new_session(harness, root, command, model, None, None, runtime_mode=runtime_mode,
                                     account=account)
        here = self._holders(harness, root, resume_id)  # what needs no file is refused now
        answer = gevent.event.AsyncResult()
        spawn_logged(_read_saved, self.actor_ref, harness, (root, command, model, resume_id, runtime_mode, account),
                     not here, {**self._environment, **account_env(self._accounts(), provider, account)}, answer)
        return answer

    @guarded
    def resume_session(self, harness, request: tuple, saved: tuple, answer: gevent.event.AsyncResult) -> None:
        """The CLI's files are read (``saved``: see ``_saved``): the session is reopened or made,
        and ``answer`` says which or why not."""
        try:
            answer.set(self._resume(harness, request, *saved))
        except (ChatError, pykka.Timeout, pykka.ActorDeadError) as exc:
            answer.set_exception(exc)
        except Exception as exc:  # the page is answered; the bug is logged
            answer.set_exception(exc)
            raise

    def _resume(self, harness, request: tuple, cwd: str | None, workdir: str | None, imported: list | None) -> dict:
        root, command, model, resume_id, runtime_mode, account = request
        here = self._holders(harness, root, resume_id)  # again: a chat may hold it since
        if cwd is None:
            raise ChatError("not-found", f"{harness.LABEL} has no saved conversation {resume_id}")
        if here:
            return self._reopen(here[0])
        # "": an ACP agent's conversation, kept in the agent's own store where devhostd reads
        # nothing, so its folder is not known: it is resumed in the page's project, and the agent
        # itself says (session/load) whether it has it; one it has not starts anew, and says so.
        if cwd != "" and not _inside(cwd, root):
            raise ChatError("bad-request", "that conversation belongs to another project; resume it from a page "
                                           "of that project")
        if imported is None:
            raise ChatError("conflict",
                            "the session that held that conversation was removed meanwhile; resume it again")
        # A conversation devhostd never held: its transcript becomes the chat's first items.
        return self._new_session(harness, root, command, model, resume_id, imported, workdir, runtime_mode, account)

    def _new_session(self, harness, root: str, command: tuple[str, ...], model: str | None, resume_id: str | None,
                     imported: list | None, workdir: str | None = None, runtime_mode: str = SESSION_DEFAULT,
                     account: str | None = None) -> dict:
        chat_id = self._new_id()
        # A panel conversation asks before edits and commands until the person picks a mode.
        ref = self._start(chat_id=chat_id, harness=harness, cwd=root, command=command, model=model,
                         runtime_mode=runtime_mode, account=account, store=self._store,
                         clients=self._clients, registry=self.actor_ref, resume=resume_id, open_session=True,
                         start_cli=True, resuming_on=self._resuming_on, imported=imported, workdir=workdir,
                         **self._chat_options)
        self._register(chat_id, ref)
        return self._records[chat_id]

    def _holders(self, harness, root: str, resume_id: str) -> list[str]:
        """The chats of this folder that hold the CLI's conversation ``resume_id`` (newest first);
        refusals say why it cannot be resumed."""
        holders = [chat_id for chat_id in reversed(self._order)
                   if self._infos[chat_id].get("agentSessionId") == resume_id
                   and PROVIDERS.get(self._infos[chat_id].get("provider")) == harness.HARNESS_ID]
        here = [chat_id for chat_id in holders if self._infos[chat_id].get("cwd") == root]
        if holders and not here:
            raise ChatError("bad-request", "that conversation belongs to another project; resume it from a "
                                           "page of that project")
        for chat_id in here:
            record = self._record(chat_id)
            if record["status"] != "closed":
                raise ChatError("conflict", f"that conversation is already open in session {record['id']}; "
                                            "attach to it instead")
        return here

    def _reopen(self, chat_id: str) -> dict:
        proxy = self._proxy(chat_id)
        session_id = self._new_id()
        record = proxy.reopen(session_id).get(timeout=ASK)  # ChatError("conflict") if it opened meanwhile
        for old, owner in list(self._sessions.items()):
            if owner == chat_id:
                del self._sessions[old]  # the resumed session replaces the closed one in the list
        self._sessions[session_id] = chat_id
        self._records[chat_id] = record
        return record

    def sessions(self, root: str) -> list[dict]:
        """The directory's sessions, newest first."""
        records = (self._record(chat_id) for chat_id in reversed(self._order))
        return [record for record in records if record["projectRootPath"] == root]

    def session(self, session_id: str):
        """(proxy, record) of a session, or (None, None)."""
        chat_id = self._sessions.get(session_id)
        if chat_id is None:
            return None, None
        return self._proxy(chat_id), self._record(chat_id)

    @guarded
    def on_record(self, chat_id: str, record: dict) -> None:
        if chat_id in self._refs:
            self._records[chat_id] = record

    def _record(self, chat_id: str) -> dict:
        record = self._records.get(chat_id)
        if record is not None:
            return record
        # Only on disk: a session of an earlier run of the daemon, closed (seed: still listed,
        # and resumable).
        info = self._infos[chat_id]
        record = {"id": chat_id, "chatId": chat_id,
                  "harness": PROVIDERS.get(info.get("provider"), info.get("provider")),
                  "projectRootPath": info.get("cwd"), "status": "closed",
                  "model": (info.get("selection") or {}).get("model"), "title": info.get("suggestedTitle"),
                  "createdAt": info.get("createdAt"), "runtimeMode": info.get("runtimeMode", SESSION_DEFAULT),
                  "effectiveRuntimeMode": info.get("effectiveRuntimeMode", SESSION_DEFAULT)}
        if info.get("agentSessionId"):
            record["nativeSessionId"] = info["agentSessionId"]
        return record

    # ---- the chat core: chats ------------------------------------------------------------------

    def create_chat(self, payload: dict) -> dict:
        chat_id = payload["chatId"]
        if chat_id in self._refs:
            return self._infos[chat_id]  # create is idempotent per id
        try:
            stored_already = chat_id in self._infos or self._store.exists(chat_id)
        except ValueError as exc:  # an id no file can be named after: nothing of it could be kept
            raise ChatError("bad-request", str(exc)) from None
        if stored_already:
            self._load(chat_id)
            return self._infos[chat_id]
        provider = payload.get("provider") or "claude"
        if provider not in PROVIDERS:
            raise ChatError("bad-request", f"provider must be one of: {', '.join(PROVIDERS)}")
        cwd = payload.get("cwd") or self._environment.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise ChatError("bad-request", f"cwd must be an existing absolute folder: {cwd}")
        runtime_mode = payload.get("runtimeMode") or CORE_DEFAULT
        if runtime_mode not in RUNTIME_MODES:
            raise ChatError("bad-request", f"runtimeMode must be one of: {', '.join(RUNTIME_MODES)}")
        account = self._account_for(provider, payload)
        harness = HARNESSES[PROVIDERS[provider]]
        ref = self._start(chat_id=chat_id, harness=harness, cwd=os.path.realpath(cwd), command=self._command(harness),
                         model=(payload.get("selection") or {}).get("model"), runtime_mode=runtime_mode,
                         account=account,
                         store=self._store, clients=self._clients, registry=self.actor_ref,
                         resume=payload.get("resume"), open_session=True, start_cli=False,
                         resuming_on=self._resuming_on, **self._chat_options)
        self._register(chat_id, ref)
        if "account" in payload:
            self.account_picked(provider, account)
        return self._infos[chat_id]

    def _account_for(self, provider: str, payload: dict) -> str | None:
        """A new chat's account: the payload's (a manifest name, or None for the default), else
        a connected client's preferred one (``preferredAccount``), else the one last picked for
        the provider; either of those only while the manifest names it (a client's preferences
        may name an account of another machine's)."""
        accounts = self._accounts()
        if "account" not in payload:
            for name in (payload.get("preferredAccount"), self._last_picked.get(provider)):
                if name is not None and home_of(accounts, provider, name, self._environment):
                    return name
            return None
        name = payload["account"]
        if home_of(accounts, provider, name, self._environment) is None:
            raise ChatError("bad-request", unknown_account(accounts, provider, name))
        return name

    @guarded
    def account_picked(self, provider: str, account: str | None) -> None:
        """A person picked an account (chat.create, chat.configure): kept on disk for the next new chat."""
        if self._last_picked.pick(provider, account):
            try:
                on_threadpool(self._last_picked.save)
            except OSError as exc:  # the pick holds until a restart; the person's chats go on
                daemon_log(f"the last picked account could not be saved in {self._last_picked.path}: {exc}")

    @guarded
    def agent_measured(self, harness_id: str, abilities: dict) -> None:
        """An ACP agent's session reported what it can do (told by its chat): kept on disk, for
        the harness listing's models and `devhostd doctor`."""
        if self._agent_abilities.measured(harness_id, abilities):
            try:
                on_threadpool(self._agent_abilities.save)
            except OSError as exc:  # kept in memory until a restart; the chats go on
                daemon_log(f"an agent's abilities could not be saved in {self._agent_abilities.path}: {exc}")

    def agents_measured(self) -> dict:
        """harness id -> what its sessions measured (storage/agent_abilities.py)."""
        return self._agent_abilities.all()

    def providers(self) -> list[dict]:
        """provider.list: each CLI, whether it is found, its accounts and whether each is signed in
        (files looked at on the threadpool; no CLI is run)."""
        from actors.provider_list import provider_list  # at first use, as Chat (see _start)
        return on_threadpool(provider_list, self._accounts(), {p: self._last_picked.get(p) for p in PROVIDERS},
                             {p: self._command(HARNESSES[h]) for p, h in PROVIDERS.items()}, self._environment,
                             {p: HARNESSES[h].LABEL for p, h in PROVIDERS.items() if h not in BUILT_IN})

    def list_chats(self) -> list[dict]:
        return [self._infos[chat_id] for chat_id in self._order]

    def chat(self, chat_id: str):
        """The proxy of a chat, loaded from disk first if it is only stored."""
        if chat_id not in self._refs and chat_id not in self._infos:
            raise ChatError("chat-not-found", f"No chat {chat_id}")
        return self._proxy(chat_id)

    @guarded
    def on_info(self, chat_id: str, info: dict) -> None:
        if chat_id in self._refs:
            self._infos[chat_id] = info

    @guarded
    def on_visuals(self, chat_id: str, listed: list) -> None:
        """A chat's visuals changed (VisualStore): a loaded chat tells its attached clients."""
        ref = self._refs.get(chat_id)
        if ref is not None:
            tell(ref, "visuals_changed", listed)

    def known(self, chat_id: str) -> dict | None:
        """A chat in memory or on disk: ``{activeTurnId}`` (None when there is no such chat)."""
        if chat_id not in self._infos:
            try:
                if not self._store.exists(chat_id):
                    return None
            except ValueError:
                return None
            return {"activeTurnId": None}
        return {"activeTurnId": self._infos[chat_id].get("activeTurnId")}

    def ending(self) -> list:
        """The exits of the CLIs of killed chats that may still be ending (the daemon stopping
        waits for them)."""
        self._ending = [gone for gone in self._ending if not gone.is_set()]
        return list(self._ending)

    def forget(self, chat_id: str, cli_gone=None) -> None:
        if cli_gone is not None and not cli_gone.is_set():
            self._ending.append(cli_gone)
        ref = self._refs.pop(chat_id, None)
        self._proxies.pop(chat_id, None)
        self._infos.pop(chat_id, None)
        self._records.pop(chat_id, None)
        for session_id, owner in list(self._sessions.items()):
            if owner == chat_id:
                del self._sessions[session_id]
        if chat_id in self._order:
            self._order.remove(chat_id)
        if ref is not None:
            ref.stop(block=False)

    def chats(self) -> list:
        """Every loaded chat's proxy, oldest first (the daemon closes them all at shutdown)."""
        return [self._proxies[chat_id] for chat_id in self._order if chat_id in self._proxies]

    def on_stop(self) -> None:
        for ref in self._refs.values():
            ref.stop(block=False)

    # ---- loading -------------------------------------------------------------------------------

    def _proxy(self, chat_id: str):
        if chat_id not in self._proxies:
            self._load(chat_id)
        return self._proxies[chat_id]

    def _load(self, chat_id: str, stored=None) -> None:
        try:
            # Up to tens of MiB of record and log, read and parsed on the hub's threadpool.
            record, log = stored or on_threadpool(self._store.load, chat_id)
        except ChatUnreadable as exc:
            raise ChatError("chat-unreadable", str(exc)) from None
        info = (record or {}).get("info") or {}
        if not info and log:
            info = log[0]["event"]["info"]  # a chat rebuilt from a log that starts at its beginning
        harness = HARNESSES.get(PROVIDERS.get(info.get("provider"), info.get("provider")))
        if harness is None:
            raise ChatError("chat-unreadable", f"chat {chat_id} names an unknown provider {info.get('provider')!r}")
        ref = self._start(chat_id=chat_id, harness=harness, cwd=info["cwd"], command=self._command(harness),
                         model=(info.get("selection") or {}).get("model"),
                         runtime_mode=stored_mode(info), store=self._store,
                         clients=self._clients, registry=self.actor_ref, stored=(record, log),
                         open_session=False, start_cli=False, resuming_on=self._resuming_on, **self._chat_options)
        self._register(chat_id, ref)

    def _start(self, **options):
        """Starts a Chat actor, unless the daemon is out of file descriptors (a 503 that says so)."""
        if _out_of_file_descriptors():
            raise ChatError("unavailable", "devhostd has no file descriptors left: close some sessions, or raise "
                                           "its limit (ulimit -n) and restart it")
        from actors.chat import Chat  # at the first chat: most of the daemon's code, none of it needed to start
        return Chat.start(accounts=self._accounts, **options)

    def _register(self, chat_id: str, ref) -> None:
        """Indexes a just-started chat, once it answered: a chat that failed to start is
        stopped and indexed nowhere."""
        proxy = ref.proxy()
        try:
            info = proxy.info().get(timeout=ASK)
            record = proxy.record().get(timeout=ASK)
        except Exception as exc:  # noqa: BLE001 - its on_start failed, or it is stuck: it is not kept
            ref.stop(block=False)
            if _out_of_file_descriptors():
                raise ChatError("unavailable", "devhostd has no file descriptors left: close some sessions, or raise "
                                               "its limit (ulimit -n) and restart it") from None
            daemon_log(f"bug: chat {chat_id} did not start: {exc!r}")
            raise ChatError("internal", f"the chat {chat_id} could not be started; the daemon's log says why") from None
        self._refs[chat_id] = ref
        self._proxies[chat_id] = proxy
        self._records[chat_id] = record
        self._note(chat_id, info)

    def _note(self, chat_id: str, info: dict) -> None:
        self._infos[chat_id] = info
        if chat_id not in self._order:
            self._order.append(chat_id)
            self._sessions.setdefault(chat_id, chat_id)

    def _command(self, harness) -> tuple[str, ...]:
        return command_for(harness.HARNESS_ID, self._commands())

    def _new_id(self) -> str:
        while True:
            chat_id = secrets.token_hex(8)
            if chat_id not in self._infos and not self._store.exists(chat_id):
                return chat_id


FD_HEADROOM = 24  # a chat and its CLI need this many file descriptors to start, at most


def _read_saved(registry, harness, request: tuple, with_items: bool, environment: dict,
                answer: gevent.event.AsyncResult) -> None:
    """In a greenlet of its own: the saved conversation's folder (and its transcript, when no
    chat holds it yet), read on the hub's threadpool, then told to the registry."""
    import actors.harness.saved  # noqa: F401 - at first use, as Chat (see Registry._start); here, not on the threadpool
    try:
        saved = on_threadpool(_saved, harness, request[0], request[3], with_items, environment)
    except Exception as exc:  # an unreadable file is the page's answer, and a bug
        answer.set_exception(exc)
        raise
    tell(registry, "resume_session", harness, request, saved, answer)


def _saved(harness, root: str, resume_id: str, with_items: bool,
           environment: dict) -> tuple[str | None, str | None, list | None]:
    """(where the conversation ran, realpath'd, or None when it is not saved; the folder in
    ``root`` its CLI resumes in; its transcript's items, when asked)."""
    from actors.harness.saved import resume_folder, transcript_items
    cwd = harness.find_conversation_cwd(resume_id, environment)
    if cwd is None:
        return None, None, None
    return os.path.realpath(cwd) if cwd else "", resume_folder(cwd, root), \
        transcript_items(harness.HARNESS_ID, resume_id, environment) if with_items else None


def _out_of_file_descriptors() -> bool:
    """Whether the process is (nearly) at its file descriptor limit: a chat is then refused
    with a 503 before it starts, rather than failing half-way."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        used = len(os.listdir("/proc/self/fd"))
    except (OSError, ValueError):
        return False
    return soft != resource.RLIM_INFINITY and soft - used < FD_HEADROOM


def _inside(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip("/") + "/"))
