"""`medground search "QUERY"`: run the retrieval engine over the built indexes and show passages."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from medground.retrieve.base import EmptyQueryError, check_query
from medground.retrieve.engine import RetrievalEngine, RetrieveSettings
from medground.schema import Passage

app = typer.Typer(add_completion=False)
err = Console(stderr=True)


class RetrieverChoice(str, Enum):
    bm25 = "bm25"
    dense = "dense"
    splade = "splade"
    hybrid = "hybrid"  # bm25 + dense, fused


class FusionChoice(str, Enum):
    rrf = "rrf"
    norm = "norm"


def settings_for(retriever: str, fusion: str | None, sections: int | None, rerank: str | None,
                 rerank_model: str | None, k: int, top: int, corpora: list[str] | None = None) -> RetrieveSettings:
    names = ["bm25", "dense"] if retriever == "hybrid" else [retriever]
    return RetrieveSettings(
        retrievers=names,
        fusion=fusion or ("rrf" if len(names) > 1 else None),
        sections=sections,
        rerank={"name": rerank, "model": rerank_model} if rerank else None,
        final_k=k,
        top=top,
        **({"corpora": corpora} if corpora else {}),
    )


def config_settings(path: Path, k: int | None) -> RetrieveSettings:
    """A pipeline YAML's retrieve section (what `ask` with that config retrieves), ``k`` passages."""
    from medground.pipelines.config import load_pipeline_config

    settings = load_pipeline_config(path).retrieve
    return settings.model_copy(update={"final_k": k}) if k else settings


def make_engine(settings: RetrieveSettings) -> RetrievalEngine:
    """The engine over the chunk store and its persisted indexes (a seam for tests)."""
    return RetrievalEngine(settings)


def _as_json(p: Passage) -> dict:
    c = p.chunk
    return {
        "rank": p.rank, "score": p.score, "source": p.source, "chunk_id": c.chunk_id, "doc_id": c.doc_id,
        "book": c.book, "chapter": c.chapter, "section": c.section, "title": c.title,
        "char_start": c.char_start, "char_end": c.char_end, "text": c.text,
        "queries": p.metadata.get("queries", []),
        "first_stage": p.metadata.get("first_stage"),
    }


def _snippet(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords to search for.")],
    retriever: Annotated[RetrieverChoice, typer.Option("--retriever", "-r", help="First stage.")] = RetrieverChoice.bm25,
    fusion: Annotated[FusionChoice | None, typer.Option(help="Fusion for hybrid (default rrf).")] = None,
    sections: Annotated[int | None, typer.Option(min=1, help="Search only the top-K sections.")] = None,
    rerank: Annotated[str | None, typer.Option(help="Reranker: cross-encoder, bi-encoder, maxsim, llm-yesno.")] = None,
    rerank_model: Annotated[str | None, typer.Option(help="Reranker model path or hub name.")] = None,
    k: Annotated[int | None, typer.Option("--k", "-k", min=1, help="Passages to show (default 6, or the "
                                                                    "config's final_k).")] = None,
    top: Annotated[int, typer.Option(min=1, help="Candidates per retriever.")] = 150,
    corpora: Annotated[list[str] | None, typer.Option(
        "--corpus", help="Search only these corpora' indexes (repeat; e.g. openstax, what the demo builds).")] = None,
    config: Annotated[Path | None, typer.Option(
        help="Retrieve exactly as this pipeline YAML does (its retrieve section; the options above are ignored "
             "except --k).", exists=True, dir_okay=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Search the indexed corpus; print ranked passages with book / chapter / section."""
    try:
        query = check_query(query)
    except EmptyQueryError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    try:
        settings = (config_settings(config, k) if config else
                    settings_for(retriever.value, fusion.value if fusion else None, sections, rerank, rerank_model,
                                 k or 6, top, corpora))
        engine = make_engine(settings)
        with err.status("searching…", spinner="dots"):
            passages = engine.retrieve(query)
    except (FileNotFoundError, KeyError, ValueError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps({
            "query": query, "settings": settings.model_dump(mode="json"), "timings": engine.timings,
            "passages": [_as_json(p) for p in passages],
        }, indent=2, ensure_ascii=False))
        return
    reranker = settings.rerank.name if settings.rerank else None
    table = Table(title=f"{query}  ({engine.first_stage.name}{' → ' + reranker if reranker else ''})")
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("book / chapter / section", overflow="fold", max_width=40)
    table.add_column("snippet", overflow="fold")
    for i, p in enumerate(passages, start=1):
        c = p.chunk
        where = " / ".join(x for x in (c.book, c.chapter, c.section or c.title) if x)
        table.add_row(str(i), f"{p.score:.3f}", where, _snippet(c.text))
    Console().print(table)
    total = sum(engine.timings.values())
    err.print(f"{len(passages)} passages in {total * 1000:.0f} ms "
              + " · ".join(f"{k_} {v * 1000:.0f} ms" for k_, v in engine.timings.items()))
