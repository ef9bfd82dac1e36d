// The page's errors and failed requests, kept in a bounded ring for as long as the page lives, so
// the person can attach them to a message (page_attach.js) and the daemon can answer the agent's
// `devhostd page errors|requests` (page_link.js sends what is new).
//
// What is kept: console.error / console.warn, uncaught errors (window `error` events of scripts:
// a resource that fails to load does not bubble to window, and is not kept), unhandled
// rejections, and fetch / XHR requests that failed (status >= 400, or a network error: never a
// body or a header, and never devhostd's own requests under /__devhost__/, the panel's included).
// A fetch the page aborted itself is its own choice, not a failure, and is not kept.
//
// The ring must never break the page: every hook calls the page's original first, returns what
// it returned, and catches its own errors. 100 errors and 100 requests at most, the oldest
// dropped (and counted); a message is cut at 2,000 characters; a message the ring already holds
// (same kind, text and place) is counted on that entry (`count`) rather than kept again.
//
// Entries: {kind: "console-error"|"console-warn"|"error"|"rejection", message, stack: [{url,
// line, column, fn?}], time, count?} and {kind: "request", method, url, status, error, time,
// source: "page"|"proxy"}; `time` is milliseconds since the epoch (Date.now()).

export const MAX_ENTRIES = 100;
export const MAX_MESSAGE = 2000;
const MAX_FRAMES = 30;
const OWN = "/__devhost__/";

const ring = { errors: [], requests: [], dropped: { errors: 0, requests: 0 } };
const listeners = new Set();
let installed = false;

/** Hooks the console, window errors, fetch and XHR once (idempotent: a second call does nothing). */
export function installRing() {
  if (installed) return;
  installed = true;
  guard(hookConsole);
  guard(hookWindow);
  guard(hookFetch);
  guard(hookXHR);
}

/** What the ring holds, oldest first (copies: the caller may keep them). */
export function pageEntries() {
  return { errors: ring.errors.map((e) => ({ ...e })), requests: ring.requests.map((e) => ({ ...e })),
           dropped: { ...ring.dropped } };
}

/** `listener(entry)` for every entry added (a repeat only grows the count of the entry it repeats,
 *  and is not told: the page link sends entries as they are new). Returns what unsubscribes it. */
export function onEntry(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function clearEntries() {
  ring.errors = [];
  ring.requests = [];
  ring.dropped = { errors: 0, requests: 0 };
}

/** The proxy's own failed answers for this page (the daemon sends them), merged with source "proxy". */
export function addProxyRequests(list) {
  for (const r of Array.isArray(list) ? list : []) {
    if (!r || typeof r.url !== "string") continue;
    keepRequest({ method: String(r.method || "GET").toUpperCase(), url: r.url,
                  status: Number.isFinite(r.status) ? r.status : null, error: r.error ? cut(String(r.error)) : null,
                  time: Number.isFinite(r.time) ? r.time : Date.now(), source: "proxy" });
  }
}

// ---- parsing (pure) -----------------------------------------------------------------------------

const CHROMIUM_FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?\s*$/;
const FIREFOX_FRAME = /^\s*(.*?)@(.+?):(\d+):(\d+)\s*$/;

/** An Error's `stack` as frames {url, line, column, fn?}: Chromium's "    at fn (url:line:col)" and
 *  "    at url:line:col", Firefox's and Safari's "fn@url:line:col". Lines it cannot read are skipped. */
export function parseStack(stack) {
  if (typeof stack !== "string") return [];
  const frames = [];
  for (const line of stack.split("\n")) {
    const m = CHROMIUM_FRAME.exec(line) || FIREFOX_FRAME.exec(line);
    if (!m) continue;
    let url = m[2];
    if (url.startsWith("eval at ") || url === "<anonymous>" || url === "native") continue;
    url = url.replace(/^async /, "");
    const frame = { url, line: Number(m[3]), column: Number(m[4]) };
    const fn = (m[1] || "").replace(/^async /, "").trim();
    if (fn) frame.fn = fn;
    frames.push(frame);
    if (frames.length >= MAX_FRAMES) break;
  }
  return frames;
}

/** Whether a URL is one of devhostd's own (the panel's calls, the daemon's routes). */
export function isOwnURL(url) {
  try {
    const parsed = new URL(url, document.baseURI);
    return parsed.origin === location.origin && parsed.pathname.startsWith(OWN);
  } catch {
    return false;
  }
}

function cut(text) {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
}

/** A console argument as words: an Error as "Name: message", an object as JSON where it can be. */
function describeValue(value) {
  if (typeof value === "string") return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (value === undefined) return "undefined";
  if (typeof value === "object" && value !== null) {
    if (value instanceof Node) return `<${value.nodeName.toLowerCase()}>`;
    try {
      return JSON.stringify(value)?.slice(0, MAX_MESSAGE) ?? String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}

/** console.log's own "%s %d %o" substitutions in the first argument, then the rest joined. */
function consoleMessage(args) {
  const rest = [...args];
  let head = "";
  if (typeof rest[0] === "string") {
    head = rest.shift().replace(/%[sdifoOc%]/g, (token) => {
      if (token === "%%") return "%";
      if (!rest.length) return token;
      const value = rest.shift();
      return token === "%c" ? "" : describeValue(value);
    });
  }
  return [head, ...rest.map(describeValue)].filter((part) => part !== "").join(" ");
}

// ---- keeping ------------------------------------------------------------------------------------

const ownModule = import.meta.url;

function framesOf(stack) {
  return parseStack(stack).filter((f) => f.url !== ownModule); // the ring's own hooks are no place of the page's
}

function keepError(kind, message, stack) {
  const entry = { kind, message: cut(message || "(no message)"), stack: stack.slice(0, MAX_FRAMES), time: Date.now() };
  const place = (e) => (e.stack[0] ? `${e.stack[0].url}:${e.stack[0].line}:${e.stack[0].column}` : "");
  const same = ring.errors.find((e) => e.kind === entry.kind && e.message === entry.message && place(e) === place(entry));
  if (same) {
    same.count = (same.count || 1) + 1;
    same.time = entry.time;
    return;
  }
  push("errors", entry);
}

function keepRequest(entry) {
  if (isOwnURL(entry.url)) return;
  push("requests", { kind: "request", ...entry });
}

function push(list, entry) {
  ring[list].push(entry);
  if (ring[list].length > MAX_ENTRIES) {
    ring[list].splice(0, ring[list].length - MAX_ENTRIES);
    ring.dropped[list] += 1;
  }
  tell(entry);
}

function tell(entry) {
  for (const listener of listeners) {
    try {
      listener({ ...entry });
    } catch {
      // a listener's trouble is its own: the others still hear
    }
  }
}

function guard(work) {
  try {
    return work();
  } catch {
    return undefined; // the ring never breaks the page
  }
}

// ---- hooks --------------------------------------------------------------------------------------

function hookConsole() {
  let keeping = false; // a listener that logs while an entry is kept is not kept again (no loop)
  for (const [method, kind] of [["error", "console-error"], ["warn", "console-warn"]]) {
    const original = console[method];
    if (typeof original !== "function") continue;
    console[method] = function devhostConsole(...args) {
      const result = original.apply(this, args);
      if (keeping) return result;
      keeping = true;
      guard(() => {
        const error = args.find((a) => a instanceof Error);
        keepError(kind, consoleMessage(args), framesOf(error ? error.stack : new Error().stack));
      });
      keeping = false;
      return result;
    };
  }
}

function hookWindow() {
  window.addEventListener("error", (event) => guard(() => {
    if (!(event instanceof ErrorEvent)) return; // a resource that failed to load: not kept
    const error = event.error;
    let stack = error instanceof Error ? framesOf(error.stack) : [];
    if (!stack.length && event.filename) stack = [{ url: event.filename, line: event.lineno, column: event.colno }];
    // "TypeError: x" rather than the event's "Uncaught TypeError: x": the kind already says uncaught.
    keepError("error", error instanceof Error ? describeValue(error) : event.message || describeValue(error), stack);
  }));
  window.addEventListener("unhandledrejection", (event) => guard(() => {
    const reason = event.reason;
    keepError("rejection", describeValue(reason), reason instanceof Error ? framesOf(reason.stack) : []);
  }));
}

function requestOf(input, init) {
  const method = String(init?.method || (input instanceof Request ? input.method : "") || "GET").toUpperCase();
  const raw = input instanceof Request ? input.url : String(input);
  let url = raw;
  try {
    url = new URL(raw, document.baseURI).href;
  } catch {
    // kept as the page wrote it
  }
  return { method, url };
}

function hookFetch() {
  const original = window.fetch;
  if (typeof original !== "function") return;
  window.fetch = function devhostFetch(input, init) {
    const promise = original.apply(this, arguments);
    const asked = guard(() => requestOf(input, init));
    if (!asked || isOwnURL(asked.url)) return promise;
    return promise.then((response) => {
      guard(() => {
        if (response.status >= 400) keepRequest({ ...asked, status: response.status, error: null, time: Date.now(), source: "page" });
      });
      return response;
    }, (error) => {
      guard(() => {
        if (error?.name !== "AbortError") {
          keepRequest({ ...asked, status: null, error: cut(describeValue(error)), time: Date.now(), source: "page" });
        }
      });
      throw error;
    });
  };
}

function hookXHR() {
  const proto = window.XMLHttpRequest?.prototype;
  if (!proto) return;
  const asked = new WeakMap(); // xhr -> {method, url, failure} of its latest open()
  const hooked = new WeakSet(); // xhrs whose events are listened to (once each)
  const open = proto.open;
  proto.open = function devhostOpen(method, url) {
    const result = open.apply(this, arguments);
    guard(() => {
      const request = requestOf(url, { method });
      if (isOwnURL(request.url)) {
        asked.delete(this); // re-opened for one of devhostd's: not the page's
        return;
      }
      const first = !hooked.has(this);
      hooked.add(this);
      asked.set(this, { ...request, failure: null });
      if (!first) return;
      const failed = (why) => () => guard(() => { const a = asked.get(this); if (a) a.failure = why; });
      this.addEventListener("error", failed("network error"));
      this.addEventListener("timeout", failed("timed out"));
      this.addEventListener("abort", failed("aborted"));
      this.addEventListener("loadend", () => guard(() => {
        const { method: m, url: u, failure } = asked.get(this) || {};
        if (!u || failure === "aborted") return; // the page's own choice
        if (failure) keepRequest({ method: m, url: u, status: null, error: failure, time: Date.now(), source: "page" });
        else if (this.status >= 400) keepRequest({ method: m, url: u, status: this.status, error: null, time: Date.now(), source: "page" });
      }));
    });
    return result;
  };
}
