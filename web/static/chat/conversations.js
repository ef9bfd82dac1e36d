// The conversation controls under the session picker: Rename, Delete (asked first; devhostd
// removes it everywhere, as the core's chat.kill does), Export (a Markdown download devhostd
// writes from its record of the conversation, not only the tail the panel has: its newest 5,000
// items, saying so when it is longer), and a search over the titles and text of this checkout's conversations, whose results open the conversation.

import { api, devhostURL } from "./api.js";
import { el } from "./dom.js";

const SEARCH_WAIT_MS = 250; // typing a word asks once, not once a letter
const NONE_YET = "Start a conversation first: there is none open yet";

export class ConversationControls {
  /** ``panel``: the Panel (its session, store, sessions list, attach and detach). */
  constructor(panel) {
    this.panel = panel;
    this.searchTimer = null;
    this.asked = 0; // the newest search sent: an older answer arriving late is dropped
    const button = (label, text, onclick) => el("button", { type: "button", class: "plain", "aria-label": label, title: label, onclick }, text);
    this.ui = {
      rename: button("Rename conversation", "Rename", () => this.startRename()),
      remove: button("Delete conversation", "Delete", () => this.askDelete()),
      export: button("Export conversation", "Export", () => this.exportNow()),
      search: el("input", { type: "search", class: "conversation-search", "aria-label": "Search conversations",
                            title: "Search the titles and text of this checkout's conversations",
                            placeholder: "Search conversations", oninput: () => this.searchSoon(),
                            onkeydown: (event) => { if (event.key === "Escape") { event.preventDefault(); this.clearSearch(); } } }),
      results: el("div", { class: "search-results", role: "list", "aria-label": "Conversations found", hidden: true }),
      renameForm: el("form", { class: "rename-form", hidden: true, onsubmit: (event) => { event.preventDefault(); this.saveRename(); } }),
      confirm: el("div", { class: "confirm-delete", role: "alertdialog", "aria-label": "Delete this conversation?", hidden: true }),
    };
    this.ui.row = el("div", { class: "row conversation-tools" }, this.ui.search, this.ui.rename, this.ui.remove, this.ui.export);
    this.ui.below = [this.ui.renameForm, this.ui.confirm, this.ui.results];
  }

  /** Enabled only with a conversation open; a disabled control says why in its tooltip. */
  render() {
    const session = this.panel.session;
    for (const [control, label] of [[this.ui.rename, "Rename conversation"], [this.ui.remove, "Delete conversation"],
                                    [this.ui.export, "Export conversation"]]) {
      control.disabled = !session;
      control.title = session ? label : `${label}: ${NONE_YET}`;
    }
    // A rename or a delete asked for one conversation never applies to the next one opened.
    if (session?.id !== this.shownFor) this.closeForms();
    this.shownFor = session?.id;
  }

  closeForms() {
    this.ui.renameForm.hidden = true;
    this.ui.confirm.hidden = true;
  }

  // ---- rename ------------------------------------------------------------------------------

  startRename() {
    const session = this.panel.session;
    if (!session) return;
    this.closeForms();
    const input = el("input", { type: "text", name: "title", maxlength: "120", value: session.title || "",
                                "aria-label": "Conversation name", title: "The name the conversation list shows",
                                onkeydown: (event) => { if (event.key === "Escape") { event.preventDefault(); this.closeForms(); } } });
    this.ui.renameForm.replaceChildren(input,
      el("button", { type: "submit", class: "plain", title: "Save the new name" }, "Save"),
      el("button", { type: "button", class: "plain", title: "Keep the name it has", onclick: () => this.closeForms() }, "Cancel"));
    this.ui.renameForm.hidden = false;
    input.focus();
    input.select();
  }

  async saveRename() {
    const session = this.panel.session;
    const title = this.ui.renameForm.querySelector("input").value;
    if (!session) return;
    try {
      const record = await api.renameSession(session.id, this.panel.store.state.target, title);
      this.closeForms();
      this.panel._setSession(record); // the list and the picker show the new name
    } catch (error) {
      this.panel.hint(`The conversation was not renamed: ${error.message}`);
    }
  }

  // ---- delete ------------------------------------------------------------------------------

  askDelete() {
    const session = this.panel.session;
    if (!session) return;
    this.closeForms();
    const name = session.title || "Untitled conversation";
    this.ui.confirm.replaceChildren(
      el("div", {}, `Delete “${name}”? It goes from every list and from devhostd's disk, its CLI is ended, `
        + "and it cannot be brought back."),
      el("div", { class: "buttons" },
        el("button", { type: "button", class: "deny", title: "Delete it for good", onclick: () => this.confirmDelete(session) }, "Delete"),
        el("button", { type: "button", class: "plain", title: "Keep the conversation", onclick: () => this.closeForms() }, "Keep it")));
    this.ui.confirm.hidden = false;
    this.ui.confirm.querySelector("button.plain").focus(); // the safe answer is the default one
  }

  async confirmDelete(session) {
    try {
      await api.deleteSession(session.id, this.panel.store.state.target);
    } catch (error) {
      this.panel.hint(`The conversation was not deleted: ${error.message}`);
      return;
    }
    this.closeForms();
    if (this.panel.session?.id === session.id) this.panel.detach();
    await this.panel._refreshSessions();
    this.panel._renderControls();
  }

  // ---- export --------------------------------------------------------------------------------

  exportNow() {
    const session = this.panel.session;
    if (!session) return;
    // A download link of devhostd's own (it answers as an attachment): the page stays as it is.
    const link = el("a", { href: devhostURL(api.exportPath(session.id, this.panel.store.state.target)), download: "", hidden: true });
    this.panel.root.append(link);
    link.click();
    link.remove();
  }

  // ---- search --------------------------------------------------------------------------------

  searchSoon() {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => this.search(), SEARCH_WAIT_MS);
  }

  clearSearch() {
    this.ui.search.value = "";
    this.ui.results.hidden = true;
    this.ui.results.replaceChildren();
  }

  async search() {
    const query = this.ui.search.value.trim();
    const asked = ++this.asked;
    if (!query) return this.clearSearch();
    let found;
    try {
      found = await api.searchSessions(this.panel.store.state.target, query);
    } catch (error) {
      found = null;
      this.panel.hint(`The search failed: ${error.message}`);
    }
    if (asked !== this.asked || found === null) return;
    this.ui.results.hidden = false;
    const unread = found.truncated
      ? el("div", { class: "muted", role: "listitem" }, "Older conversations were not searched: a search reads the newest 20,000 messages and tool calls.")
      : null;
    if (!found.sessions.length) {
      this.ui.results.replaceChildren(el("div", { class: "muted", role: "listitem" }, `No conversation has “${query}”.`),
                                      ...(unread ? [unread] : []));
      return;
    }
    this.ui.results.replaceChildren(...found.sessions.map((hit) => el("div", { role: "listitem" },
      el("button", { type: "button", class: "search-hit", title: `Open “${hit.title || "Untitled conversation"}”`,
                     onclick: () => { this.clearSearch(); this.panel.pickSession(hit.id); } },
        el("strong", {}, hit.title || "Untitled conversation"),
        hit.excerpt ? el("span", { class: "excerpt" }, hit.excerpt) : null))), ...(unread ? [unread] : []));
  }
}
