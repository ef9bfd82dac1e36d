// The Chat API's HTTP routes, from the page's own origin (the browser adds the Origin header
// that devhostd requires on POST and PUT).

export class ApiError extends Error {
  /** ``body``: devhostd's answer as it came (a refusal's code and details: a conflict's paths). */
  constructor(message, status, body = null) {
    super(message);
    this.status = status;
    this.body = body;
  }

  get code() {
    return this.body?.code || null;
  }
}

/** How many of a conversation's newest items the thread socket's snapshot holds (devhostd's
    most): a long conversation opens with its tail, and older pages come as the person scrolls up. */
export const HISTORY_LIMIT = 100;

/** An address of devhostd's, on the page's own origin whatever the page's <base href> says. */
export function devhostURL(path) {
  return new URL(path, location.origin).href;
}

/** The page's address as the API wants it: no fragment (it never reaches a server anyway). */
export function pageURL() {
  return `${location.origin}${location.pathname}${location.search}`;
}

async function call(method, path, body) {
  const options = { method, credentials: "same-origin", cache: "no-store", headers: {} };
  if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";
  }
  let response;
  try {
    // Absolute: a page's <base href> must not send the panel's calls elsewhere.
    response = await fetch(devhostURL(path), options);
  } catch (error) {
    throw new ApiError(`devhostd is not answering (${error.message})`, 0);
  }
  let value = null;
  try {
    value = await response.json();
  } catch {
    // not JSON: only a daemon bug or a proxy in between would do that
  }
  if (!response.ok) throw new ApiError(value?.error || `devhostd answered ${response.status}`, response.status, value);
  return value;
}

const turnPath = (id, turnId, what, target) =>
  `/__devhost__/chat/sessions/${encodeURIComponent(id)}/turns/${encodeURIComponent(turnId)}/${what}?${query(target)}`;

const query = (target) => new URLSearchParams({ pageURL: pageURL(), chatTarget: target }).toString();

export const api = {
  config: () => call("GET", "/__devhost__/config.json"),
  harnesses: (target) => call("GET", `/__devhost__/chat/harnesses?${query(target)}`).then((v) => v.harnesses),
  sessions: (target) => call("GET", `/__devhost__/chat/sessions?${query(target)}`).then((v) => v.sessions),
  /** The CLIs' own saved conversations of this folder that no session holds (begun in a terminal). */
  saved: (target) => call("GET", `/__devhost__/chat/saved?${query(target)}`).then((v) => v.conversations),
  /** `account`: a manifest name, null for the CLI's default; left out, devhostd uses the last picked. */
  createSession: ({ harness, target, model, resumeId, account }) => call("POST", "/__devhost__/chat/sessions", {
    harness, target, pageURL: pageURL(), ...(model ? { model } : {}), ...(resumeId ? { resumeId } : {}),
    ...(account !== undefined ? { account } : {}),
  }),
  closeSession: (id, target) => call("POST", `/__devhost__/chat/sessions/${encodeURIComponent(id)}/close?${query(target)}`),
  renameSession: (id, target, title) => call("PUT", `/__devhost__/chat/sessions/${encodeURIComponent(id)}/title?${query(target)}`, { title }),
  /** Deletes it everywhere (as the core's chat.kill): its CLI ended, its files removed. */
  deleteSession: (id, target) => call("DELETE", `/__devhost__/chat/sessions/${encodeURIComponent(id)}?${query(target)}`),
  /** Folds the conversation into a summary, as a turn of its own (the core's chat.compact). */
  compactSession: (id, target) => call("POST", `/__devhost__/chat/sessions/${encodeURIComponent(id)}/compact?${query(target)}`),
  /** Where the conversation's Markdown is downloaded from. */
  exportPath: (id, target) => `/__devhost__/chat/sessions/${encodeURIComponent(id)}/export?${query(target)}`,
  /** This checkout's conversations whose title or text has `text`: [{id, title, in, excerpt?}]. */
  /** {sessions: [{id, title, in, excerpt?}], truncated}: truncated when older conversations went unread. */
  searchSessions: (target, text) => call("GET", `/__devhost__/chat/search?q=${encodeURIComponent(text)}&${query(target)}`),
  /** The mode a new conversation of this checkout starts in (the one last picked for it). */
  mode: (target) => call("GET", `/__devhost__/chat/mode?${query(target)}`).then((v) => v.runtimeMode),
  saveMode: (target, runtimeMode) => call("PUT", `/__devhost__/chat/mode?${query(target)}`, { runtimeMode }),
  /** The files of this page's checkout, relative to it: {files, truncated} (the @-mentions). */
  files: (target) => call("GET", `/__devhost__/chat/files?${query(target)}`),
  /** The skills the session's CLI offers: [{name, description, source}]. */
  skills: (id, target) => call("GET", `/__devhost__/chat/sessions/${encodeURIComponent(id)}/skills?${query(target)}`)
    .then((v) => v.skills),
  /** What a turn changed in the checkout's files, with each file's hunks: {turnId, files, skipped}. */
  changes: (id, target, turnId) => call("GET", turnPath(id, turnId, "changes", target)),
  /** Puts files (or hunks: [{path, header}]) of a turn back as they were before it; all of them
      with neither. A 409 (code "conflict", body.paths) when they changed since, unless ``force``. */
  revert: (id, target, turnId, { paths, hunks, force } = {}) => call("POST", turnPath(id, turnId, "revert", target), {
    ...(paths ? { paths } : {}), ...(hunks ? { hunks } : {}), ...(force ? { force: true } : {}) }),
  /** The turn's files put back and the conversation taken back to before it: {files, conversation, note}. */
  rewind: (id, target, turnId, { force } = {}) => call("POST", turnPath(id, turnId, "rewind", target),
    force ? { force: true } : {}),
  /** Whether this page's hot reloads are held: {held, updates, bytes, ended}. */
  reloads: () => call("GET", "/__devhost__/reloads"),
  holdReloads: (held) => call("PUT", "/__devhost__/reloads", { held }),
  applyReloads: () => call("POST", "/__devhost__/reloads/apply"),
  /** The saved panel position, or null (also when the daemon keeps none: no manifest). */
  position: () => call("GET", "/__devhost__/chat/panel").then((v) => v.position, () => null),
  savePosition: (position) => call("PUT", "/__devhost__/chat/panel", { position }),
  /** Positions of served modules (or of the dev build's files) as files of the checkout, or nulls. */
  locate: (positions) => call("POST", `/__devhost__/page/locate?${query("project")}`, { positions })
    .then((v) => v.positions),
  /** The thread socket: the conversation's items, a snapshot of the newest HISTORY_LIMIT (older pages
      asked with `history`); `since` asks for what came after a sequence. */
  threadURL: (sessionId, target, since) => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/__devhost__/ws/thread?sessionId=${encodeURIComponent(sessionId)}&${query(target)}`
      + `&historyLimit=${HISTORY_LIMIT}` + (since ? `&since=${since}` : "");
  },
};
