// A message that never reached the model: a follow-up queued behind a turn the person
// interrupted, which the CLI drops unsent (Claude Code cancels its queued input; Codex discards
// input steered in but not taken up). Nothing is lost: the message reads "not sent" — the chat's
// item says so, for every page and after a reload — and can be sent again or taken back into the
// composer to edit. It is never sent again by itself: the person interrupted, and decides.

import { el } from "./dom.js";

/** The buttons under such a message (none once it went out again from this page). */
export function notSentActions(item, actions) {
  if (item.delivery.state !== "not-sent" || item.resent) return null;
  return el("span", { class: "not-sent-actions" },
    el("button", { type: "button", class: "plain send-again", title: "Send this message again, as it is",
                   onclick: () => actions.sendAgain(item) }, "Send again"),
    el("button", { type: "button", class: "plain edit-again", title: "Put this message back in the composer to edit it",
                   onclick: () => actions.editAgain(item) }, "Edit"));
}
