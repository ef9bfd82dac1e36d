// The composer's completion sources (what "/" and "@" list) and what a message refers to.
// A file picked with "@" goes as the CLI's own file reference (the send's `mentions`: Claude
// Code gets `@path`, which it reads itself; Codex the path), not only as text; a skill picked
// with "/" as the CLI's own skill (`skills`: Claude Code's slash command, Codex's skill item).

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
  return names.map((name) => ({ value: name, detail: described.get(name) || "slash command", skill: described.has(name) }));
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

export class References {
  constructor() {
    this.picked = new Set(); // paths picked with "@"
    this.skill = null; // the skill picked with "/"
  }

  /** A completion picked: a file is mentioned, a skill named (a slash command stays text). */
  pick(kind, entry) {
    if (kind === "file") this.picked.add(entry.value);
    else this.skill = entry.skill ? entry.value : null;
  }

  /** The message as sent: a picked skill still at its start leaves the text for the send's
      `skills`; each picked `@path` still in it becomes `path`, and a mention of the send (the CLI
      adds its own reference; the text reads as written, without a doubled one). */
  take(text) {
    const mentions = [];
    let said = text;
    const skill = this.skill && new RegExp(`^/${escaped(this.skill)}(?:\\s+|$)`).exec(said);
    if (skill) said = said.slice(skill[0].length);
    for (const path of this.picked) {
      const pattern = new RegExp(`(^|\\s)@${escaped(path)}(?=\\s|$)`, "g");
      if (!pattern.test(said)) continue;
      mentions.push(path);
      said = said.replace(pattern, (_, space) => `${space}${path}`);
    }
    // `shown`: what the message's bubble says, the skill named as typed (the transcript shows it so too)
    return { text: said, shown: skill ? `/${this.skill} ${said}`.trimEnd() : said, mentions,
             skills: skill ? [this.skill] : [] };
  }

  /** A send went out: what it referred to is no longer waiting. */
  sent({ mentions, skills }) {
    for (const path of mentions) this.picked.delete(path);
    if (skills.length) this.skill = null;
  }
}

function escaped(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
