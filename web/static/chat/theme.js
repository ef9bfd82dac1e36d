// Light, dark, or auto (following the system's prefers-color-scheme): the person's pick, kept in
// localStorage for every page of this origin, applied to the panel's host element as
// data-theme="light|dark" (panel.css keys its colours on it) and to the highlight.js theme (the
// light and dark GitHub themes of the same pinned package: only the one shown applies).
//
// The pick is its own localStorage key, not part of the per-project settings: how the panel
// looks is the person's, whichever project or conversation is open.

export const THEMES = ["auto", "light", "dark"];
export const THEME_KEY = "devhost:theme";
const LABEL = { auto: "Auto (follows the system)", light: "Light", dark: "Dark" };
const GLYPH = { auto: "◐", light: "☀", dark: "☾" };

/** The stored pick, "auto" for anything else (nothing stored, another version's value). */
export function storedTheme(storage = globalThis.localStorage) {
  try {
    const value = storage?.getItem(THEME_KEY);
    return THEMES.includes(value) ? value : "auto";
  } catch {
    return "auto"; // storage disabled (a sandboxed page): auto, not remembered
  }
}

/** What a pick shows: "light" or "dark". */
export function resolveTheme(pick, systemDark) {
  return pick === "auto" ? (systemDark ? "dark" : "light") : pick;
}

/** The pick after this one, for the header's one switch: auto → light → dark → auto. */
export function nextTheme(pick) {
  return THEMES[(THEMES.indexOf(pick) + 1) % THEMES.length];
}

export class Theme {
  /**
   * host: the element whose shadow root holds the panel; links: {light, dark}, the two
   * highlight.js style sheets; onChange(shown): told whenever what is shown changes (visuals
   * follow it).
   */
  constructor(host, links, onChange = () => {}) {
    this.host = host;
    this.links = links;
    this.onChange = onChange;
    this.pick = storedTheme();
    this.media = window.matchMedia("(prefers-color-scheme: dark)");
    this.media.addEventListener("change", () => this.apply());
    // Another tab of this origin picked: this one follows.
    window.addEventListener("storage", (event) => {
      if (event.key === THEME_KEY) {
        this.pick = storedTheme();
        this.apply();
      }
    });
    this.button = null;
  }

  get shown() {
    return resolveTheme(this.pick, this.media.matches);
  }

  /** The header's switch; its name and tooltip say what is picked and what a click picks. */
  makeButton(el) {
    this.button = el("button", { type: "button", class: "icon theme", onclick: () => this.set(nextTheme(this.pick)) });
    this.apply();
    return this.button;
  }

  set(pick) {
    if (!THEMES.includes(pick)) return;
    this.pick = pick;
    try {
      localStorage.setItem(THEME_KEY, pick);
    } catch {
      // storage disabled: the pick lasts this page only
    }
    this.apply();
  }

  apply() {
    const shown = this.shown;
    const changed = this.host.dataset.theme !== shown;
    this.host.dataset.theme = shown;
    // A style sheet whose media never matches does not apply (and stays loaded for a switch).
    this.links.light.media = shown === "light" ? "all" : "not all";
    this.links.dark.media = shown === "dark" ? "all" : "not all";
    if (this.button) {
      const label = `Theme: ${LABEL[this.pick]}`;
      this.button.textContent = GLYPH[this.pick];
      this.button.dataset.pick = this.pick;
      this.button.setAttribute("aria-label", label);
      this.button.title = `${label}. Click for ${LABEL[nextTheme(this.pick)].toLowerCase()}`;
    }
    if (changed) this.onChange(shown);
  }
}

/** Each visual shown follows the panel's theme (its bridge picks the palette by appearance). */
export function tellVisuals(root, shown) {
  const message = { jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { appearance: shown, variables: {} } };
  // A sandboxed frame has an opaque origin: "*" is the only target that reaches it.
  for (const frame of root.querySelectorAll("iframe.visual-frame")) frame.contentWindow?.postMessage(message, "*");
}
