// Which login of a CLI the agent runs under: the manifest's [accounts.<provider>.<name>] beside
// the CLI's own default. Pure: no DOM, no socket. The picker is shown only where there is a
// choice (a provider with more than one account).

/** An account's name in the picker: the manifest's name, or "Default" for the CLI's own home. */
export function accountLabel(account) {
  const name = account?.name ?? null;
  const label = name === null ? "Default" : name;
  return account && account.signedIn === false ? `${label} (not signed in)` : label;
}

/** The accounts a harness entry offers, or [] when there is nothing to choose between. */
export function accountChoices(harness) {
  const accounts = harness?.accounts || [];
  return accounts.length > 1 ? accounts : [];
}

/** The picker's value for an account name (a select's values are strings: "" is the default). */
export const accountValue = (name) => name ?? "";
export const accountName = (value) => (value === "" ? null : value);

/** What a change of account means while the conversation works: it waits (the settings swap). */
export function swapNotice(name, busy) {
  if (!busy) return "";
  return `Moves to the ${name === null ? "default" : `“${name}”`} account when the current work and open `
    + "requests finish; a message sent meanwhile waits for it.";
}
