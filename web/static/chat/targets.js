// What the chat target select means. Someone running devhostd from a clone of its source has two
// checkouts within reach: this page's (target "project") and devhostd's own ("devhost"). The line
// under the header says, in words and with the folder, where the agent works for the target picked.

const WORDS = {
  project: (folder) => `Works in ${folder}: this page's checkout (target "project").`,
  devhost: (folder) => `Works in ${folder}: devhostd's own source, not this page (target "devhost").`,
};

/** Fills the select's tooltips and the visible line for ``target``; folders: {project, devhost}. */
export function describeTarget(select, line, target, folders) {
  for (const option of select.options) {
    if (!option.disabled) option.title = WORDS[option.value]?.(folders[option.value] || "its checkout") || "";
  }
  const text = (WORDS[target] || WORDS.project)(folders[target] || folders.project || "this page's checkout");
  line.textContent = text;
  select.title = `Whose checkout the agent works in. ${text}`;
}
