// The devtools script devhostd injects into routed pages. It adds one element to the page, a
// shadow root holding the chat panel: the page's styles cannot reach inside, the panel's
// cannot leak out, and the element is fixed-positioned and sized zero, so the page's own
// layout stays exactly as it was.
//
// The page comes first: the panel's modules (its Markdown, sanitizer and highlighter are most of
// its weight) load only once the page has loaded, so they never compete with the page's own
// modules; a page whose load event is slow (a stalled image) gets the panel after LATEST_MS.
// Only the ring of the page's errors (page_errors.js, small) starts at once: an error of the
// page's first moments is one the person will want to attach.

import { installRing } from "./page_errors.js";

installRing();

const LATEST_MS = 3000;

function start() {
  if (window.__devhostChat) return;
  window.__devhostChat = "starting";
  import("./page_link.js").then((link) => link.startPageLink()).catch(() => {}); // the agent's view of the page
  import("./ui.js").then(({ Panel }) => {
    const host = document.createElement("devhost-chat");
    // Resets whatever the page says about unknown elements, then takes no room at all.
    host.style.cssText = "all: initial; position: fixed; top: 0; left: 0; width: 0; height: 0; "
      + "z-index: 2147483647; display: block; contain: style;";
    const root = host.attachShadow({ mode: "open" });
    document.documentElement.append(host);
    const panel = new Panel(root, host);
    window.__devhostChat = panel;
    panel.boot().catch((error) => panel.showNote(`The chat failed to start: ${error.message || error}`));
  }).catch((error) => {
    window.__devhostChat = undefined;
    console.error("devhost: the chat panel could not load", error);
  });
}

if (document.readyState === "complete") start();
else {
  window.addEventListener("load", start, { once: true });
  setTimeout(start, LATEST_MS);
}
