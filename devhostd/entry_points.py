"""The installed distributions' entry points, read from their ``entry_points.txt`` files alone.

gevent's ``patch_all`` looks its plugins up by entry point 25 times, and ``importlib.metadata``
answers each look by finding and parsing the metadata of every installed distribution: read
once, that still cost ~14 ms of devhostd's start-up (the largest part beyond its import floor,
with ~130 distributions). A distribution's entry points are one small file in its
``.dist-info`` (or ``.egg-info``) folder, so ``read`` lists each ``sys.path`` folder and reads
just those files (~2 ms), parsed by importlib.metadata's own parser into its own EntryPoint
objects, the first distribution of a name on the path winning, as importlib.metadata does.

Where the environment holds anything this reading does not cover (a zip or an egg on the path,
a folder that cannot be listed, a Python whose importlib.metadata lacks the parser) ``read``
answers None and the caller asks importlib.metadata: plugins are always found.

Imported before gevent patches the process: it imports nothing that starts a thread or a lock.
"""
from __future__ import annotations

import os
import re
import sys
from importlib import metadata

SUFFIXES = (".dist-info", ".egg-info")


def _normalized(folder: str) -> str:
    """The distribution's name as importlib.metadata compares them (PEP 503, dashes as _)."""
    name = folder.rsplit(".", 1)[0].split("-", 1)[0]
    return re.sub(r"[-_.]+", "_", name).lower()


def read(path: list[str] | None = None) -> metadata.EntryPoints | None:
    """Every entry point of the distributions on ``path`` (default ``sys.path``), or None when
    only importlib.metadata can tell."""
    parse = getattr(metadata.EntryPoints, "_from_text", None)
    if parse is None:
        return None
    seen: set[str] = set()
    found: list = []
    for entry in sys.path if path is None else path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return None  # a zip file on the path: its distributions are importlib.metadata's to read
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        if "EGG-INFO" in names:
            return None  # an unpacked egg: its metadata sits under another name
        for name in names:
            if not name.endswith(SUFFIXES):
                continue
            key = _normalized(name)
            if key in seen:
                continue  # an earlier folder on the path holds this distribution
            seen.add(key)
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except (FileNotFoundError, NotADirectoryError):
                continue  # no entry points (or an old single-file .egg-info)
            except (OSError, UnicodeDecodeError):
                return None
            found.extend(parse(text))
    return metadata.EntryPoints(found)
