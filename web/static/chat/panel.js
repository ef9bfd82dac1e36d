// The devtools script devhostd injects into routed pages. It adds one element to the page, a
// shadow root holding the chat panel: the page's styles cannot reach inside, the panel's
// cannot leak out, and the element is fixed-positioned and sized zero, so the page's own
// layout stays exactly as it was.

import { Panel } from "./ui.js";

if (!window.__devhostChat) {
  window.__devhostChat = "starting";
  const host = document.createElement("devhost-chat");
  // Resets whatever the page says about unknown elements, then takes no room at all.
  host.style.cssText = "all: initial; position: fixed; top: 0; left: 0; width: 0; height: 0; "
    + "z-index: 2147483647; display: block; contain: style;";
  const root = host.attachShadow({ mode: "open" });
  document.documentElement.append(host);
  const panel = new Panel(root, host);
  window.__devhostChat = panel;
  panel.boot().catch((error) => panel.showNote(`The chat failed to start: ${error.message || error}`));
}
