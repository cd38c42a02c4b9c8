"""The scripts under benchmarks/ import ``medground`` (and the standard or third-party libraries),
never each other: what two scripts share lives in the package, where the tests cover it (issue 29).
No script edits ``sys.path`` or loads a sibling by file path."""

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Loaders that import code from a file path or by a computed name: a sibling import in disguise.
LOAD_BY_PATH = {"spec_from_file_location", "run_path", "SourceFileLoader", "addsitedir"}
LOAD_BY_NAME = {"import_module", "__import__"}


def violations(directory: Path) -> dict[str, list[str]]:
    """file name → what it does that it must not, for every ``*.py`` in ``directory``."""
    siblings = {p.stem for p in directory.glob("*.py")} | {directory.name}
    found: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*.py")):
        bad = []
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                bad += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in siblings]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    bad.append(f"line {node.lineno}: relative import")
                elif node.module and node.module.split(".")[0] in siblings:
                    bad.append(f"line {node.lineno}: from {node.module} import …")
                elif node.module == "sys" and any(a.name == "path" for a in node.names):
                    bad.append(f"line {node.lineno}: from sys import path")
            elif isinstance(node, ast.Attribute) and node.attr == "path" and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                bad.append(f"line {node.lineno}: sys.path")
            elif isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                first = node.args[0] if node.args else None
                if name in LOAD_BY_PATH:
                    bad.append(f"line {node.lineno}: {name}(…)")
                elif name in LOAD_BY_NAME and isinstance(first, ast.Constant) and \
                        str(first.value).split(".")[0] in siblings:
                    bad.append(f"line {node.lineno}: {name}({first.value!r})")
        if bad:
            found[path.name] = sorted(bad, key=lambda b: int(b.split(":")[0].split()[1]))
    return found


def test_no_script_imports_a_sibling_or_edits_sys_path():
    assert violations(BENCHMARKS) == {}


def test_a_planted_sibling_import_is_caught(tmp_path):
    real = (BENCHMARKS / "compression.py").read_text()
    (tmp_path / "reader.py").write_text("def save(*a):\n    pass\n")
    (tmp_path / "clean.py").write_text(real)
    (tmp_path / "bare.py").write_text(real + "\nfrom reader import save\n")
    (tmp_path / "pathed.py").write_text("import sys\nsys.path.insert(0, '.')\nimport reader.sub\n")
    (tmp_path / "sneaky.py").write_text("import importlib, runpy\nimportlib.import_module('reader')\n"
                                        "runpy.run_path('reader.py')\nfrom . import reader\n")
    got = violations(tmp_path)
    assert set(got) == {"bare.py", "pathed.py", "sneaky.py"}  # the real script, copied, is clean
    assert got["bare.py"] == [f"line {real.count(chr(10)) + 2}: from reader import …"]
    assert got["pathed.py"] == ["line 2: sys.path", "line 3: import reader.sub"]
    assert len(got["sneaky.py"]) == 3
    # The package and the standard library are fine, even under a name that is also a folder here.
    (tmp_path / "ok.py").write_text("import json\nimport importlib.util\nfrom medground.eval.bench import save_section\n"
                                    "importlib.util.find_spec('numba')\n")
    assert "ok.py" not in violations(tmp_path)
