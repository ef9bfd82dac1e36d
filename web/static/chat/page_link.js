// The page socket (/__devhost__/ws/page): what this page reports reaches the daemon's bounded
// memory of it, so the agent's `devhostd page errors | requests | element` can read it.
//
// - What the page's ring (page_errors.js) keeps goes up as {type: "entries", errors, requests}:
//   all of it once the socket opens, then what is new, batched (at most one frame per BATCH_MS).
// - The daemon asks {type: "element", requestId, selector}; the page answers with
//   describeElement (page_context.js) of the first match and how many match.
// - The daemon sends {type: "proxy-requests", requests}: the proxy's own failed answers, merged
//   into the ring with source "proxy" (and never sent back up).
// The ring and the describer are another module's: each import is guarded, so the socket works
// (and answers what it can) without them. Nothing of it is stored in localStorage.
//
// It runs on every page from its load (panel.js imports it): its only static import is the ring,
// which panel.js loads anyway; the describer and api.js (page_context.js's locate) are imported
// at the first element question, so the page's load costs no request for them (issue 29).

const BATCH_MS = 250;
const RETRY_MS = [1000, 2000, 5000, 10000, 30000];

async function optional(path) {
  try {
    return await import(path);
  } catch {
    return null;
  }
}

const notProxy = (entry) => entry.source !== "proxy";

/** The page socket's address: the page's own URL (no fragment) names the page, for the project's
 *  checkout (written out here, not taken from api.js, which the page's load does not fetch). */
function pageSocketURL() {
  const query = new URLSearchParams({ pageURL: `${location.origin}${location.pathname}${location.search}`,
                                      chatTarget: "project" });
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/__devhost__/ws/page?${query}`;
}

export async function startPageLink() {
  if (window.__devhostPageLink) return;
  window.__devhostPageLink = true;
  const ring = await optional("./page_errors.js");
  let describer = null; // page_context.js and api.js, imported at the first element question
  const loadDescriber = () => (describer ||= Promise.all([optional("./page_context.js"), optional("./api.js")]));
  let ws = null;
  let queued = { errors: [], requests: [] };
  let timer = null;
  let attempts = 0;

  const send = (value) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(value));
  };
  const flush = () => {
    timer = null;
    if (!queued.errors.length && !queued.requests.length) return;
    send({ type: "entries", ...queued });
    queued = { errors: [], requests: [] };
  };
  const queue = (entry) => {
    if (entry.kind === "request") {
      if (notProxy(entry)) queued.requests.push(entry);
    } else queued.errors.push(entry);
    if (timer === null) timer = setTimeout(flush, BATCH_MS);
  };
  ring?.installRing?.(); // idempotent: panel.js installs it first thing, this only makes sure
  ring?.onEntry?.((entry) => {
    if (ws && ws.readyState === WebSocket.OPEN) queue(entry);
  });

  const describe = async (selector) => {
    let element = null;
    let count = 0;
    try {
      const found = document.querySelectorAll(selector);
      count = found.length;
      element = found[0] || null;
    } catch {
      return { element: null, count: 0 }; // not a selector this browser reads
    }
    if (!element) return { element: null, count };
    const [context, apiModule] = await loadDescriber();
    const api = apiModule?.api;
    if (!context?.describeElement || !api) return { element: { url: location.href, tag: element.localName, selector }, count };
    try {
      return { element: await context.describeElement(element, { locate: api.locate }), count };
    } catch {
      return { element: { url: location.href, tag: element.localName, selector }, count };
    }
  };

  const onMessage = async (event) => {
    let value;
    try {
      value = JSON.parse(event.data);
    } catch {
      return;
    }
    if (value.type === "proxy-requests" && Array.isArray(value.requests)) ring?.addProxyRequests?.(value.requests);
    else if (value.type === "element" && typeof value.selector === "string") {
      send({ type: "element", requestId: value.requestId, ...(await describe(value.selector)) });
    }
  };

  const connect = () => {
    ws = new WebSocket(pageSocketURL());
    ws.addEventListener("open", () => {
      attempts = 0;
      const known = ring?.pageEntries?.() || { errors: [], requests: [] };
      queued = { errors: [...known.errors], requests: known.requests.filter(notProxy) };
      flush();
    });
    ws.addEventListener("message", onMessage);
    ws.addEventListener("close", () => {
      ws = null;
      setTimeout(connect, RETRY_MS[Math.min(attempts++, RETRY_MS.length - 1)]);
    });
  };
  connect();
}
