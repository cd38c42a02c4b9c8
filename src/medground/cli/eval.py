"""`medground eval`, `medground sweep`, `medground report`.

One typer app per command (``eval_app``, ``sweep_app``, ``report_app``, mounted as single
commands) and ``app`` holding all three. Pipelines come from a factory ``run config -> Pipeline``
named by ``PIPELINE_FACTORY`` (or ``--factory module:function``).
"""

from __future__ import annotations

import importlib
import json
import re
from contextlib import nullcontext
from pathlib import Path
from typing import Any, ContextManager

import typer
import yaml

from medground.configio import ConfigError
from medground.eval.records import RunLockedError
from medground.eval.runner import PipelineFactory
from medground.eval.sweep import CrossFitSpec, DatasetSpec, SweepResult, SweepSettings, expand, load_sweep, run_sweep
from medground.paths import home
from medground.raycluster import RayUnavailableError

# Connecting the pipelines is this one line: the function that turns a run config into a Pipeline.
PIPELINE_FACTORY = "medground.pipelines.factory:make_pipeline"

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Evaluate pipelines on benchmarks.")
eval_app = typer.Typer(add_completion=False)
sweep_app = typer.Typer(add_completion=False)
report_app = typer.Typer(add_completion=False)
coverage_app = typer.Typer(add_completion=False)
attribution_app = typer.Typer(add_completion=False)


class FactoryMissingError(RuntimeError):
    pass


def resolve_factory(spec: str | None = None) -> PipelineFactory:
    """Import ``module:function``; a clear error (not a traceback) when it is not there yet."""
    spec = spec or PIPELINE_FACTORY
    module, _, attr = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr or "make_pipeline")
    except (ModuleNotFoundError, AttributeError) as exc:
        raise FactoryMissingError(
            f"no pipeline factory at {spec!r} ({exc}). Pipelines are connected through a function "
            "`make_pipeline(run_config: dict) -> Pipeline`; pass --factory module:function or set "
            "medground.cli.eval.PIPELINE_FACTORY") from None
    if not callable(fn):
        raise FactoryMissingError(f"{spec!r} is not callable")
    return fn


def _why(exc: BaseException) -> str:
    if isinstance(exc, RunLockedError):
        return f"{exc}: another `medground eval` or `sweep` is running this same run; wait for it or stop it"
    return str(exc)


def _runs_dir(runs_dir: Path | None) -> Path:
    return runs_dir or home() / "runs"


def _fail(msg: str, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"error": msg}))
    else:
        typer.secho(msg, err=True, fg=typer.colors.RED)
    raise typer.Exit(2)


def _emit(result: SweepResult, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"runs": [s.to_dict() for s in result.summaries], "failures": result.failures},
                              ensure_ascii=False, indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        t = Table("run", "done", "accuracy", "95% CI", "parse fail", "errors", "runtime s", "q/s")
        for s in result.summaries:
            acc = "—" if s.accuracy is None else f"{100 * s.accuracy:.1f}"
            ci = "—" if s.ci_low is None else f"{100 * s.ci_low:.1f}–{100 * s.ci_high:.1f}"
            qps = "—" if s.throughput_qps is None else f"{s.throughput_qps:.2f}"
            t.add_row(s.name, f"{s.n_done}/{s.n_questions}", acc, ci, str(s.parse_failures), str(s.errors),
                      f"{s.runtime_s:.1f}", qps)
        Console().print(t)
        for name, why in result.failures.items():
            typer.secho(f"{name}: {why}", err=True, fg=typer.colors.RED)
    if result.failures:
        raise typer.Exit(1)


def _executor(ray: str | None, workers: int | None, concurrency: int) -> ContextManager[Any]:
    """Who answers the questions: threads in this process, or a Ray pool (connected here, before
    any run directory is written, so a bad address costs nothing)."""
    if ray is None:
        if workers is not None:
            raise ValueError("--ray-workers needs --ray ADDRESS (local, auto or HOST:PORT)")
        return nullcontext(None)  # run_sweep: `concurrency` threads (serial at 1)
    from medground.eval.distributed import RayExecutor, RayExecutorSettings
    from medground.raycluster import RaySettings

    return RayExecutor(RayExecutorSettings(ray=RaySettings(address=ray, workers=workers), concurrency=concurrency))


_CONCURRENCY_HELP = "Questions in flight per run (per Ray worker with --ray); default: the sweep's `concurrency`, else 1."
_RAY_HELP = ("Answer on workers: local (worker processes on this machine; nothing listens on the network), "
             "auto (a running Ray cluster, else local) or HOST:PORT / ray://HOST:PORT of a Ray cluster.")


def _load_mapping(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of pipeline settings at the top level")
    return data


@eval_app.command("eval")
@app.command("eval")
def eval_cmd(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (see medground.eval.datasets.DATASETS)."),
    pipeline: str = typer.Option(..., "--pipeline", "-p",
                                 help="A shipped config's name (direct, rag, amt, ...) or a pipeline YAML path."),
    subset_n: int = typer.Option(None, "--subset", "-n", help="Deterministic subset of N questions."),
    seed: int = typer.Option(0, help="Subset seed."),
    split: str = typer.Option(None, help="Dataset split (default: the set's first)."),
    path: Path = typer.Option(None, help="Dataset file (required for user formats such as medqa-jsonl)."),
    runs_dir: Path = typer.Option(None, help="Where runs are written (default $MEDGROUND_HOME/runs)."),
    factory: str = typer.Option(None, help="Pipeline factory module:function."),
    retry_errors: bool = typer.Option(False, help="Re-run questions whose record is an error."),
    concurrency: int = typer.Option(1, min=1, help="Questions in flight (threads; for an HTTP LLM server)."),
    crossfit_fold: int = typer.Option(
        None, "--crossfit-fold", min=0,
        help="Only the questions of this cross-fit fold (as `train biencoder --crossfit-fold` splits them), for a "
             "config whose retriever was trained with the other folds."),
    crossfit_folds: int = typer.Option(2, "--crossfit-folds", min=2),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run one pipeline config on one dataset (resumes if the same run exists)."""
    try:
        from medground.pipelines.config import resolve_pipeline

        path_ = resolve_pipeline(pipeline)
        if factory is None:  # the real pipelines: a typo is an error naming the file, line and key
            from medground.pipelines.config import load_pipeline_config

            load_pipeline_config(path_)
        config = _load_mapping(path_)
        # The config file's name labels the run (reports and run names say which config it was).
        crossfit = CrossFitSpec(fold=crossfit_fold, folds=crossfit_folds) if crossfit_fold is not None else None
        settings = SweepSettings(name="eval", base=config, base_axes={"config": path_.stem}, datasets=[DatasetSpec(
            name=dataset, split=split, path=str(path) if path else None, subset=subset_n, seed=seed,
            crossfit=crossfit)], concurrency=concurrency)
        make = resolve_factory(factory)
        result = run_sweep(settings, make, _runs_dir(runs_dir), retry_errors=retry_errors, progress=not as_json)
    except (ConfigError, FactoryMissingError, KeyError, ValueError, FileNotFoundError, RunLockedError) as exc:
        _fail(_why(exc), as_json)
    _emit(result, as_json)


def run_filter(only: str | None):
    """``--only``: a run name contains the text; with a trailing ``$`` the text must end at an axis
    value's end (before "," or the name's end): ``config=rag-focus$`` is not ``config=rag-focus-mined``."""
    if not only:
        return None
    if only.endswith("$") and only != "$":
        pattern = re.compile(re.escape(only[:-1]) + r"(?=,|$)")
        return lambda name: pattern.search(name) is not None
    return lambda name: only in name


@sweep_app.command("sweep")
@app.command("sweep")
def sweep_cmd(
    grid: Path = typer.Argument(..., help="Sweep YAML (see configs/sweeps/study.yaml)."),
    runs_dir: Path = typer.Option(None, help="Where runs are written (default $MEDGROUND_HOME/runs)."),
    only: str = typer.Option(None, help="Only runs whose name contains this text; a trailing $ anchors it at the "
                                        "name's end (config=rag-focus$ is not config=rag-focus-mined)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the runs and exit."),
    factory: str = typer.Option(None, help="Pipeline factory module:function."),
    retry_errors: bool = typer.Option(False, help="Re-run questions whose record is an error."),
    concurrency: int = typer.Option(None, min=1, help=_CONCURRENCY_HELP),
    ray: str = typer.Option(None, "--ray", metavar="ADDRESS", help=_RAY_HELP),
    ray_workers: int = typer.Option(None, min=1, help="Ray worker actors (default: the cluster's CPUs)."),
    as_json: bool = typer.Option(False, "--json", help="Print summaries as JSON."),
) -> None:
    """Expand a grid into runs and run (or resume) each; a killed sweep resumes where it stopped."""
    try:
        settings = load_sweep(grid)
        if concurrency is not None:
            settings = settings.model_copy(update={"concurrency": concurrency})
        selected = run_filter(only)
        runs = [r for r in expand(settings) if selected is None or selected(r.name)]
        if not runs:
            raise ValueError(f"no run of {grid} matches --only {only!r} (`--dry-run` without --only lists them)")
        if dry_run:
            rows = [{"run_id": r.run_id, "name": r.name, "axes": r.axes} for r in runs]
            if as_json:
                typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
            else:
                for r in rows:
                    typer.echo(f"{r['run_id']}  {r['name']}")
                typer.echo(f"{len(rows)} runs")
            return
        make = resolve_factory(factory)
        with _executor(ray, ray_workers, settings.concurrency) as executor:
            result = run_sweep(settings, make, _runs_dir(runs_dir), retry_errors=retry_errors, progress=not as_json,
                               only=(lambda r: selected(r.name)) if selected else None, executor=executor)
    except (ConfigError, FactoryMissingError, KeyError, ValueError, FileNotFoundError, RunLockedError,
            RayUnavailableError) as exc:
        _fail(_why(exc), as_json)
    _emit(result, as_json)


@report_app.command("report")
@app.command("report")
def report_cmd(
    runs_dir: Path = typer.Argument(..., help="Directory of run directories (each with results.jsonl)."),
    out: Path = typer.Option(None, "--out", "-o", help="Output directory (default RUNS_DIR/report)."),
    as_json: bool = typer.Option(False, "--json", help="Print the tables as JSON."),
) -> None:
    """Write report.md, report.html and PNG plots for every run in RUNS_DIR."""
    from medground.eval.records import CorruptRecordsError
    from medground.eval.report import write_report

    out = out or runs_dir / "report"
    try:
        rep = write_report(runs_dir, out)
    except (FileNotFoundError, CorruptRecordsError) as exc:
        _fail(str(exc), as_json)
    if as_json:
        typer.echo(json.dumps({"out": str(out), "images": [f for _, f in rep.images],
                               "tables": [{"title": t.title, "headers": t.headers, "rows": t.rows} for t in rep.tables]},
                              ensure_ascii=False, indent=2))
    else:
        typer.echo(f"wrote {out / 'report.md'}, {out / 'report.html'} and {len(rep.images)} plots")


@coverage_app.command("coverage")
def coverage_cmd(
    dataset: str = typer.Option(..., "--dataset", "-d", help="A multiple-choice set (medagents/medqa, mirage/mmlu, ...)."),
    retriever: str = typer.Option("bm25", "--retriever", "-r",
                                  help="bm25 | dense | splade | hybrid (bm25 + dense, RRF), over the chunk store's indexes."),
    config: str = typer.Option(None, help="Instead of --retriever: a pipeline config whose retrieve section is used."),
    k: str = typer.Option("1,5,10", help="Cut-offs, comma-separated."),
    subset_n: int = typer.Option(200, "--subset", "-n", help="Deterministic subset of N questions (0: all)."),
    seed: int = typer.Option(0, help="Subset seed."),
    split: str = typer.Option(None, help="Dataset split (default: the set's first)."),
    path: Path = typer.Option(None, help="Dataset file (for user formats such as medqa-jsonl)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The reader's ceiling: how often the gold option's text is in the top k passages, with the
    query from the question alone and from the question with its options."""
    from rich.console import Console
    from rich.table import Table

    from medground.eval.coverage import coverage
    from medground.eval.datasets import load_dataset, subset
    from medground.retrieve.engine import RetrievalEngine, RetrieveSettings

    try:
        cuts = sorted({int(x) for x in k.split(",") if x.strip()})
        if not cuts or cuts[0] < 1:
            raise ValueError(f"--k {k!r}: expected positive integers such as 1,5,10")
        if config:
            from medground.pipelines.config import load_pipeline_config

            settings = load_pipeline_config(config).retrieve
        else:
            names = ["bm25", "dense"] if retriever == "hybrid" else [retriever]
            settings = RetrieveSettings(retrievers=names, fusion="rrf" if len(names) > 1 else None, final_k=max(cuts))
        settings = settings.model_copy(update={"final_k": max(cuts)})  # ranked passages, before packing
        questions = subset(load_dataset(dataset, path, split), subset_n or None, seed)
        engine = RetrievalEngine(settings)
        out = coverage(questions, lambda query, n: engine.retrieve(query, k=n), cuts)
    except (ConfigError, KeyError, ValueError, FileNotFoundError) as exc:
        _fail(_why(exc), as_json)
    retrievers = [getattr(r, "name", r) for r in settings.retrievers]
    out = {"dataset": dataset, "retrievers": retrievers, "fusion": settings.fusion, **out}
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    table = Table(title=f"{dataset}: gold option text in the top k ({out['n']} questions, {'+'.join(retrievers)})")
    for col in ("query", "k", "covered", "share", "95% CI"):
        table.add_column(col)
    for r in out["rows"]:
        table.add_row(r["query"], str(r["k"]), f"{r['covered']}/{r['n']}", f"{r['share']:.1%}",
                      f"{r['ci95'][0]:.1%}-{r['ci95'][1]:.1%}")
    Console().print(table)


@attribution_app.command("attribution")
def attribution_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory (with results.jsonl) of free-text answers."),
    judge: str = typer.Option("lexical", help="lexical (content terms in the passage) | llm (one yes/no token)."),
    model: str = typer.Option("qwen2.5-coder-1.5b", help="llm judge: the model."),
    threshold: float = typer.Option(None, help="P(supported) at or above which a claim counts as stated "
                                              "(default: 0.7 lexical; the fitted value for llm, benchmarks/attribution.py)."),
    threads: int = typer.Option(2, help="llm judge: CPU threads."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Claim-level attribution of a run's free-text answers: each claim checked against the passages
    it cites; citation precision and recall. Writes RUN_DIR/attribution.json (the report shows it)."""
    from medground.eval import attribution as attr
    from medground.reading import claims
    from medground.eval.records import CorruptRecordsError, read_run, write_json_atomic
    from medground.store.settings import StoreMissingError, open_store

    try:
        _, records = read_run(run_dir)
    except (FileNotFoundError, CorruptRecordsError) as exc:
        _fail(str(exc), as_json)
    if judge == "lexical":
        scorer, cut = claims.LexicalClaimJudge(), claims.LEXICAL_THRESHOLD if threshold is None else threshold
    elif judge == "llm":
        from medground.llm.base import LLMSettings, create_llm

        scorer, cut = claims.LLMClaimJudge(create_llm(LLMSettings(model=model, threads=threads))), (
            claims.LLM_THRESHOLD if threshold is None else threshold)
    else:
        _fail(f"--judge {judge!r}: expected lexical or llm", as_json)
    if not attr.free_text_answers(records):
        _fail(f"{run_dir}: no answered free-text questions to attribute", as_json)
    try:
        store = open_store(must_exist=True)
    except StoreMissingError as exc:
        _fail(str(exc), as_json)
    out = attr.attribute_run(records, store, scorer, cut)
    write_json_atomic(run_dir / attr.ATTRIBUTION, out)
    summary = {k: v for k, v in out.items() if k != "per_answer"}
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        typer.echo(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in summary.items()))
