"""actors.harness.acp.abilities: what an ACP agent advertised (OpenCode 1.18.33's initialize and
session/new, recorded), and what it did taking an advertisement back."""
from actors.harness.acp import abilities as ab
from tests.unit.acp_frames import agent_frames


def advertised():
    return ab.from_initialize(agent_frames("basic")[0]["result"])


def test_initialize_says_what_the_agent_can_do():
    found = advertised()
    assert (found.protocol_version, found.agent_name, found.agent_version) == (1, "OpenCode", "1.18.33")
    assert found.load_session and found.images and found.embedded_context and not found.audio
    assert found.auth_methods == ("opencode-login",)
    assert found.record() == {"loadSession": True, "images": True, "audio": False, "embeddedContext": True,
                              "seen": {}, "agent": {"name": "OpenCode", "version": "1.18.33"}}


def test_session_new_gives_models_and_modes_by_config_options():
    found = ab.with_session(advertised(), agent_frames("basic")[1]["result"])
    assert found.model == "mock/gpt-5.5" and "mock/gpt-5.5" in {m.id for m in found.models}
    assert found.model_selector == ab.Selector("session/set_config_option", "model")
    assert [m.id for m in found.modes] == ["build", "plan"] and found.mode == "build"
    assert found.mode_selector == ab.Selector("session/set_config_option", "mode")


def test_the_older_models_and_modes_fields_are_read_too():  # Gemini CLI 0.61.0's session/new shape (measured)
    found = ab.with_session(ab.Abilities(), {
        "sessionId": "s", "modes": {"availableModes": [{"id": "default", "name": "Default"},
                                                       {"id": "plan", "name": "Plan"}], "currentModeId": "default"},
        "models": {"availableModels": [{"modelId": "auto", "name": "Auto"}], "currentModelId": "auto"}})
    assert found.mode_selector == ab.Selector("session/set_mode") and found.mode == "default"
    assert found.model_selector == ab.Selector("session/set_model") and found.model == "auto"


def test_what_the_agent_did_takes_an_ability_back_and_never_grants_one():
    found = advertised()
    assert not ab.did(found, "image-refused").images
    assert not ab.did(found, "load-refused").load_session
    assert ab.did(ab.Abilities(), "anything") == ab.Abilities()


def test_anything_malformed_reads_as_absent():
    assert ab.from_initialize(None) == ab.Abilities()
    assert ab.from_initialize({"agentCapabilities": {"loadSession": "yes", "promptCapabilities": []}}) \
        == ab.Abilities()
    assert ab.with_session(ab.Abilities(), {"configOptions": [{"id": 3}, "x"]}) == ab.Abilities()


def test_updates_change_the_current_values():
    found = ab.with_session(advertised(), agent_frames("basic")[1]["result"])
    assert ab.with_mode(found, "plan").mode == "plan"
    commands = agent_frames("basic")[2]["params"]["update"]["availableCommands"]
    assert "review" in ab.with_commands(found, commands).commands


def test_what_the_agent_is_seen_doing_is_recorded_beside_what_it_advertised():
    found = ab.observed(ab.observed(advertised(), "cancel", True), "images", False)
    assert found.record()["seen"] == {"cancel": True, "images": False}
    assert found.images  # seen refusing once is a sighting; `did` is what takes the ability back
    # The last sight wins; the same sight again changes nothing.
    again = ab.observed(found, "cancel", False)
    assert again.record()["seen"] == {"cancel": False, "images": False}
    assert ab.observed(again, "cancel", False) is again
    assert set(ab.OBSERVED) == {"loadSession", "images", "cancel", "permissionRequests"}
