// What the agent may do without asking: devhostd's runtime modes (actors/harness/modes.py) and
// Plan, in a person's words, and the command that picks one. Pure: no DOM, no socket.

import { harnessLabel } from "./harnesses.js";

/** The switch's options, narrowest first; Plan last (it is a way of working, not a width). */
export const MODES = [
  { id: "supervised", label: "Ask", line: "Asks you before every file edit and every command." },
  { id: "auto-accept-edits", label: "Accept edits", line: "Edits files in this checkout without asking; asks before commands." },
  { id: "auto", label: "Auto", line: "The CLI's own automatic mode: routine steps go, risky ones ask." },
  { id: "full-access", label: "Full access", line: "Edits and runs anything without asking you." },
  { id: "plan", label: "Plan", line: "Only plans: proposes a plan for you to approve before it changes anything." },
];
export const RUNTIME_MODES = MODES.filter((m) => m.id !== "plan").map((m) => m.id);
export const SESSION_DEFAULT = "supervised"; // until the person picks one for the checkout
export const AFTER_PLAN_DEFAULT = "auto-accept-edits"; // a plan approved goes on in this, unless another was picked

// What a CLI under each mode lets go, in the fewest words.
const EFFECT = { supervised: "edits and commands ask", "auto-accept-edits": "edits go, commands ask",
                 auto: "edits and sandboxed commands go, the rest asks", "full-access": "nothing asks" };

export function modeOf(id) {
  return MODES.find((m) => m.id === id) || MODES[0];
}

/** The mode the switch shows for a chat's info (or a session's record): Plan while it plans. */
export function shownMode(info) {
  if (info?.permissionMode === "plan") return "plan";
  return RUNTIME_MODES.includes(info?.runtimeMode) ? info.runtimeMode : SESSION_DEFAULT;
}

/** The configure frame for a pick (the same command sets the mode and says whether to plan). */
export function configureFrame(id) {
  return id === "plan" ? { type: "configure", plan: true } : { type: "configure", runtimeMode: id, plan: false };
}

/**
 * What the CLI actually runs under when it is narrower than asked, and why, or "" when it runs
 * as asked. Only Codex has an automatic mode devhostd can use: Claude Code's own refused every
 * step when measured (tests/fixtures/modes/README.md), and an ACP agent has no sandbox, so
 * devhostd answers its requests as under Accept edits (actors/harness/acp/protocol.py). Any other
 * difference is a mode the running CLI takes only with the next message (Claude Code: started
 * anew for it).
 */
export function effectiveNotice(harness, asked, effective) {
  if (!asked || !effective || asked === effective || !EFFECT[effective]) return "";
  const cli = harnessLabel(harness, "The CLI");
  if (harness !== "codex" && asked === "auto") return `${cli} has no automatic mode here: ${EFFECT[effective]}.`;
  // Claude Code takes bypassPermissions and --allowedTools only at its start; Codex takes a mode at its next turn.
  const why = harness === "claude-code" ? " (it has to start again for it)" : "";
  return `${cli} gets ${modeOf(asked).label} from your next message${why}: until then ${EFFECT[effective]}.`;
}
