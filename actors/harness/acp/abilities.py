"""What an ACP agent can do, as devhostd records it: first what it advertised (``initialize``'s
``agentCapabilities``, ``session/new``'s modes, models and config options), then corrected by
what it did. Pure: dicts in, a frozen record out.

The correction matters because an advertisement is not a promise kept: OpenCode 1.18.33
advertises ``promptCapabilities.image`` whatever its model can read, and a model whose config
lacks image input gets the picture replaced by an "ERROR: Cannot read" text (measured:
tests/fixtures/acp/opencode/README.md). So ``did`` can take an ability back (a refused
session/load, a refused image prompt) and never grants one the agent did not advertise.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Choice:
    """One value of a selectable setting (a model, an agent's own mode)."""
    id: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class Selector:
    """How a setting is changed: ``method`` is ``session/set_mode``, ``session/set_model`` or
    ``session/set_config_option`` (then ``config_id`` names the option)."""
    method: str
    config_id: str | None = None


@dataclass(frozen=True)
class Abilities:
    protocol_version: int | None = None
    agent_name: str | None = None
    agent_version: str | None = None
    load_session: bool = False
    images: bool = False
    audio: bool = False
    embedded_context: bool = False
    auth_methods: tuple[str, ...] = ()  # the ids of the ways it says it can log in
    # Known once a session is open (session/new or session/load answered):
    models: tuple[Choice, ...] = ()
    model: str | None = None  # the session's current model
    model_selector: Selector | None = None
    modes: tuple[Choice, ...] = ()  # the agent's own modes (OpenCode: build, plan)
    mode: str | None = None
    mode_selector: Selector | None = None
    commands: tuple[str, ...] = ()  # available_commands_update's names
    # What the agent was seen to do, by ability (OBSERVED's keys): True done as asked, False
    # not; absent until it came up. Beside what it advertised, never instead of it.
    seen: tuple[tuple[str, bool], ...] = ()

    def record(self) -> dict:
        """The abilities as the chat's info records them (only what is known): ``advertised``
        what initialize said, ``seen`` what it then did (OBSERVED)."""
        out = {"loadSession": self.load_session, "images": self.images, "audio": self.audio,
               "embeddedContext": self.embedded_context, "seen": dict(self.seen)}
        if self.agent_name:
            out["agent"] = {"name": self.agent_name, **({"version": self.agent_version} if self.agent_version else {})}
        if self.models:
            out["models"] = [{"id": m.id, "label": m.label} for m in self.models]
        if self.modes:
            out["modes"] = [{"id": m.id, "label": m.label, "description": m.description} for m in self.modes]
        return out


def _flag(value) -> bool:
    return value is True  # a capability is on only when said so: "yes", 1 or {} are not true


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def from_initialize(result) -> Abilities:
    """The abilities ``initialize``'s result advertises (anything malformed reads as absent)."""
    result = result if isinstance(result, dict) else {}
    caps = result.get("agentCapabilities") if isinstance(result.get("agentCapabilities"), dict) else {}
    prompt = caps.get("promptCapabilities") if isinstance(caps.get("promptCapabilities"), dict) else {}
    info = result.get("agentInfo") if isinstance(result.get("agentInfo"), dict) else {}
    methods = result.get("authMethods") if isinstance(result.get("authMethods"), list) else []
    version = result.get("protocolVersion")
    return Abilities(
        protocol_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        agent_name=_text(info.get("title")) or _text(info.get("name")), agent_version=_text(info.get("version")),
        load_session=_flag(caps.get("loadSession")), images=_flag(prompt.get("image")),
        audio=_flag(prompt.get("audio")), embedded_context=_flag(prompt.get("embeddedContext")),
        auth_methods=tuple(m["id"] for m in methods if isinstance(m, dict) and isinstance(m.get("id"), str)))


def _choices(entries, id_key: str, label_key: str = "name") -> tuple[Choice, ...]:
    return tuple(Choice(e[id_key], _text(e.get(label_key)) or e[id_key], _text(e.get("description")) or "")
                 for e in entries if isinstance(e, dict) and isinstance(e.get(id_key), str)) \
        if isinstance(entries, list) else ()


def with_session(abilities: Abilities, result) -> Abilities:
    """What session/new or session/load answered: the session's models and the agent's modes,
    by whichever of the schema's forms the agent uses. ``configOptions`` (category ``model`` /
    ``mode``, set by session/set_config_option: OpenCode) win over the older ``models``
    (session/set_model, unstable) and ``modes`` (session/set_mode: Gemini CLI)."""
    result = result if isinstance(result, dict) else {}
    changes: dict = {}
    models, modes = result.get("models"), result.get("modes")
    if isinstance(models, dict):
        changes.update(models=_choices(models.get("availableModels"), "modelId"),
                       model=_text(models.get("currentModelId")), model_selector=Selector("session/set_model"))
    if isinstance(modes, dict):
        changes.update(modes=_choices(modes.get("availableModes"), "id"), mode=_text(modes.get("currentModeId")),
                       mode_selector=Selector("session/set_mode"))
    changes.update(_config_options(result.get("configOptions")))
    return replace(abilities, **changes)


def _config_options(options) -> dict:
    changes: dict = {}
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict) or option.get("type") != "select" or not isinstance(option.get("id"), str):
            continue
        category = option.get("category")
        if category not in ("model", "mode"):
            continue
        choices = _choices(option.get("options"), "value")
        current = _text(option.get("currentValue"))
        if category == "model":
            changes.update(models=choices, model=current, model_selector=Selector("session/set_config_option",
                                                                                  option["id"]))
        else:
            changes.update(modes=choices, mode=current, mode_selector=Selector("session/set_config_option",
                                                                               option["id"]))
    return changes


def with_config_options(abilities: Abilities, options) -> Abilities:
    """A config_option_update (or a session/set_config_option answer): the new current values."""
    changes = _config_options(options)
    return replace(abilities, **changes) if changes else abilities


def with_mode(abilities: Abilities, mode_id) -> Abilities:
    """A current_mode_update: the agent's mode changed (by itself, or as asked)."""
    return replace(abilities, mode=mode_id) if isinstance(mode_id, str) and mode_id else abilities


def with_commands(abilities: Abilities, commands) -> Abilities:
    names = tuple(c["name"] for c in commands if isinstance(c, dict) and isinstance(c.get("name"), str)) \
        if isinstance(commands, list) else ()
    return replace(abilities, commands=names)


# What an agent can be seen doing, and what each means when seen (True) or not (False).
OBSERVED = {
    "loadSession": "session/load reopened a saved conversation (False: it failed)",
    "images": "a prompt with an image was taken (False: refused)",
    "cancel": "session/cancel ended the prompt as cancelled (False: it ran on to its end)",
    "permissionRequests": "it asked permission through session/request_permission",
}


def observed(abilities: Abilities, what: str, done: bool) -> Abilities:
    """The agent was seen doing ``what`` (an OBSERVED key) or failing to: the last sight wins."""
    seen = dict(abilities.seen)
    if seen.get(what) is done:
        return abilities
    seen[what] = done
    return replace(abilities, seen=tuple(sorted(seen.items())))


def did(abilities: Abilities, what: str) -> Abilities:
    """What the agent did takes an advertised ability back: ``"load-refused"`` (session/load
    failed on a session it should have had), ``"image-refused"`` (a prompt with an image was
    refused as invalid). Never grants anything."""
    if what == "load-refused":
        return replace(abilities, load_session=False)
    if what == "image-refused":
        return replace(abilities, images=False)
    return abilities
