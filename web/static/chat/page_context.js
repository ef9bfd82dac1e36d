// What the agent is told of an element the person picked (picker.js): where it is on the page, a
// selector that finds exactly it, what it is (tag, id, classes, role, accessible name), a text
// and an outerHTML excerpt, and — where the dev build knows them (frameworks.js) — the source
// line that creates it and its component chain, mapped to the checkout's files by the daemon
// (`locate`: api.locate, POST /__devhost__/page/locate).
//
// Form values never leave the page: the HTML excerpt is a clone with every `value`, `checked`
// and `selected` attribute and every textarea's text taken out, and password fields dropped
// whole; an input's value is never its text or its name.
//
// The text section (pageContextText), one per element; a line whose value is unknown is left out:
//     [Page context]
//     Page: http://app.localhost:8080/cart
//     Element: button#checkout.primary (role button, name "Check out")
//     Selector: #checkout
//     Source: src/Cart.jsx:42
//     Components: Cart (src/Cart.jsx:12) < App (src/App.jsx:5)      (innermost first)
//     Box: 120×40 at (300, 512)                                      (CSS px, from the page's top left)
//     Text: Check out
//     HTML: <button id="checkout" class="primary">Check out</button>

export const MAX_HTML = 1500;
export const MAX_TEXT = 300;
const MAX_NAME = 200;
const MAX_LOCATE = 200; // positions per call, as the route takes them
const LOCATE_MS = 5000; // a daemon that does not answer must not hold the send: the positions stay unmapped

const NO_FRAMEWORK = { framework: null, source: null, components: [] };
let frameworks = null; // the import of frameworks.js, once: its module or null

/** frameworks.js's frameworkInfo, or a function that knows nothing where the module is missing. */
export function loadFrameworks() {
  frameworks ||= import("./frameworks.js").then((m) => (typeof m.frameworkInfo === "function" ? m.frameworkInfo : null),
    () => null);
  return frameworks.then((info) => (element) => {
    if (!info) return NO_FRAMEWORK;
    try {
      return info(element) || NO_FRAMEWORK;
    } catch {
      return NO_FRAMEWORK;
    }
  });
}

// ---- selector -----------------------------------------------------------------------------------

const esc = (value) => CSS.escape(value);

function unique(selector, element) {
  try {
    const found = document.querySelectorAll(selector);
    return found.length === 1 && found[0] === element;
  } catch {
    return false;
  }
}

/** Classes a rebuild keeps: not a generated one (css-1x2y3z, sc-abc, svelte-xyz, a CSS module's
 *  _card_1x2y3_4 or card__a1B2c) nor a state that changes as the person moves (active, open). */
export function stableClasses(element) {
  return [...element.classList].filter((c) => /^[A-Za-z][\w-]*$/.test(c) && c.length <= 32
    && !/^(css|sc|jsx|svelte|emotion|styled|chakra)-/.test(c) && !/\d{3,}|__[A-Za-z0-9]{5,}$/.test(c)
    && !/^(is-|has-)?(active|hover|focus|focused|selected|open|disabled|visible|hidden)$/.test(c));
}

function segment(node) {
  const tag = node.localName;
  const classes = stableClasses(node).slice(0, 2).map((c) => `.${esc(c)}`).join("");
  const parent = node.parentElement;
  if (!parent) return tag;
  const sameTag = [...parent.children].filter((c) => c.localName === tag);
  const plain = tag + classes;
  if ([...parent.children].filter((c) => c.matches(plain)).length === 1) return plain;
  return `${plain}:nth-of-type(${sameTag.indexOf(node) + 1})`;
}

const uniqueId = (node) => node.id && unique(`#${esc(node.id)}`, node);

/**
 * A selector that finds exactly `element`: `#id` when that id is unique, else the shortest run of
 * tag + stable classes (+ :nth-of-type where siblings share them) from the nearest ancestor with
 * a unique id (or the document), each candidate checked with querySelectorAll.
 */
export function selectorFor(element) {
  if (uniqueId(element)) return `#${esc(element.id)}`;
  const steps = [];
  let anchor = "";
  for (let node = element; node && node !== document.documentElement; node = node.parentElement) {
    if (node !== element && uniqueId(node)) {
      anchor = `#${esc(node.id)}`;
      break;
    }
    steps.unshift(segment(node));
  }
  for (let k = 1; k <= steps.length; k++) {
    const tail = steps.slice(-k).join(" > ");
    for (const candidate of anchor ? [`${anchor} ${tail}`, `${anchor} > ${tail}`] : [tail]) {
      if (unique(candidate, element)) return candidate;
    }
  }
  // Every step pinned by its place among its siblings, from the root: always exactly one element.
  const path = [];
  for (let node = element; node && node.parentElement; node = node.parentElement) {
    const sameTag = [...node.parentElement.children].filter((c) => c.localName === node.localName);
    path.unshift(`${node.localName}:nth-of-type(${sameTag.indexOf(node) + 1})`);
  }
  return [":root", ...path].join(" > ");
}

// ---- role and name ------------------------------------------------------------------------------

const INPUT_ROLES = { button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox",
                      radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", email: "textbox",
                      tel: "textbox", text: "textbox", url: "textbox", password: "textbox" };
const TAG_ROLES = { button: "button", select: "combobox", textarea: "textbox", nav: "navigation", main: "main",
                    aside: "complementary", form: "form", ul: "list", ol: "list", li: "listitem", table: "table",
                    tr: "row", td: "cell", th: "columnheader", dialog: "dialog", article: "article", details: "group",
                    fieldset: "group", summary: "button", option: "option", progress: "progressbar", hr: "separator",
                    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
                    output: "status", meter: "meter", menu: "list" };
const NAMED_BY_CONTENT = new Set(["button", "link", "heading", "cell", "columnheader", "listitem", "option", "tab",
                                  "menuitem", "checkbox", "radio", "switch", "treeitem", "row", "tooltip"]);

/** The element's role: its `role` attribute's first word, else the implicit role of common tags. */
export function roleOf(element) {
  const explicit = (element.getAttribute("role") || "").trim().split(/\s+/)[0];
  if (explicit) return explicit;
  const tag = element.localName;
  if (tag === "a" || tag === "area") return element.hasAttribute("href") ? "link" : null;
  if (tag === "input") {
    const type = (element.getAttribute("type") || "text").toLowerCase();
    if (type === "hidden") return null;
    if (type === "text" || type === "search" || !type) return element.hasAttribute("list") ? "combobox" : INPUT_ROLES[type];
    return INPUT_ROLES[type] || "textbox";
  }
  if (tag === "img") return element.getAttribute("alt") === "" ? "presentation" : "img";
  if (tag === "select") return element.multiple || element.size > 1 ? "listbox" : "combobox";
  if (tag === "header" || tag === "footer") {
    if (element.closest("article, aside, main, nav, section")) return null;
    return tag === "header" ? "banner" : "contentinfo";
  }
  if (tag === "section") return element.hasAttribute("aria-label") || element.hasAttribute("aria-labelledby") ? "region" : null;
  return TAG_ROLES[tag] || null;
}

const squash = (text) => (text || "").replace(/\s+/g, " ").trim();
const bounded = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Text of a node for a name: what the person reads, never what they typed (form values). */
function readableText(node) {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent;
  if (node.nodeType !== Node.ELEMENT_NODE) return "";
  const tag = node.localName;
  if (["script", "style", "template", "textarea", "select", "noscript"].includes(tag)) return "";
  if (tag === "input") return "";
  if (tag === "img") return node.getAttribute("alt") || "";
  return [...node.childNodes].map(readableText).join(tag === "br" ? "\n" : "");
}

/**
 * The accessible name, as assistive technology works it out for the common cases: aria-labelledby,
 * aria-label, a <label> of a form control, alt, the content for roles named by it, title, placeholder.
 */
export function accessibleName(element) {
  const root = element.getRootNode();
  const labelledBy = (element.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean)
    .map((id) => root.getElementById?.(id)).filter(Boolean).map((n) => squash(readableText(n))).join(" ");
  if (labelledBy) return bounded(labelledBy, MAX_NAME);
  const label = squash(element.getAttribute("aria-label"));
  if (label) return bounded(label, MAX_NAME);
  const tag = element.localName;
  if (["input", "select", "textarea", "meter", "progress", "output"].includes(tag)) {
    const type = (element.getAttribute("type") || "").toLowerCase();
    if (tag === "input" && ["button", "submit", "reset"].includes(type)) {
      // a button's value is its label, written by the page, not typed by the person
      return bounded(squash(element.getAttribute("value")) || (type === "reset" ? "Reset" : type === "submit" ? "Submit" : ""), MAX_NAME);
    }
    const labels = [...(element.labels || [])].map((l) => squash(readableText(l))).filter(Boolean).join(" ");
    if (labels) return bounded(labels, MAX_NAME);
    if (tag === "input" && type === "image") return bounded(squash(element.getAttribute("alt")), MAX_NAME);
  }
  if (tag === "img" || tag === "area") {
    const alt = squash(element.getAttribute("alt"));
    if (alt) return bounded(alt, MAX_NAME);
  }
  const role = roleOf(element);
  if (NAMED_BY_CONTENT.has(role)) {
    const content = squash(readableText(element));
    if (content) return bounded(content, MAX_NAME);
  }
  const title = squash(element.getAttribute("title")) || squash(element.getAttribute("placeholder"));
  return title ? bounded(title, MAX_NAME) : "";
}

// ---- excerpts -----------------------------------------------------------------------------------

/** The element's outerHTML without form values or password fields, cut at MAX_HTML characters. */
export function redactedHTML(element) {
  const isPassword = (n) => n.localName === "input" && (n.getAttribute("type") || "").toLowerCase() === "password";
  if (isPassword(element)) return "";
  const clone = element.cloneNode(true);
  for (const node of [clone, ...clone.querySelectorAll("*")]) {
    if (isPassword(node) || node.localName === "devhost-chat") { // the panel's own host is no part of the page
      node.remove();
      continue;
    }
    const type = (node.getAttribute("type") || "").toLowerCase();
    // A button's value is its label, written by the page; any other input's is what was typed or chosen.
    if (node.localName === "input" && !["button", "submit", "reset"].includes(type)) node.removeAttribute("value");
    node.removeAttribute("checked");
    node.removeAttribute("selected");
    if (node.localName === "textarea") node.textContent = "";
  }
  const html = clone.outerHTML;
  return html.length > MAX_HTML ? `${html.slice(0, MAX_HTML - 1)}…` : html;
}

/** The text the element shows (as rendered; form controls' contents never), cut at MAX_TEXT. */
export function visibleText(element) {
  if (["input", "textarea", "select"].includes(element.localName)) return "";
  const shown = typeof element.innerText === "string" && element.isConnected ? element.innerText : readableText(element);
  return bounded(squash(shown), MAX_TEXT);
}

// ---- positions ----------------------------------------------------------------------------------

const positionOf = (p) => {
  if (!p || typeof p !== "object") return null;
  const line = Number.isFinite(p.line) ? p.line : null;
  // A file with no line: a dev build that knows a component's file only (Vue's __file).
  if (typeof p.file === "string") {
    return { file: p.file, ...(line ? { line } : {}), ...(line && Number.isFinite(p.column) ? { column: p.column } : {}) };
  }
  if (typeof p.url === "string" && line) return { url: p.url, line, column: Number.isFinite(p.column) ? p.column : 1 };
  return null;
};

/** `locate` for many positions, never failing: nulls where it cannot say (or the route is not there). */
export async function locateAll(locate, positions) {
  const out = [];
  for (let at = 0; at < positions.length; at += MAX_LOCATE) {
    const part = positions.slice(at, at + MAX_LOCATE);
    let mapped = null;
    try {
      mapped = locate ? await Promise.race([locate(part), new Promise((resolve) => setTimeout(resolve, LOCATE_MS, null))])
        : null;
    } catch {
      mapped = null; // a daemon without the route, or one that refused: nothing mapped
    }
    part.forEach((_, i) => {
      const m = Array.isArray(mapped) ? mapped[i] : null;
      out.push(m && typeof m.file === "string" ? m : null); // a file with no line stays one (Vue's components)
    });
  }
  return out;
}

/** "src/Cart.jsx:42" */
export const placeText = (p) => (p.line ? `${p.file}:${p.line}` : p.file);

// ---- the element --------------------------------------------------------------------------------

/** Everything of pageContextText, resolved now (the element may change or go afterwards).
 *  `frameworkInfo` stands in for frameworks.js's (the tests of a page without a framework build). */
export async function describeElement(element, { locate, frameworkInfo } = {}) {
  const info = (frameworkInfo || await loadFrameworks())(element) || NO_FRAMEWORK;
  const source = positionOf(info.source);
  const components = (Array.isArray(info.components) ? info.components : [])
    .filter((c) => c && typeof c.name === "string" && c.name);
  const asked = [source, ...components.map(positionOf)];
  const wanted = asked.filter(Boolean);
  const mapped = wanted.length ? await locateAll(locate, wanted) : [];
  let next = 0;
  const resolved = asked.map((p) => (p ? mapped[next++] : null));
  const rect = element.getBoundingClientRect();
  return {
    url: location.href,
    selector: selectorFor(element),
    tag: element.localName,
    id: element.id || "",
    classes: [...element.classList],
    role: roleOf(element),
    name: accessibleName(element),
    text: visibleText(element),
    html: redactedHTML(element),
    box: { x: Math.round(rect.left + window.scrollX), y: Math.round(rect.top + window.scrollY),
           width: Math.round(rect.width), height: Math.round(rect.height) },
    source: resolved[0] ? { file: resolved[0].file, line: resolved[0].line,
                            ...(Number.isFinite(resolved[0].column) ? { column: resolved[0].column } : {}) } : null,
    components: components.map((c, i) => (resolved[i + 1]
      ? { name: c.name, file: resolved[i + 1].file, line: resolved[i + 1].line } : { name: c.name })),
    framework: info.framework || null,
  };
}

/** "button#checkout.primary" */
export function elementLabel(ctx, classes = 3) {
  return ctx.tag + (ctx.id ? `#${ctx.id}` : "") + (ctx.classes || []).slice(0, classes).map((c) => `.${c}`).join("");
}

/** One "[Page context]" section for an element (see the top of this file). */
export function pageContextText(ctx) {
  const what = [ctx.role ? `role ${ctx.role}` : "", ctx.name ? `name "${ctx.name}"` : ""].filter(Boolean).join(", ");
  const lines = ["[Page context]", `Page: ${ctx.url}`, `Element: ${elementLabel(ctx)}${what ? ` (${what})` : ""}`,
                 `Selector: ${ctx.selector}`];
  if (ctx.source) lines.push(`Source: ${placeText(ctx.source)}`);
  if (ctx.components?.length) {
    lines.push(`Components: ${ctx.components.map((c) => (c.file ? `${c.name} (${placeText(c)})` : c.name)).join(" < ")}`);
  }
  if (ctx.box) lines.push(`Box: ${ctx.box.width}×${ctx.box.height} at (${ctx.box.x}, ${ctx.box.y})`);
  if (ctx.text) lines.push(`Text: ${ctx.text}`);
  if (ctx.html) lines.push(`HTML: ${ctx.html}`);
  return lines.join("\n");
}
