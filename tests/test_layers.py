"""Imports run down the layers: ground floor (schema, drug_schema, protocols, registry) ← store ←
corpus ← index ← retrieve ← llm ← reading ← pipelines ← eval/train ← serve ← cli; every module is
checked."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "medground"


def imports_of(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("medground"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("medground"))
    return out


def test_index_needs_nothing_from_retrieve_or_above():
    for path in (SRC / "index").glob("*.py"):
        bad = {m for m in imports_of(path) if m.count(".") and m.split(".")[1] in {"retrieve", "pipelines", "eval", "serve", "train"}}
        assert not bad, f"{path.name} imports {bad}"


def test_llm_base_does_not_import_its_backends():
    assert not {m for m in imports_of(SRC / "llm" / "base.py") if m.startswith(("medground.llm.local", "medground.llm.remote"))}


def test_vote_arithmetic_lives_with_the_voting_pipeline():
    assert "def weighted_vote" in (SRC / "pipelines" / "amt.py").read_text()
    assert "def weighted_vote" not in (SRC / "eval" / "metrics.py").read_text()
    assert not any(m.startswith("medground.eval") for m in imports_of(SRC / "pipelines" / "amt.py"))


READING_ABOVE = {"pipelines", "eval", "train", "serve", "cli"}
LLM_ABOVE = {"reading", *READING_ABOVE}


def upward(path: Path, above: set[str]) -> set[str]:
    """The medground modules ``path`` imports from the layers in ``above``."""
    return {m for m in imports_of(path) if m.count(".") and m.split(".")[1] in above}


def test_readers_sit_below_the_pipelines():
    """reading/ may use corpus, index, retrieve and llm; never pipelines, eval, train, serve or the CLI."""
    for path in (SRC / "reading").glob("*.py"):
        assert not upward(path, READING_ABOVE), f"reading/{path.name} imports {upward(path, READING_ABOVE)}"


def test_the_layer_check_catches_an_upward_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text((SRC / "reading" / "splits.py").read_text() + "\nfrom medground.eval.drugqa import generate\n")
    assert upward(planted, READING_ABOVE) == {"medground.eval.drugqa", "medground.eval.drugqa.generate"}


def test_the_llm_layer_and_its_prompts_sit_below_the_readers():
    """llm/ (backends, scoring, prompt templates) never imports the readers or anything above."""
    for path in (SRC / "llm").glob("*.py"):
        assert not upward(path, LLM_ABOVE), f"llm/{path.name} imports {upward(path, LLM_ABOVE)}"


# The whole order, every module: a module may import its own layer and those below it.
ORDER = {"ground": 0, "store": 1, "corpus": 2, "index": 3, "retrieve": 4, "llm": 5, "reading": 6, "pipelines": 7,
         "eval": 8, "train": 8, "serve": 9, "cli": 10}
GROUND = {"schema", "drug_schema", "protocols", "registry", "paths", "configio", "localworkers", "raycluster", "lazy",
          "__init__"}
# Climbs still to be taken down, by name. Nothing may be added here; a fixed one must be removed.
KNOWN_CLIMBS: dict[str, set[str]] = {}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] in GROUND:
        return "ground"
    return parts[1]


def climbs(path: Path, module: str) -> set[str]:
    """The modules ``path`` imports from a layer above its own (imported names folded into modules)."""
    mine = ORDER[layer_of(module)]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("medground"):
            found = [node.module]
        elif isinstance(node, ast.Import):
            found = [a.name for a in node.names if a.name.startswith("medground")]
        else:
            continue
        out.update(m for m in found if ORDER.get(layer_of(m), -1) > mine)
    return out


def test_every_module_imports_only_down_the_layers():
    seen = {}
    for path in SRC.rglob("*.py"):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        assert layer_of(module) in ORDER, f"{module} is in no layer: add its package to ORDER or GROUND"
        got = climbs(path, module)
        if got:
            seen[module] = got
    assert seen == KNOWN_CLIMBS, "imports that climb the layers changed (a new climb, or a fixed one to drop)"


def test_a_planted_climb_is_caught(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text((SRC / "index" / "text.py").read_text() + "\nfrom medground.pipelines.factory import build_pipeline\n")
    assert climbs(planted, "medground.index.planted") == {"medground.pipelines.factory"}
    assert climbs(SRC / "index" / "text.py", "medground.index.text") == set()


def test_only_the_cli_imports_typer():
    """Library code raises domain errors and returns values; the CLI package turns them into exit codes."""
    users = set()
    for path in SRC.rglob("*.py"):
        if "cli" in path.relative_to(SRC).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "typer" for a in node.names)) or \
                    (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "typer"):
                users.add(str(path.relative_to(SRC)))
    assert not users, f"typer imported outside cli/: {sorted(users)}"
