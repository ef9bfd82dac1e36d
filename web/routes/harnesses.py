"""The CLIs a page may chat with here, their models (actors/harness_catalog.py) and the accounts
each can run under (the manifest's, beside the CLI's default: actors/provider_list.py)."""
from __future__ import annotations

import bottle

from actors.harness import provider_of
from web import edge
from web.edge import json_answer, refusals_as_json

MODELS_TIMEOUT = 45.0  # each CLI is started to list its models, at the same time


def install(app, context) -> None:
    request = bottle.request

    @app.get("/__devhost__/chat/harnesses")
    @refusals_as_json
    def harnesses():
        directory = edge.page_directory(context, request.environ, request.query.get("pageURL"),
                                        request.query.get("chatTarget"))
        manifest = context.manifests.current()
        listed = edge.ask(context.catalog.harnesses(manifest.commands, directory), MODELS_TIMEOUT)
        providers = {entry["id"]: entry for entry in edge.ask(context.registry.providers())}
        measured = edge.ask(context.registry.agents_measured())
        return json_answer({"harnesses": [with_accounts(with_measured(entry, measured.get(entry["id"])),
                                                        providers.get(provider_of(entry["id"])))
                                          for entry in listed]})


def with_measured(entry: dict, abilities: dict | None) -> dict:
    """An ACP agent's entry with what its sessions measured (storage/agent_abilities.py): its
    abilities, and its models where the listing learned none (ACP names models only inside a
    session, and the listing opens none: it would leave an empty conversation in the agent's own
    history each time). Before its first session an agent lists no models: it runs its own
    default."""
    if abilities is None:
        return entry
    models = entry["models"] or [{"id": m["id"], "label": m.get("label") or m["id"], "description": ""}
                                 for m in abilities.get("models") or [] if isinstance(m, dict) and "id" in m]
    return {**entry, "models": models, "abilities": {k: v for k, v in abilities.items() if k != "models"}}


def with_accounts(entry: dict, provider: dict | None) -> dict:
    """A harness's entry with ``accounts`` ({name, signedIn}; name null for the CLI's default
    home: no config home goes to the page) and ``account``, the one a new conversation gets (the
    last picked while the manifest still names it)."""
    accounts = [{"name": a["name"], "signedIn": a["signedIn"]} for a in (provider or {}).get("accounts", [])]
    last = (provider or {}).get("lastAccount")
    return {**entry, "accounts": accounts or [{"name": None, "signedIn": False}],
            "account": last if any(a["name"] == last for a in accounts) else None}
