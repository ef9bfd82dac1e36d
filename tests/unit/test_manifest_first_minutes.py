"""The manifest rules a person meets in the first minutes: a misspelled key is named with its table
and what to write instead (a warning: the daemon still starts), a host no browser resolves to this
machine is refused with the `.localhost` name to write, and a broken live edit stays visible."""
import socket

import pytest

from storage.manifest import ManifestSource, load_manifest
from tests.unit.test_manifest import APP, refusal, rewrite, stack  # noqa: F401 (stack: the fixture)


# ---- unknown keys ----------------------------------------------------------------------------

def test_a_misspelled_service_key_is_a_warning_naming_it_its_table_and_the_key_meant(stack):
    path = stack(APP + 'upstrem = "http://127.0.0.1:3000"\n')
    manifest = load_manifest(path)
    assert manifest.services[0].upstream is None  # ignored, so the page is not proxied: hence the warning
    assert manifest.warnings == (f"{path}: [services.app]: unknown key `upstrem` is ignored: did you mean `upstream`?",)


def test_a_misspelled_top_level_key_or_table_is_named_at_the_top_level(stack):
    path = stack('nmae = "x"\n' + APP + '[service.api]\nhost = "api.localhost"\n')
    assert load_manifest(path).warnings == (
        f"{path}: the top level: unknown key `nmae` is ignored: did you mean `name`?",
        f"{path}: the top level: unknown key `service` is ignored: did you mean `services`?")


def test_unknown_keys_in_nested_tables_name_the_table(stack):
    path = stack(APP + """
        [devtools.chat]
        promt = "Run make test."
        [devtools.chat.claude]
        command = "claude"
        [core]
        resume_at_rest = true
    """)
    assert load_manifest(path).warnings == (
        f"{path}: [devtools.chat]: unknown key `promt` is ignored: did you mean `prompt`?",
        f"{path}: [devtools.chat]: unknown key `claude` is ignored: did you mean `claude-code`?",
        f"{path}: [core]: unknown key `resume_at_rest` is ignored: did you mean `resume_at_reset`?")


def test_an_unknown_key_like_no_known_one_lists_the_keys_of_its_table(stack):
    path = stack(APP + 'colour = "blue"\n')
    assert load_manifest(path).warnings == (
        f"{path}: [services.app]: unknown key `colour` is ignored: the keys [services.app] knows are "
        "`host`, `root`, `upstream`",)


def test_a_known_key_in_the_wrong_table_says_which_table_it_belongs_in(stack):
    path = stack('prompt = "Run make test."\n' + APP + "[devtools.chat]\ncommand = \"claude\"\n")
    assert load_manifest(path).warnings == (
        f"{path}: the top level: unknown key `prompt` is ignored: `prompt` belongs in [devtools.chat]",
        f"{path}: [devtools.chat]: unknown key `command` is ignored: `command` belongs in "
        "[devtools.chat.claude-code] or in [devtools.chat.codex]")


def test_a_manifest_of_known_keys_has_no_warnings(stack):
    assert load_manifest(stack(APP + 'upstream = "http://127.0.0.1:3000"\n')).warnings == ()


def test_a_missing_host_written_misspelled_is_refused_naming_the_misspelling(stack):
    path = stack(APP.replace('host = "app.localhost"', 'hots = "app.localhost"'))
    assert "`host` must be a hostname such as \"app.localhost\" (`hots` here looks like a misspelling of `host`)" \
        in refusal(path)


# ---- routable hosts --------------------------------------------------------------------------

def test_a_bare_name_no_resolver_knows_is_refused_with_its_localhost_form(stack):
    path = stack(APP.replace("app.localhost", "pantry-devhostd-test"))
    message = refusal(path)
    assert "[services.app]: host pantry-devhostd-test resolves to no address on this machine" in message
    assert 'write "pantry-devhostd-test.localhost" instead: browsers resolve every *.localhost name' in message


def test_a_resolver_that_cannot_answer_now_does_not_stop_the_start(stack, monkeypatch):
    """No network, or a VPN coming up (EAI_AGAIN): no proof the name is wrong, so the manifest loads."""
    def cannot_answer(*args, **kwargs):
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    monkeypatch.setattr(socket, "getaddrinfo", cannot_answer)
    load_manifest(stack(APP.replace("app.localhost", "pantry.internal")))


@pytest.mark.parametrize("address", ["10.1.2.3", "127.0.0.2"])
def test_an_address_is_refused_with_a_localhost_name_for_the_service(stack, address):
    """devhostd listens on 127.0.0.1 only (its control origin): no other address reaches it."""
    message = refusal(stack(APP.replace("app.localhost", address)))
    assert f"host {address} is an address, not a name a page can be routed by; write \"app.localhost\"" in message


def test_a_name_on_an_address_devhostd_does_not_listen_on_is_refused():
    from storage.hosts import routability_problem
    name = name_in_etc_hosts(lambda address: address.startswith("127.") and address != "127.0.0.1")
    if name is None:
        pytest.skip("this machine's /etc/hosts names no host on a loopback address other than 127.0.0.1")
    assert "where devhostd does not listen; write" in routability_problem(name)


@pytest.mark.parametrize("host", ["localhost", "app.localhost", "a.b.localhost"])
def test_localhost_names_and_loopback_addresses_stay_valid(stack, host):
    assert load_manifest(stack(APP.replace("app.localhost", host))).services[0].host == host


def name_in_etc_hosts(wanted) -> str | None:
    """A name (not localhost's) this machine's /etc/hosts gives an address ``wanted`` accepts, and
    that resolves to nothing else."""
    try:
        lines = open("/etc/hosts").read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#")[0].split()
        for name in fields[1:]:
            if wanted(fields[0]) and "localhost" not in name:
                try:
                    if {i[4][0] for i in socket.getaddrinfo(name, None)} <= {fields[0], "::1"}:
                        return name.lower()
                except socket.gaierror:
                    continue
    return None


def test_a_name_the_system_resolves_to_loopback_stays_valid(stack):
    name = name_in_etc_hosts(lambda address: address == "127.0.0.1")
    if name is None:
        pytest.skip("this machine's /etc/hosts names no host on 127.0.0.1 besides localhost")
    assert load_manifest(stack(APP.replace("app.localhost", name))).services[0].host == name


# ---- a live edit -----------------------------------------------------------------------------

def test_a_broken_edit_is_a_problem_until_it_is_fixed_while_the_last_good_one_serves(stack):
    path = stack(APP)
    lines = []
    source = ManifestSource(path, "/", log=lines.append)
    assert source.problems() == []
    rewrite(path, APP.replace("app.localhost", "pantry-devhostd-test"))
    problems = source.problems()
    assert source.current().services[0].host == "app.localhost"  # the last good one still serves
    assert [p["level"] for p in problems] == ["error"]
    assert "write \"pantry-devhostd-test.localhost\"" in problems[0]["message"]
    assert "the edit is not in use" in problems[0]["message"]
    source.problems()
    assert len(lines) == 1 and lines[0].startswith("manifest not reloaded")  # logged once, when it changed
    rewrite(path, APP + 'upstrem = "http://127.0.0.1:3000"\n')
    assert source.problems() == [{"level": "warning", "message": f"{path}: [services.app]: unknown key `upstrem` "
                                                                 "is ignored: did you mean `upstream`?"}]
    assert lines[1:] == [f"manifest reloaded: {path}", "manifest warning: " + source.problems()[0]["message"]]
