"""Imports run down the layers: ground floor (schema, protocols, registry) ← corpus ← index ← retrieve
← llm ← pipelines ← eval/train ← serve/cli."""

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
