// The "[Page errors]" section a message carries when the person attaches the page's errors
// (page_attach.js): the ring's errors (page_errors.js), then its failed requests, oldest first,
// each stack frame mapped to the checkout's file and line where the daemon's `locate` can (a
// frame it cannot map keeps the URL it ran from). Made once, when the person presses Attach, and
// shown to them as it is before it is sent:
//     [Page errors]
//     Page: http://app.localhost:8080/cart
//     Errors (2):
//     1. Uncaught error: TypeError: cart is undefined (3 times)
//        at render (src/Cart.jsx:42)
//        at http://app.localhost:8080/node_modules/.vite/deps/react-dom.js:1200:7
//     2. console.error: the price could not be loaded
//     Failed requests (1):
//     1. GET http://app.localhost:8080/api/cart → 404
//     2. POST http://app.localhost:8080/api/pay → network error: Failed to fetch

import { locateAll } from "./page_context.js";

const FRAMES_SHOWN = 6; // per error: the top of a stack is where the agent looks; the rest is framework
const KIND_WORDS = { "console-error": "console.error", "console-warn": "console.warn", error: "Uncaught error",
                     rejection: "Unhandled rejection" };

const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** The section's text, from the entries and `mapped` (frame "url:line:column" -> {file, line} | null). */
export function pageErrorsText({ errors = [], requests = [], dropped = {} }, mapped = new Map(), url = location.href) {
  const lines = ["[Page errors]", `Page: ${url}`];
  if (errors.length) {
    lines.push(`Errors (${errors.length}${dropped.errors ? `; ${count(dropped.errors, "older one", "older ones")} dropped` : ""}):`);
    errors.forEach((e, i) => {
      const times = e.count > 1 ? ` (${e.count} times)` : "";
      lines.push(`${i + 1}. ${KIND_WORDS[e.kind] || e.kind}: ${e.message}${times}`);
      for (const frame of (e.stack || []).slice(0, FRAMES_SHOWN)) {
        const at = mapped.get(frameKey(frame));
        const place = at ? `${at.file}:${at.line}` : `${frame.url}:${frame.line}:${frame.column}`;
        lines.push(`   at ${frame.fn ? `${frame.fn} (${place})` : place}`);
      }
      if ((e.stack || []).length > FRAMES_SHOWN) lines.push(`   … ${e.stack.length - FRAMES_SHOWN} more frames`);
    });
  }
  if (requests.length) {
    lines.push(`Failed requests (${requests.length}${dropped.requests ? `; ${count(dropped.requests, "older one", "older ones")} dropped` : ""}):`);
    requests.forEach((r, i) => {
      const outcome = r.status ? `${r.status}` : `network error${r.error ? `: ${r.error}` : ""}`;
      const by = r.source === "proxy" ? " (answered by devhostd's proxy)" : "";
      lines.push(`${i + 1}. ${r.method} ${r.url} → ${outcome}${by}`);
    });
  }
  return lines.join("\n");
}

export const frameKey = (f) => `${f.url}:${f.line}:${f.column}`;

/** The section, its frames mapped through `locate` in one call (failures: the frames keep their URLs). */
export async function pageErrorsSection(entries, locate) {
  const frames = new Map();
  for (const e of entries.errors || []) {
    for (const f of (e.stack || []).slice(0, FRAMES_SHOWN)) frames.set(frameKey(f), { url: f.url, line: f.line, column: f.column });
  }
  const positions = [...frames.values()];
  const found = positions.length ? await locateAll(locate, positions) : [];
  const mapped = new Map(positions.map((p, i) => [frameKey(p), found[i]]));
  return pageErrorsText(entries, mapped);
}
