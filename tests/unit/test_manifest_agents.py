"""storage.manifest_agents: the ACP agents a manifest names, as [devtools.chat.<id>] tables
with protocol = "acp", beside the two CLIs' own tables."""
import textwrap

import pytest

from storage.manifest import ManifestError, load_manifest
from storage.manifest_agents import AcpAgent

APP = """
    name = "shop"
    [services.app]
    host = "app.localhost"
    root = "."
"""


def write(tmp_path, tables: str) -> str:
    path = tmp_path / "devhost.toml"
    path.write_text(textwrap.dedent(APP) + textwrap.dedent(tables))
    return str(path)


def test_an_agents_table_names_its_harness_id_command_and_label(tmp_path):
    manifest = load_manifest(write(tmp_path, """
        [devtools.chat.gemini]
        protocol = "acp"
        command = ["gemini", "--experimental-acp"]
        label = "Gemini CLI"
        [devtools.chat.opencode]
        protocol = "acp"
        command = "opencode"
    """))
    assert manifest.agents == (AcpAgent("gemini", ("gemini", "--experimental-acp"), "Gemini CLI"),
                               AcpAgent("opencode", ("opencode",), "opencode"))
    # Its command is the harness's command, as the two CLIs' are.
    assert manifest.commands["gemini"] == ("gemini", "--experimental-acp")
    assert manifest.warnings == ()


def test_a_relative_executable_path_is_the_manifests_folders(tmp_path):
    manifest = load_manifest(write(tmp_path, """
        [devtools.chat.mine]
        protocol = "acp"
        command = ["./bin/agent", "acp"]
    """))
    assert manifest.agents[0].command == (str(tmp_path / "bin" / "agent"), "acp")


def test_a_misspelled_key_in_an_agents_table_is_a_warning_that_names_the_closest(tmp_path):
    manifest = load_manifest(write(tmp_path, """
        [devtools.chat.gemini]
        protocol = "acp"
        command = ["gemini"]
        lable = "Gemini"
    """))
    [warning] = manifest.warnings
    assert "[devtools.chat.gemini]: unknown key `lable` is ignored: did you mean `label`?" in warning


@pytest.mark.parametrize("table, said", [
    ('[devtools.chat.gemini]\nprotocol = "mcp"\ncommand = ["gemini"]', '`protocol` must be "acp"'),
    ('[devtools.chat.codex]\nprotocol = "acp"\ncommand = ["codex-acp"]', "`codex` is taken by a built-in harness"),
    ('[devtools.chat.claude]\nprotocol = "acp"\ncommand = ["claude-acp"]', "`claude` is taken by a built-in harness"),
    ('[devtools.chat.Gemini_CLI]\nprotocol = "acp"\ncommand = ["gemini"]', "lower-case letters, digits and dashes"),
    ('[devtools.chat.gemini]\nprotocol = "acp"', 'needs `command`: how the agent is started in ACP mode'),
    ('[devtools.chat.gemini]\nprotocol = "acp"\ncommand = []', "`command` must be a string or a list of strings"),
    ('[devtools.chat.gemini]\nprotocol = "acp"\ncommand = ["gemini"]\nlabel = ""', "`label` must be a short name"),
])
def test_a_table_that_cannot_be_an_agent_is_refused_saying_what_to_change(tmp_path, table, said):
    path = write(tmp_path, table)
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert str(caught.value).startswith(f"{path}: [devtools.chat.")
    assert said in str(caught.value)


def test_a_table_without_protocol_is_not_an_agent_and_is_warned_about(tmp_path):
    manifest = load_manifest(write(tmp_path, """
        [devtools.chat.gemini]
        command = ["gemini"]
    """))
    assert manifest.agents == ()
    assert any("unknown key `gemini`" in w for w in manifest.warnings)
