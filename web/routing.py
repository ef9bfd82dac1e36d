"""Turning a page and a chat target into the agent's working directory.

The browser names a page (``pageURL``) and a target (``project`` or ``devhost``); the daemon
alone turns them into a directory, from the manifest or its own source checkout.
"""
from __future__ import annotations

import os
import subprocess
from urllib.parse import urlsplit

from storage.manifest import Manifest

TARGETS = ("project", "devhost")


class RouteError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def resolve_directory(manifest: Manifest, page_url: str | None, target: str | None, *,
                      request_hostname: str | None, source_root: str) -> str:
    """``request_hostname`` is the routed hostname the request came to (None on the control origin)."""
    if not target:
        raise RouteError(400, "a chat target is required: project or devhost")
    if not isinstance(target, str):
        raise RouteError(400, "the chat target must be the string project or devhost")
    if target not in TARGETS:
        raise RouteError(400, f"unknown chat target {target!r}; use project or devhost")
    service = service_for_page(manifest, page_url, request_hostname)
    if target == "devhost":
        if not source_root:
            raise RouteError(400, "the devhost target needs a development build of devhostd (running from a git "
                                  "checkout of its own source); this one is not")
        return source_root
    return service.root


def service_for_page(manifest: Manifest, page_url: str | None, request_hostname: str | None):
    if not page_url:
        raise RouteError(400, "pageURL is required: the address of the page the chat belongs to")
    if not isinstance(page_url, str):
        raise RouteError(400, "pageURL must be a string: the address of the page the chat belongs to")
    try:
        parts = urlsplit(page_url)
        hostname = parts.hostname
    except ValueError:
        hostname = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not hostname:
        raise RouteError(400, f"pageURL {page_url[:200]!r} is not an http(s) page address")
    service = manifest.service_for_host(hostname)
    if service is None:
        raise RouteError(400, f"pageURL host {hostname!r} is not a routed service of stack {manifest.name!r}")
    if request_hostname is not None and service.host != request_hostname:
        # A page may only drive the checkout of its own hostname.
        raise RouteError(400, f"pageURL must be a page of {request_hostname}, the hostname this request was sent to")
    return service


def development_source_root(code_dir: str) -> str:
    """devhostd's own checkout when it runs from a git checkout of its source, else ""."""
    root = os.path.realpath(code_dir)
    if not os.path.exists(os.path.join(root, ".git")):
        return ""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return root if top and os.path.realpath(top) == root else ""
