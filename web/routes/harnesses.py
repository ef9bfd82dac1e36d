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
        return json_answer({"harnesses": [with_accounts(entry, providers.get(provider_of(entry["id"])))
                                          for entry in listed]})


def with_accounts(entry: dict, provider: dict | None) -> dict:
    """A harness's entry with ``accounts`` ({name, signedIn}; name null for the CLI's default
    home: no config home goes to the page) and ``account``, the one a new conversation gets (the
    last picked while the manifest still names it)."""
    accounts = [{"name": a["name"], "signedIn": a["signedIn"]} for a in (provider or {}).get("accounts", [])]
    last = (provider or {}).get("lastAccount")
    return {**entry, "accounts": accounts or [{"name": None, "signedIn": False}],
            "account": last if any(a["name"] == last for a in accounts) else None}
