"""chat.setPreferences (web/core/preferences.py): a connected client's defaults for the chats it
creates; the newest changedAt of the connected clients wins, and goes with its client."""
import pytest

from actors.errors import ChatError
from web.core import preferences as prefs
from web.core.service import CoreService


def test_preferences_are_checked_and_say_what_to_change():
    assert prefs.read({"runtimeMode": "auto", "selections": {"codex": {"model": "gpt-x", "effort": "high"}},
                       "accounts": {"claude": "work"}, "changedAt": 5}) == {
        "runtimeMode": "auto", "selections": {"codex": {"model": "gpt-x", "effort": "high"}},
        "accounts": {"claude": "work"}, "changedAt": 5}
    for bad, said in (({"runtimeMode": "yolo"}, "`runtimeMode` must be one of"),
                      ({"terminalRuntimeMode": 3}, "`terminalRuntimeMode` must be one of"),
                      ({"selections": {"gemini": {"model": "g"}}}, "an object by provider"),
                      ({"selections": {"claude": {"model": 5}}}, "`selections.claude.model` must be a model id"),
                      ({"selections": {"claude": "opus"}}, "`selections.claude` is {model, …}"),
                      ({"accounts": {"codex": ""}}, "`accounts.codex` is an account's name"),
                      ({"changedAt": -1}, "`changedAt` is a time in ms")):
        with pytest.raises(ChatError, match=said.replace("{", r"\{").replace("}", r"\}")):
            prefs.read(bad)
    assert prefs.read({})["changedAt"] > 1_700_000_000_000  # unsaid: now


def test_the_newest_of_the_connected_clients_wins_and_leaves_with_its_client():
    held, one, two = prefs.Preferences(), object(), object()
    held.set(one, prefs.read({"runtimeMode": "supervised", "changedAt": 20}))
    held.set(two, prefs.read({"runtimeMode": "auto", "selections": {"codex": {"model": "gpt-x"}}, "changedAt": 10}))
    assert held.defaults_for({}) == {"runtimeMode": "supervised"}
    assert held.defaults_for({"provider": "codex"}) == {"runtimeMode": "supervised"}  # one's has no selection
    held.set(one, prefs.read({"runtimeMode": "full-access", "changedAt": 5}))  # older than its own: no change
    assert held.newest()["runtimeMode"] == "supervised"
    held.drop(one)
    assert held.defaults_for({"provider": "codex"}) == {"runtimeMode": "auto", "selection": {"model": "gpt-x"}}
    assert held.defaults_for({"provider": "codex", "runtimeMode": "full-access", "selection": {"model": None}}) == {}
    held.drop(two)
    assert held.defaults_for({}) == {}


def test_a_preferred_account_goes_to_a_create_of_its_provider_that_names_none():
    held = prefs.Preferences()
    held.set(object(), prefs.read({"accounts": {"codex": "work"}, "changedAt": 1}))
    assert held.defaults_for({"provider": "codex"}) == {"account": "work"}
    assert held.defaults_for({"provider": "codex", "account": None}) == {}  # null: the default, as asked
    assert held.defaults_for({"provider": "claude"}) == {}


def test_set_preferences_is_for_a_connected_client_only():
    answer = CoreService(registry=None, clients=None).handle(
        {"id": "1", "type": "chat.setPreferences", "payload": {"runtimeMode": "auto"}})
    assert answer["error"]["code"] == "bad-request" and "WebSocket" in answer["error"]["message"]


def test_send_refuses_bad_references_before_asking_any_chat():
    service = CoreService(registry=None, clients=None)
    answer = service.handle({"id": "1", "type": "chat.send", "payload": {"chatId": "c1", "text": "hi",
                                                                         "skills": ["a"] * 17}})
    assert answer["error"] == {"code": "bad-request", "message":
                               "`skills` is a list of at most 16 skill names, as skills.list gives them "
                               "(each 1..200 characters, no control characters)"}
    answer = service.handle({"id": "1", "type": "chat.send", "payload": {"chatId": "c1", "text": " "}})
    assert answer["error"]["message"] == "A message needs text, an attachment or a skill"
