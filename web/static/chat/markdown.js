// Replies rendered as the CLIs mean them: Markdown (marked), sanitized (DOMPurify), code
// highlighted (highlight.js), all pinned and vendored in ./vendor/ (web/refresh_vendor.sh).
//
// The panel lives inside the person's own page, so what a model or a tool writes must never run
// there: the HTML marked makes is sanitized before it reaches the DOM, with no scripts, no event
// handlers, no styles or forms, no javascript: links, and no images (an image a reply names
// would be fetched by the page: a way to send data out). Links open in a new tab.

import { Marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.mjs";
import hljs from "./vendor/highlight.min.js";
import { el } from "./dom.js";

const marked = new Marked({ gfm: true, breaks: false, async: false });
const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "img", "picture", "video", "audio", "source", "form", "input", "button", "textarea",
                "select", "iframe", "object", "embed", "svg", "math"],
  // Every attribute that makes the browser fetch a URL (or POST one, as a link's ping on a
  // click) is dropped: the tags left may carry them (a table's background) as well as images.
  FORBID_ATTR: ["style", "src", "srcset", "formaction", "action", "background", "poster", "ping", "lowsrc", "dynsrc",
                "longdesc", "srcdoc", "xlink:href"],
};
const MAX_HIGHLIGHT = 20_000; // characters: a longer block is shown plain (highlighting it would stall the page)

/** A node with ``text`` rendered as Markdown, safe to put in the panel. */
export function renderMarkdown(text) {
  const container = el("div", { class: "markdown" });
  container.innerHTML = DOMPurify.sanitize(marked.parse(text || ""), PURIFY);
  for (const link of container.querySelectorAll("a")) {
    link.setAttribute("target", "_blank");
    link.setAttribute("rel", "noopener noreferrer");
  }
  for (const code of container.querySelectorAll("pre > code")) {
    if (code.textContent.length <= MAX_HIGHLIGHT) {
      const language = [...code.classList].find((c) => c.startsWith("language-"))?.slice(9);
      if (!language || hljs.getLanguage(language)) hljs.highlightElement(code);
    }
    const pre = code.parentElement;
    pre.classList.add("code");
    pre.prepend(el("button", {
      type: "button", class: "copy", title: "Copy this code",
      onclick: (event) => copy(event.currentTarget, code.textContent),
    }, "Copy"));
  }
  return container;
}

/** ``text``'s words as Markdown means them, without its marks ("**", "```", "#", links' URLs):
 *  rendered and sanitized as a reply is, then read back as text, one space between blocks. */
export function plainText(text) {
  const container = document.createElement("div");
  container.innerHTML = DOMPurify.sanitize(marked.parse(text || ""), PURIFY);
  for (const block of container.querySelectorAll("p, h1, h2, h3, h4, h5, h6, li, pre, blockquote, tr, th, td, br")) {
    block.after(" ");
  }
  return container.textContent.replace(/\s+/g, " ").trim();
}

async function copy(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy";  // no clipboard permission on this page
  }
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}
