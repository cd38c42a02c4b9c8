"""Each package's public face: a few names importable from the package itself, each imported on
first use (so `import medground.store` stays cheap), every one defined where the package says."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ["store", "corpus", "index", "retrieve", "llm", "reading", "pipelines", "eval", "train", "serve"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves_to_the_packages_own_object(package):
    module = importlib.import_module(f"medground.{package}")
    assert module.__all__, f"medground.{package} exports nothing"
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__code__"):  # not a type alias
            assert obj.__module__.startswith(f"medground.{package}"), (package, name, obj)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        getattr(module, "nonexistent")


def test_importing_a_package_imports_none_of_its_heavy_modules():
    code = ("import sys, medground.store, medground.eval, medground.retrieve, medground.reading; "
            "print(sorted(m for m in sys.modules if m.startswith(('medground.store.', 'medground.eval.', "
            "'medground.retrieve.', 'medground.reading.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_exports_are_read_from_the_type_checking_block(tmp_path):
    from medground.lazy import checking_imports, lazy_exports

    init = tmp_path / "__init__.py"
    init.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from json import dumps as dumps, loads as loads\n    from math import pi as pi\n")
    getter, names = lazy_exports("fake", str(init))
    assert names == ["dumps", "loads", "pi"] and getter("pi") == 3.141592653589793
    assert checking_imports(str(init)) == {"dumps": "json", "loads": "json", "pi": "math"}
    init.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .x import y as y\n")
    with pytest.raises(ValueError, match=r"__init__.py:3: expected an absolute"):
        checking_imports(str(init))
