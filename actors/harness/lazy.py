"""A package face whose names are imported from their modules at their first use (PEP 562):
a harness's protocol and projection are most of the daemon's code, and what imports the package
for less (the agents scanner, the saved conversations, the daemon's start) must not pay for them."""
from __future__ import annotations

import importlib


def lazy_names(package_globals: dict, face: dict):
    """The module ``__getattr__`` for ``face`` (name -> (module, attribute), attribute None for the
    module itself): each name is looked up once, then kept in ``package_globals``."""
    package = package_globals["__name__"]

    def __getattr__(name: str):
        if name not in face:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = face[name]
        value = importlib.import_module(module)
        value = value if attribute is None else getattr(value, attribute)
        package_globals[name] = value
        return value
    return __getattr__
