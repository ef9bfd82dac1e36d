// The panel's state in localStorage, under one key per project directory and page origin (so
// pages that differ only in path, query or fragment share it). What is kept: whether the chat
// is open, its side and target; per target the harness, model, session (its chat, and whether a
// daemon restart closed it: continuity.js), the unsent text and pasted texts (also
// a sent one, until its send is acknowledged) and the scroll position; the page's reload state:
// whether reloads are held, whether the hot reload notice was dismissed, the session and command
// of a Disable Reloads request the agent has not finished, and a turn that was running when the
// page went away. Never transcripts, screenshots or approval answers. Anything invalid or from another version resets to defaults.

export const VERSION = 1;
export const TARGETS = ["project", "devhost"];
const SIDES = ["right", "left"];
export const MAX_DRAFT = 1_000_000; // characters; a draft past this is not worth a failing quota
const MAX_PASTES = 20;

export function storageKey(projectDirectory, origin) {
  return `devhost:settings:${projectDirectory}:${origin}`;
}

/** Whether the panel of this origin is in use (open, or holding a conversation): "1" or absent.
 *  panel.js reads it at a page's load, before anything else is fetched, to load the whole panel
 *  at once rather than on the first open (it writes the key out: keep the two the same). */
export function liveKey(origin) {
  return `devhost:live:${origin}`;
}

/** In use: open, or a conversation attached (its status dot and the tab's news need the panel). */
export function inUse(state) {
  return state.open || TARGETS.some((t) => Boolean(state.conversations[t].sessionId));
}

export function defaultConversation() {
  // chatId: the conversation's name that outlives its session id (a resume gives a new one);
  // openIn: the daemon's run it was last seen open in; closedBy: "restart" when a restart closed it.
  return { harness: "claude-code", model: "", sessionId: null, chatId: null, openIn: null, closedBy: null,
           draft: "", pastes: [], unsent: [], scroll: null };
}

export function defaults() {
  return { version: VERSION, open: false, side: "right", target: "project",
           conversations: Object.fromEntries(TARGETS.map((t) => [t, defaultConversation()])),
           reloads: { held: false, noticeDismissed: false, disableRequest: null, disableOutcome: null,
                      runningAtUnload: null } };
}

function cleanReloads(raw) {
  const clean = defaults().reloads;
  if (!raw || typeof raw !== "object") return clean;
  if (typeof raw.held === "boolean") clean.held = raw.held;
  if (typeof raw.noticeDismissed === "boolean") clean.noticeDismissed = raw.noticeDismissed;
  const request = raw.disableRequest;
  if (request && isString(request.sessionId, 128) && isString(request.commandId, 200) && TARGETS.includes(request.target)) {
    clean.disableRequest = { sessionId: request.sessionId, commandId: request.commandId, target: request.target };
  }
  if (isString(raw.disableOutcome, 500) && raw.disableOutcome) clean.disableOutcome = raw.disableOutcome;
  const running = raw.runningAtUnload;
  if (running && isString(running.sessionId, 128) && Number.isFinite(running.at)) {
    clean.runningAtUnload = { sessionId: running.sessionId, at: running.at };
  }
  return clean;
}

const isString = (v, max = 200) => typeof v === "string" && v.length <= max;

function cleanConversation(raw) {
  const clean = defaultConversation();
  if (!raw || typeof raw !== "object") return clean;
  if (isString(raw.harness, 64) && raw.harness) clean.harness = raw.harness;
  if (isString(raw.model, 128)) clean.model = raw.model;
  if (isString(raw.sessionId, 128) && raw.sessionId) clean.sessionId = raw.sessionId;
  if (isString(raw.chatId, 200) && raw.chatId) clean.chatId = raw.chatId;
  if (isString(raw.openIn, 64) && raw.openIn) clean.openIn = raw.openIn;
  if (raw.closedBy === "restart") clean.closedBy = raw.closedBy;
  if (isString(raw.draft, MAX_DRAFT)) clean.draft = raw.draft;
  // Long pasted texts not sent yet, shown as chips (paste.js): a hot reload must not lose them.
  if (Array.isArray(raw.pastes)) clean.pastes = raw.pastes.filter((p) => isString(p, MAX_DRAFT)).slice(0, MAX_PASTES);
  if (Array.isArray(raw.unsent)) {
    clean.unsent = raw.unsent.filter((u) => u && isString(u.commandId, 200) && isString(u.text, MAX_DRAFT))
      .map((u) => ({ commandId: u.commandId, text: u.text }));
  }
  if (raw.scroll && Number.isFinite(raw.scroll.fromBottom) && raw.scroll.fromBottom >= 0) {
    clean.scroll = { fromBottom: raw.scroll.fromBottom };
  }
  return clean;
}

/** The saved state, each field checked; a wrong version or unreadable JSON gives defaults. */
export function parse(text) {
  let raw;
  try {
    raw = JSON.parse(text);
  } catch {
    return defaults();
  }
  if (!raw || typeof raw !== "object" || raw.version !== VERSION) return defaults();
  const state = defaults();
  if (typeof raw.open === "boolean") state.open = raw.open;
  if (SIDES.includes(raw.side)) state.side = raw.side;
  if (TARGETS.includes(raw.target)) state.target = raw.target;
  for (const target of TARGETS) state.conversations[target] = cleanConversation(raw.conversations?.[target]);
  state.reloads = cleanReloads(raw.reloads);
  return state;
}

export class Store {
  /** ``live``: the key that says whether the panel is in use (liveKey), kept with every update. */
  constructor(key, storage = window.localStorage, live = null) {
    this.key = key;
    this.live = live;
    this.storage = storage;
    let text = null;
    try {
      text = storage.getItem(key);
    } catch {
      // storage disabled (a sandboxed page): the panel still works, it just forgets
    }
    this.state = text === null ? defaults() : parse(text);
  }

  get conversation() {
    return this.state.conversations[this.state.target];
  }

  /** Changes the state with `change(state)` and writes it at once (a reload may follow any time). */
  update(change) {
    change(this.state);
    try {
      this.storage.setItem(this.key, JSON.stringify(this.state));
      if (this.live && inUse(this.state)) this.storage.setItem(this.live, "1");
      else if (this.live) this.storage.removeItem(this.live);
    } catch {
      // quota or disabled storage: keep going in memory
    }
  }
}
