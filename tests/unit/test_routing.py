"""web.routing: the daemon alone turns a page and a chat target into the agent's directory."""
import subprocess

import pytest

from storage.manifest import Manifest, Service
from web.routing import RouteError, development_source_root, resolve_directory

APP_ROOT, API_ROOT, SOURCE_ROOT = "/work/stack/app", "/work/stack/api", "/work/devhostd"
MANIFEST = Manifest(path="/work/stack/devhost.toml", name="shop",
                    services=(Service("app", "app.localhost", APP_ROOT), Service("api", "api.localhost", API_ROOT)))


def resolve(page_url="http://app.localhost:7777/cart", target="project", request_hostname="app.localhost",
            source_root=SOURCE_ROOT) -> str:
    return resolve_directory(MANIFEST, page_url, target, request_hostname=request_hostname, source_root=source_root)


def refusal(**kwargs) -> RouteError:
    with pytest.raises(RouteError) as caught:
        resolve(**kwargs)
    return caught.value


# ---- targets ---------------------------------------------------------------------------------

def test_the_project_target_is_the_checkout_of_the_pages_service():
    assert resolve() == APP_ROOT
    assert resolve(page_url="https://api.localhost/v1?x=1#y", request_hostname="api.localhost") == API_ROOT


def test_the_devhost_target_is_devhosts_own_source_checkout():
    assert resolve(target="devhost") == SOURCE_ROOT


def test_the_devhost_target_is_refused_outside_a_development_build():
    error = refusal(target="devhost", source_root="")
    assert error.status == 400 and "needs a development build" in str(error)


@pytest.mark.parametrize("target", [None, ""])
def test_a_missing_target_is_a_bad_request(target):
    error = refusal(target=target)
    assert error.status == 400 and str(error) == "a chat target is required: project or devhost"


@pytest.mark.parametrize("target", ["Project", "devhost/..", "/etc", "source"])
def test_an_unknown_target_is_a_bad_request(target):
    error = refusal(target=target)
    assert error.status == 400 and "unknown chat target" in str(error) and "use project or devhost" in str(error)


def test_the_devhost_target_still_needs_a_routed_page():
    assert refusal(target="devhost", page_url="http://elsewhere.example/").status == 400


# ---- pageURL ---------------------------------------------------------------------------------

@pytest.mark.parametrize("page_url", [None, ""])
def test_a_missing_page_url_is_a_bad_request(page_url):
    error = refusal(page_url=page_url)
    assert error.status == 400 and "pageURL is required" in str(error)


@pytest.mark.parametrize("page_url", ["app.localhost/cart", "ftp://app.localhost/", "file:///work/stack/app",
                                      "javascript:alert(1)", "http:///cart", "http://[::1/", "/cart"])
def test_a_page_url_that_is_not_an_http_page_address_is_a_bad_request(page_url):
    error = refusal(page_url=page_url)
    assert error.status == 400 and "is not an http(s) page address" in str(error)


@pytest.mark.parametrize("page_url", ["http://other.localhost:7777/", "http://127.0.0.1:7777/", "http://localhost/"])
def test_a_page_url_of_a_hostname_that_is_not_routed_is_a_bad_request(page_url):
    error = refusal(page_url=page_url, request_hostname=None)
    assert error.status == 400 and "is not a routed service of stack 'shop'" in str(error)


def test_a_page_url_hostname_matches_without_regard_to_case_or_a_trailing_dot():
    assert resolve(page_url="http://APP.Localhost.:7777/") == APP_ROOT


# ---- which pages a request may name ----------------------------------------------------------

def test_a_request_to_a_routed_hostname_may_only_name_a_page_of_that_hostname():
    error = refusal(page_url="http://api.localhost:7777/", request_hostname="app.localhost")
    assert error.status == 400
    assert str(error) == "pageURL must be a page of app.localhost, the hostname this request was sent to"


def test_a_request_to_the_control_origin_may_name_any_routed_page():
    assert resolve(page_url="http://app.localhost:7777/", request_hostname=None) == APP_ROOT
    assert resolve(page_url="http://api.localhost:7777/", request_hostname=None) == API_ROOT


# ---- development builds ----------------------------------------------------------------------

def git_init(folder) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)


def test_a_git_checkout_root_is_a_development_source_root(tmp_path):
    git_init(tmp_path)
    assert development_source_root(str(tmp_path)) == str(tmp_path.resolve())


def test_a_plain_folder_is_not_a_development_source_root(tmp_path):
    assert development_source_root(str(tmp_path)) == ""


def test_a_subfolder_of_a_checkout_is_not_a_development_source_root(tmp_path):
    git_init(tmp_path)
    (tmp_path / "web").mkdir()
    assert development_source_root(str(tmp_path / "web")) == ""


def test_a_stray_dot_git_that_is_not_a_repository_does_not_make_a_development_build(tmp_path):
    (tmp_path / ".git").mkdir()
    assert development_source_root(str(tmp_path)) == ""
