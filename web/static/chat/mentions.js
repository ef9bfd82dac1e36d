// The composer's completion sources (what "/" and "@" list) and the files a message mentions.
// A file picked with "@" goes as the CLI's own file reference (the send's `mentions`: Claude
// Code gets `@path`, which it reads itself; Codex the path), not only as text.

import { api } from "./api.js";

/** "/" lists the session's slash commands (its info, once its CLI said them) and its skills. */
export async function slashEntries(panel) {
  const commands = panel.transcript.info?.slashCommands || [];
  let skills = [];
  if (panel.session && panel.session.status !== "closed") {
    skills = await api.skills(panel.session.id, panel.store.state.target);
  }
  const described = new Map(skills.map((s) => [s.name, `${s.description || "skill"} (${s.source} skill)`]));
  const names = [...new Set([...commands, ...skills.map((s) => s.name)])];
  return names.map((name) => ({ value: name, detail: described.get(name) || "slash command" }));
}

/** "@" lists the files of the page's checkout (devhostd resolves which from the page). */
export async function fileEntries(panel) {
  const listed = await api.files(panel.store.state.target);
  return listed.files.map((path) => ({ value: path, detail: "" }));
}

export const EMPTY = {
  slash: "No slash command or skill matches. The CLI lists its commands once the conversation has started.",
  file: "No file of this checkout matches.",
};

export class Mentions {
  constructor() {
    this.picked = new Set(); // paths picked with "@"
  }

  add(path) {
    this.picked.add(path);
  }

  /** The message as sent: each picked `@path` still in the text becomes `path`, and a mention of
      the send (the CLI adds its own reference; the text reads as written, without a doubled one). */
  take(text) {
    const mentions = [];
    let said = text;
    for (const path of this.picked) {
      const pattern = new RegExp(`(^|\\s)@${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=\\s|$)`, "g");
      if (!pattern.test(said)) continue;
      mentions.push(path);
      said = said.replace(pattern, (_, space) => `${space}${path}`);
    }
    return { text: said, mentions };
  }

  /** A send went out: what it mentioned is no longer waiting. */
  sent(mentions) {
    for (const path of mentions) this.picked.delete(path);
  }
}
