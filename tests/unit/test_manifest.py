"""storage.manifest: the stack manifest (devhost.toml), its defaults, and reloading it live."""
import os
import textwrap

import pytest

from storage.manifest import (DEFAULT_PROMPT, Manifest, ManifestError, ManifestSource, Service, default_manifest,
                              load_manifest)


@pytest.fixture
def stack(tmp_path):
    """A stack folder with two checkouts; ``write(toml)`` writes its devhost.toml and returns the path."""
    (tmp_path / "app").mkdir()
    (tmp_path / "api").mkdir()

    def write(text: str) -> str:
        path = tmp_path / "devhost.toml"
        path.write_text(textwrap.dedent(text))
        return str(path)

    write.root = tmp_path.resolve()
    return write


APP = """
    name = "shop"
    [services.app]
    host = "app.localhost"
    root = "app"
"""


def refusal(path: str) -> str:
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    return str(caught.value)


# ---- parsing ---------------------------------------------------------------------------------

def test_a_manifest_names_the_stack_and_its_routed_services(stack):
    manifest = load_manifest(stack(APP + """
        [services.api]
        host = "API.localhost"
        root = "./api"
        upstream = "http://127.0.0.1:9000"
    """))
    assert manifest.name == "shop"
    assert manifest.path == str(stack.root / "devhost.toml")
    assert manifest.services == (Service("app", "app.localhost", str(stack.root / "app")),
                                 Service("api", "api.localhost", str(stack.root / "api"), "http://127.0.0.1:9000"))


@pytest.mark.parametrize("name_line", ["", "name = ''", "name = '   '", "name = 3"])
def test_the_stack_name_is_required(stack, name_line):
    path = stack(f"""
        {name_line}
        [services.app]
        host = "app.localhost"
        root = "app"
    """)
    assert "`name` (the stack name) must be a non-empty string" in refusal(path)


def test_at_least_one_service_is_required(stack):
    assert "add at least one [services.<name>] table with `host` and `root`" in refusal(stack('name = "shop"\n'))


@pytest.mark.parametrize("host", ["", "app localhost", "http://app.localhost", "app.localhost:3000", "-app.localhost",
                                  "app.localhost\\n", "app_1.localhost"])
def test_a_service_host_must_be_a_bare_hostname(stack, host):
    path = stack(f"""
        name = "shop"
        [services.app]
        host = "{host}"
        root = "app"
    """)
    assert "[services.app]: `host` must be a hostname such as \"app.localhost\"" in refusal(path)


def test_a_host_may_be_routed_to_only_one_service(stack):
    path = stack(APP + """
        [services.app2]
        host = "App.Localhost"
        root = "api"
    """)
    assert "[services.app2]: host 'app.localhost' is already taken" in refusal(path)


def test_the_control_address_cannot_be_a_routed_host(stack):
    path = stack("""
        name = "shop"
        [services.app]
        host = "127.0.0.1"
        root = "app"
    """)
    assert "host '127.0.0.1' is already taken" in refusal(path)


def test_a_root_is_relative_to_the_manifest_not_the_current_directory(stack, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path / "api")
    assert load_manifest(stack(APP)).services[0].root == str(stack.root / "app")


def test_a_root_that_does_not_exist_is_refused(stack):
    path = stack(APP.replace('root = "app"', 'root = "missing"'))
    assert f"[services.app]: root {stack.root / 'missing'} is not a directory" in refusal(path)


def test_a_root_that_is_a_file_is_refused(stack):
    (stack.root / "notes.txt").write_text("x")
    assert "is not a directory" in refusal(stack(APP.replace('root = "app"', 'root = "notes.txt"')))


def test_a_service_without_root_is_the_manifests_own_folder(stack):
    manifest = load_manifest(stack(APP.replace('root = "app"', "")))
    assert manifest.services[0].root == str(stack.root)


def test_an_upstream_must_be_an_http_url(stack):
    assert "`upstream` must be an http:// URL" in refusal(stack(APP + 'upstream = "127.0.0.1:9000"\n'))


def test_a_file_that_is_not_toml_is_refused_with_the_reason(stack):
    assert "not valid TOML" in refusal(stack("name = \n"))


def test_a_missing_file_is_refused(tmp_path):
    assert "no such manifest file" in refusal(str(tmp_path / "devhost.toml"))


# ---- [devtools.chat] -------------------------------------------------------------------------

def test_without_a_prompt_the_default_asks_for_edits_in_place_where_the_page_reloads(stack):
    """The page is served from this checkout: the default prompt says to edit here, not in a worktree."""
    assert load_manifest(stack(APP)).prompt == DEFAULT_PROMPT
    assert "edit the files here, in place" in DEFAULT_PROMPT and "reloads by itself" in DEFAULT_PROMPT
    assert "git worktree add" not in DEFAULT_PROMPT and "would not show in the page" in DEFAULT_PROMPT


def test_an_empty_prompt_is_kept_so_nothing_is_appended(stack):
    assert load_manifest(stack(textwrap.dedent(APP) + '[devtools.chat]\nprompt = ""\n')).prompt == ""


def test_a_prompt_is_taken_as_written(stack):
    manifest = load_manifest(stack(textwrap.dedent(APP) + '[devtools.chat]\nprompt = """Run make test.\n"""\n'))
    assert manifest.prompt == "Run make test.\n"


def test_a_prompt_must_be_a_string(stack):
    assert "`prompt` must be a string" in refusal(stack(textwrap.dedent(APP) + "[devtools.chat]\nprompt = 3\n"))


def test_a_harness_command_may_be_one_string_or_a_list(stack):
    manifest = load_manifest(stack(textwrap.dedent(APP) + """
[devtools.chat.claude-code]
command = "claude-beta"
[devtools.chat.codex]
command = ["npx", "-y", "@openai/codex"]
"""))
    assert manifest.commands == {"claude-code": ("claude-beta",), "codex": ("npx", "-y", "@openai/codex")}


def test_a_relative_command_path_is_relative_to_the_manifest(stack):
    manifest = load_manifest(stack(textwrap.dedent(APP) + """
[devtools.chat.claude-code]
command = ["./bin/claude", "--flag-for-wrapper"]
"""))
    assert manifest.commands["claude-code"] == (str(stack.root / "bin" / "claude"), "--flag-for-wrapper")


def test_without_commands_each_harness_keeps_its_default(stack):
    assert load_manifest(stack(APP)).commands == {}


@pytest.mark.parametrize("value", ['""', "[]", '["claude", ""]', "[1]", "3"])
def test_a_harness_command_must_be_non_empty_strings(stack, value):
    path = stack(textwrap.dedent(APP) + f"[devtools.chat.codex]\ncommand = {value}\n")
    assert "[devtools.chat.codex] `command` must be a string or a list of strings" in refusal(path)


# ---- no manifest -----------------------------------------------------------------------------

def test_without_a_manifest_the_directory_is_the_one_project_served_as_localhost(tmp_path):
    manifest = default_manifest(str(tmp_path))
    assert manifest == Manifest(path=None, name=tmp_path.name,
                                services=(Service("default", "localhost", str(tmp_path.resolve())),))
    assert manifest.prompt == DEFAULT_PROMPT
    assert manifest.service_for_host("LOCALHOST") == manifest.services[0]


# ---- reloading -------------------------------------------------------------------------------

def rewrite(path: str, text: str) -> None:
    """Writes new contents and moves the mtime on, so the change is seen however coarse the clock."""
    before = os.stat(path).st_mtime_ns
    with open(path, "w") as handle:
        handle.write(textwrap.dedent(text))
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_source_without_a_manifest_hands_out_the_default(tmp_path):
    assert ManifestSource(None, str(tmp_path)).current() == default_manifest(str(tmp_path))


def test_a_broken_manifest_at_start_up_is_fatal(stack):
    with pytest.raises(ManifestError):
        ManifestSource(stack("name = \n"), "/")


def test_an_edited_manifest_applies_to_the_next_request(stack):
    path = stack(APP)
    lines = []
    source = ManifestSource(path, "/", log=lines.append)
    assert source.current().prompt == DEFAULT_PROMPT
    rewrite(path, textwrap.dedent(APP) + '[devtools.chat]\nprompt = "new rules"\n')
    assert source.current().prompt == "new rules"
    assert lines == [f"manifest reloaded: {path}"]


def test_an_unchanged_manifest_is_not_read_again(stack):
    path = stack(APP)
    lines = []
    source = ManifestSource(path, "/", log=lines.append)
    first = source.current()
    assert source.current() is first
    assert lines == []


def test_a_broken_edit_keeps_the_last_good_manifest_and_says_why(stack):
    path = stack(APP)
    lines = []
    source = ManifestSource(path, "/", log=lines.append)
    good = source.current()
    rewrite(path, APP.replace('root = "app"', 'root = "missing"'))
    assert source.current() == good
    assert len(lines) == 1
    assert lines[0].startswith("manifest not reloaded, keeping the last good one:") and "missing" in lines[0]
    assert source.current() == good and len(lines) == 1  # reported once, not on every request


def test_fixing_a_broken_edit_is_picked_up(stack):
    path = stack(APP)
    source = ManifestSource(path, "/")
    rewrite(path, "name = \n")
    source.current()
    rewrite(path, APP.replace('name = "shop"', 'name = "shop2"'))
    assert source.current().name == "shop2"


def test_a_deleted_manifest_keeps_the_last_good_one(stack):
    path = stack(APP)
    source = ManifestSource(path, "/")
    good = source.current()
    os.unlink(path)
    assert source.current() == good


def test_the_default_prompt_names_git_diff_only_in_a_git_checkout(tmp_path):
    from storage.manifest import DEFAULT_PROMPT, DEFAULT_PROMPT_NO_GIT, default_manifest, prompt_for
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "web" / "src").mkdir(parents=True)
    (plain / ".git").mkdir(parents=True)  # empty, as Codex's sandbox leaves one: no repository
    manifest = default_manifest(str(tmp_path))
    assert prompt_for(manifest, str(repo / "web" / "src")) == DEFAULT_PROMPT  # a .git in a parent counts
    assert prompt_for(manifest, str(plain)) == DEFAULT_PROMPT_NO_GIT
    assert "git diff" in DEFAULT_PROMPT and "git" not in DEFAULT_PROMPT_NO_GIT
    assert "in place" in DEFAULT_PROMPT_NO_GIT and "reloads by itself" in DEFAULT_PROMPT_NO_GIT


def test_a_prompt_the_manifest_names_is_used_as_it_is_everywhere(tmp_path):
    from storage.manifest import parse_manifest, prompt_for
    manifest = parse_manifest({"name": "s", "services": {"app": {"host": "app.localhost", "root": "."}},
                               "devtools": {"chat": {"prompt": "Run make test."}}}, str(tmp_path / "devhost.toml"))
    assert prompt_for(manifest, str(tmp_path)) == "Run make test."
