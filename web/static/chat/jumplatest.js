// "Jump to latest": a person who scrolled up to read stays where they are while the agent goes
// on writing below (the view follows only from the bottom), so a pill says there is more
// below; clicking it goes to the end. It goes away once the end is in view, however reached.

import { el } from "./dom.js";

export class JumpToLatest {
  /** ``view``: the ConversationView (atBottom, scrollToBottom, and its scroller). */
  constructor(view) {
    this.view = view;
    this.button = el("button", { type: "button", class: "jump-latest", hidden: true, "aria-label": "Jump to latest",
                                 title: "New messages below: scroll to the newest",
                                 onclick: () => { this.view.scrollToBottom(); this.hide(); } }, "↓ Jump to latest");
    view.scroller.addEventListener("scroll", () => { if (this.view.atBottom()) this.hide(); });
  }

  /** New content arrived while the person was not at the bottom. */
  show() {
    this.button.hidden = false;
  }

  hide() {
    this.button.hidden = true;
  }
}
