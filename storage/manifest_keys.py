"""Which keys ``devhost.toml`` knows, and what to say about one it does not.

A misspelled key (``upstrem``) is otherwise silently ignored: the daemon starts, the service has
no dev server behind it, and nothing says why. Unknown keys are warnings, not errors, so an older
devhostd still starts on a manifest written for a newer one; each warning names the key, its
table, and the closest key devhostd knows there.
"""
from __future__ import annotations


from storage.manifest_agents import ACP_KEYS

# Each table's known keys; a nested dict is a table of known sub-tables, "*" any name (its
# value the keys every such table knows). [accounts] is checked by storage/accounts.py.
SCHEMA = {
    "name": None,
    "services": {"*": {"host": None, "root": None, "upstream": None}},
    "devtools": {"chat": {"prompt": None, "idle_cli_minutes": None,
                          "claude-code": {"command": None}, "codex": {"command": None}}},
    "core": {"resume_interrupted_turns": None, "resume_at_reset": None},
    "accounts": None,
}


def unknown_keys(data: dict, path: str, agents=()) -> list[str]:
    """One warning per key of ``data`` the schema does not know, in the file's order. ``agents``:
    the names of the [devtools.chat.<id>] tables that are ACP agents' (storage/manifest_agents.py)."""
    warnings: list[str] = []
    schema = SCHEMA
    if agents:
        chat = {**SCHEMA["devtools"]["chat"], **{name: dict.fromkeys(ACP_KEYS) for name in agents}}
        schema = {**SCHEMA, "devtools": {**SCHEMA["devtools"], "chat": chat}}
    _walk(data, schema, [], path, warnings)
    return warnings


def _walk(table: dict, schema: dict, where: list[str], path: str, warnings: list[str]) -> None:
    for key, value in table.items():
        if "*" in schema:
            known = schema["*"]
        elif key in schema:
            known = schema[key]
        else:
            warnings.append(unknown_key_warning(path, where, key, list(schema)))
            continue
        if isinstance(known, dict) and isinstance(value, dict):
            _walk(value, known, [*where, key], path, warnings)


def unknown_key_warning(path: str, where: list[str], key: str, known: list[str]) -> str:
    table = f"[{'.'.join(where)}]" if where else "the top level"
    import difflib  # only for a misspelling: not at every start
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    home = _HOMES.get(key)
    if close:
        fix = f"did you mean `{close[0]}`?"
    elif home:  # a known key in the wrong table, such as `prompt` at the top level
        fix = f"`{key}` belongs " + " or ".join(f"in [{h}]" if h else "at the top level" for h in home)
    else:
        fix = f"the keys {table} knows are {', '.join(f'`{k}`' for k in known)}"
    return f"{path}: {table}: unknown key `{key}` is ignored: {fix}"


def _homes(schema: dict, where: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Each known key -> the tables it belongs in ("" the top level; "services.<name>" for "*")."""
    found: dict[str, list[str]] = {}
    for key, known in schema.items():
        if key != "*":
            found.setdefault(key, []).append(".".join(where))
        if isinstance(known, dict):
            for inner, homes in _homes(known, (*where, "<name>" if key == "*" else key)).items():
                found.setdefault(inner, []).extend(homes)
    return found


_HOMES = _homes(SCHEMA)


def hint_for_missing(table: dict, wanted: str) -> str:
    """For a required key that is missing: the key written in its place, if one looks like it."""
    present = [k for k in table if isinstance(k, str) and k != wanted]
    import difflib
    close = difflib.get_close_matches(wanted, present, n=1, cutoff=0.6)
    return f" (`{close[0]}` here looks like a misspelling of `{wanted}`)" if close else ""
