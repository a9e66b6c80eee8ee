"""A package's names imported on first use (PEP 562), so that importing the package brings in no heavy module.

    __getattr__, __dir__ = lazy_names(__name__, HOMES, globals())

HOMES maps each name the package offers to the submodule that defines it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str], namespace: dict[str, object]
               ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The package's module-level __getattr__ and __dir__."""

    def __getattr__(name: str) -> object:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        namespace[name] = value  # asked once: the next look-up finds it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
