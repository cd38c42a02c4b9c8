"""`medground ask` and `medground demo`: a question in, an answer with its cited passages out."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from medground.schema import Answer, Question

ask_app = typer.Typer(add_completion=False)
demo_app = typer.Typer(add_completion=False)
console = Console()

if TYPE_CHECKING:
    from medground.pipelines.base import Pipeline
    from medground.pipelines.config import PipelineConfig
    from medground.retrieve.engine import RetrievalEngine

from medground.pipelines.base import answer_dict


def parse_options(pairs: list[str]) -> dict[str, str]:
    """["A=Vitamin C", "B=Vitamin B6"] → {"A": "Vitamin C", "B": "Vitamin B6"}."""
    options: dict[str, str] = {}
    for pair in pairs:
        letter, sep, text = pair.partition("=")
        if not sep or not letter.strip() or not text.strip():
            raise typer.BadParameter(f"expected LETTER=TEXT, got {pair!r}", param_hint="--option")
        options[letter.strip().upper()] = text.strip()
    return options


def print_answer(question: Question, answer: Answer) -> None:
    if question.options:
        head = f"[bold]{answer.choice}[/bold]. {question.options.get(answer.choice or '', '')}" \
            if answer.choice else f"[red]no answer ({answer.outcome})[/red]"
    else:
        head = answer.text if answer.outcome == "answered" else f"[yellow]{answer.outcome}[/yellow]: {answer.text}"
    if question.options and question.answer:
        mark = "[green]right[/green]" if answer.choice == question.answer else "[red]wrong[/red]"
        head += f"\n[dim]textbook answer: {question.answer}. {question.options.get(question.answer, '')}[/dim] ({mark})"
    console.print(Panel(head, title=question.question[:100], subtitle=f"outcome: {answer.outcome}"))
    if answer.option_scores:
        t = Table("option", "score", "text", title="Option scores")
        for letter, score in answer.option_scores.items():
            t.add_row(letter, f"{score:.3f}", question.options.get(letter, ""))
        console.print(t)
    if answer.rationale and question.options:
        console.print(Panel(answer.rationale, title="Reasoning"))
    if answer.queries:
        console.print("[dim]queries:[/dim] " + " | ".join(f"{q.kind}: {q.text[:80]}" for q in answer.queries))
    if answer.citations:
        t = Table("#", "source (book / chapter / section)", "passage", title="Cited evidence", show_lines=True)
        for c in answer.citations:
            t.add_row(str(c.number), c.label, c.text[:300] + ("…" if len(c.text) > 300 else ""))
        console.print(t)
    timing = ", ".join(f"{k} {v:.1f}s" for k, v in answer.timings.items() if "." not in k)
    console.print(f"[dim]{timing}; tokens {answer.tokens}[/dim]")


def _load_config(pipeline: str, config: Optional[Path], model: Optional[str]):
    from medground.pipelines.config import load_pipeline_config

    cfg = load_pipeline_config(config or pipeline)
    if model:
        cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"model": model})})
    return cfg


@ask_app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    option: list[str] = typer.Option([], "--option", "-o", help="A multiple-choice option as LETTER=TEXT (repeat)."),
    pipeline: str = typer.Option("rag", "--pipeline", "-p",
                                 help="A shipped config's name (direct, rag, amt, imedrag, drugrag, demo) or a YAML path."),
    config: Optional[Path] = typer.Option(None, help="A pipeline YAML path (same as --pipeline PATH)."),
    model: Optional[str] = typer.Option(None, help="Override the LLM (catalog name or GGUF path)."),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON."),
) -> None:
    """Answer a question with the chosen pipeline and print the cited passages."""
    from medground.configio import ConfigError

    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    try:
        cfg = _load_config(pipeline, config, model)
    except ConfigError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    q = Question(qid="cli", dataset="cli", question=question, options=parse_options(option))
    pipe, engine = interactive_pipeline(cfg)
    answer = pipe.answer(q)
    if engine.left_out:
        answer.metadata["retrievers_left_out"] = dict(engine.left_out)
    if as_json:
        typer.echo(json.dumps({"question": asdict(q), "config": cfg.model_dump(mode="json"),
                               "answer": answer_dict(answer)}, indent=2, default=str))
    else:
        print_answer(q, answer)
        for name, why in engine.left_out.items():
            console.print(f"[yellow]Answered without the {name} retriever: {why} (it is not built on first "
                          f"use by `ask`: over the textbooks it takes minutes).[/yellow]")


def interactive_pipeline(cfg: PipelineConfig) -> tuple[Pipeline, RetrievalEngine]:
    """A pipeline for one interactive answer: a missing BM25 or section index is built on first
    use (seconds), a missing dense or SPLADE index is left out and named instead (minutes)."""
    from medground.pipelines.factory import build_pipeline
    from medground.retrieve.engine import RetrievalEngine

    engine = RetrievalEngine(cfg.retrieve, build_if_missing=True, defer_builds=("dense", "splade"))
    return build_pipeline(cfg, engine=engine), engine


# From the answerable set (benchmarks/data/answerable_textbooks.jsonl): each answer is stated in
# one textbook chunk, so the demo shows the reader following its evidence.
DEMO_QUESTIONS = [
    Question(qid="demo-free", dataset="demo",
             question="Why should a client taking isoniazid also receive pyridoxine (vitamin B6)?"),
    Question(qid="ans-017", dataset="demo",
             question="A nurse reviews laboratory results before giving digoxin. Which electrolyte abnormality is "
                      "a contraindication to digoxin therapy?",
             options={"A": "Hypernatremia", "B": "Hypokalemia", "C": "Hypophosphatemia", "D": "Hyperchloremia"},
             answer="B"),
    Question(qid="ans-020", dataset="demo",
             question="Which drug is given orally or intravenously as the antidote for acetaminophen (paracetamol) "
                      "overdose?",
             options={"A": "Flumazenil", "B": "Naloxone", "C": "Protamine sulfate", "D": "Acetylcysteine"},
             answer="D"),
]


@demo_app.command()
def demo(
    data: Optional[Path] = typer.Option(None, help="Data directory (default ../shared/data or $MEDGROUND_DATA)."),
    model: Optional[str] = typer.Option(None, help="LLM for the demo (default: the config's, qwen2.5-coder-1.5b)."),
    question: Optional[str] = typer.Option(None, help="Ask this instead of the built-in questions."),
) -> None:
    """Ingest the six shared textbooks, build the BM25 index, and answer questions with citations."""
    from medground.corpus.ingest import ingest, source_set
    from medground.store.chunks import ChunkStore
    from medground.paths import data_root
    from medground.pipelines.factory import build_pipeline

    root = data_root(data)
    console.rule("1. Ingest the textbooks (a no-op when unchanged)")
    store = ChunkStore.default()
    t = time.perf_counter()
    report = ingest(store, source_set("textbooks", root))
    console.print(f"{report.ingested} books ingested, {report.unchanged} unchanged, "
                  f"{store.count()} chunks in {store.path if hasattr(store, 'path') else 'the store'} "
                  f"({time.perf_counter() - t:.1f}s)")
    console.rule("2. Retrieval index and model (built or pulled on first use)")
    cfg = _load_config("demo", None, model)
    pipe = build_pipeline(cfg)
    questions = [Question(qid="demo-user", dataset="demo", question=question)] if question else DEMO_QUESTIONS
    for i, q in enumerate(questions, 3):
        console.rule(f"{i}. Ask")
        print_answer(q, pipe.answer(q))
