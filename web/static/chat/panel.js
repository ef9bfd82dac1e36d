// The devtools script devhostd injects into routed pages. It adds one element to the page, a
// shadow root holding the chat panel: the page's styles cannot reach inside, the panel's
// cannot leak out, and the element is fixed-positioned and sized zero, so the page's own
// layout stays exactly as it was.
//
// The page comes first (issue 29): a page load costs devhostd's files at most 3 requests, this
// module, the ring of the page's errors (page_errors.js: an error of the page's first moments is
// one the person will want to attach, so it starts at once) and the page socket (page_link.js:
// the agent's `devhostd page …` reads this page whether or not the panel was ever opened). The
// panel itself (ui.js and its ~25 modules and stylesheets: its Markdown, sanitizer and
// highlighter are most of its weight) loads when the person first opens it, from a launcher
// drawn here. A page whose panel is in use (left open, or holding a conversation: store.js
// keeps LIVE_KEY) loads it at once after the page's load event, as before, so its launcher's
// status dot and the tab title's news go on while it is closed; a page whose load event is slow
// (a stalled image) gets it after LATEST_MS.

import { installRing } from "./page_errors.js";
import { startPageLink } from "./page_link.js";

installRing();

const LATEST_MS = 3000;
// store.js's liveKey(origin), written out: importing store.js would cost the page a request.
const LIVE_KEY = `devhost:live:${location.origin}`;
const TOGGLE = "Alt+Shift+D"; // shortcuts.js's, which takes over once the panel loaded
// The launcher's own look (panel.css's .launcher, which loads with the panel), so the button
// stands where the panel's will; light or dark as the system is until theme.js knows the pick.
const LAUNCHER_CSS = `
:host { all: initial; --bg: #ffffff; --line: #dde1e6; --accent: #3b5bdb; }
@media (prefers-color-scheme: dark) { :host { --bg: #1e2026; --line: #373b44; --accent: #748ffc; } }
.launcher { position: fixed; bottom: 18px; right: 18px; width: 48px; height: 48px; border-radius: 50%;
  border: 1px solid var(--line); background: var(--bg); box-shadow: 0 4px 18px rgba(0, 0, 0, 0.18);
  cursor: pointer; display: grid; place-items: center; font: 20px/1.45 system-ui, sans-serif; color: var(--accent); }
.launcher:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.launcher .dot { position: absolute; top: 4px; right: 4px; width: 10px; height: 10px; border-radius: 50%;
  background: var(--line); }`;

function inUse() {
  try {
    return window.localStorage.getItem(LIVE_KEY) === "1";
  } catch {
    return false; // storage disabled (a sandboxed page): nothing says the panel is in use
  }
}

let host = null;
let root = null;

function hostElement() {
  if (host) return root;
  host = document.createElement("devhost-chat");
  // Resets whatever the page says about unknown elements, then takes no room at all.
  host.style.cssText = "all: initial; position: fixed; top: 0; left: 0; width: 0; height: 0; "
    + "z-index: 2147483647; display: block; contain: style;";
  root = host.attachShadow({ mode: "open" });
  document.documentElement.append(host);
  return root;
}

/** Loads the panel (ui.js) into the shadow root; ``open``: shown once it booted (the person
 *  asked for it), else as its stored state says. Resolves to the panel, or null. */
function loadPanel(open) {
  if (loading) return loading;
  loading = import("./ui.js").then(({ Panel }) => {
    const shadow = hostElement();
    shadow.replaceChildren(); // the launcher drawn here: the panel draws its own
    const panel = new Panel(shadow, host);
    window.__devhostChat = panel;
    panel.boot({ open }).catch((error) => panel.showNote(`The chat failed to start: ${error.message || error}`));
    return panel;
  }).catch((error) => {
    loading = null;
    window.__devhostChat = undefined;
    console.error("devhost: the chat panel could not load", error);
    return null;
  });
  return loading;
}
let loading = null;

/** The launcher alone: a click (or the shortcut) loads the panel, open. ``window.__devhostChat``
 *  is this stand-in until then ({lite: true, booted: true, wake()}: wake loads the panel as it
 *  is stored, closed, for tools and tests that drive the panel itself). */
function drawLauncher() {
  const shadow = hostElement();
  const button = document.createElement("button");
  button.type = "button";
  button.className = "launcher";
  button.title = `devhost chat (${TOGGLE})`;
  button.setAttribute("aria-label", "Open the devhost chat");
  button.setAttribute("aria-keyshortcuts", TOGGLE);
  const glyph = document.createElement("span");
  glyph.className = "glyph";
  glyph.textContent = "✦";
  const dot = document.createElement("span");
  dot.className = "dot";
  button.append(glyph, dot);
  const style = document.createElement("style");
  style.textContent = LAUNCHER_CSS;
  const wasFocused = () => shadow.activeElement === button;
  const open = () => {
    const focused = wasFocused();
    window.removeEventListener("keydown", onKey, true);
    button.remove(); // at once: a second click must not load it twice, nor two launchers show
    loadPanel(true).then((panel) => {
      if (!panel && !button.isConnected) { shadow.append(button); window.addEventListener("keydown", onKey, true); }
      else if (focused) panel?.ui?.textarea?.focus({ preventScroll: true });
    });
  };
  // Capture, as shortcuts.js does: the page's own handlers (which may stop the event) come after.
  const onKey = (event) => {
    if (!(event.altKey && event.shiftKey && !event.ctrlKey && !event.metaKey && event.code === "KeyD") || event.repeat) return;
    event.preventDefault();
    event.stopPropagation();
    open();
  };
  button.addEventListener("click", open);
  window.addEventListener("keydown", onKey, true);
  shadow.append(style, button);
  window.__devhostChat = { lite: true, booted: true, wake: () => {
    window.removeEventListener("keydown", onKey, true);
    return loadPanel(false).then(() => undefined);
  } };
}

function start() {
  if (window.__devhostChat) return;
  window.__devhostChat = "starting";
  startPageLink().catch(() => {}); // the agent's view of the page
  if (inUse()) loadPanel(false);
  else drawLauncher();
}

if (document.readyState === "complete") start();
else {
  window.addEventListener("load", start, { once: true });
  setTimeout(start, LATEST_MS);
}
