"""`medground train`: LLM-feedback labels and a reranker fine-tuned on them; RagPULSE tool-call data and LoRA."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True)


RULE_HELP = ("gain (P(gold) rises >= margin) | flip (wrong -> right, LLM-AMT) | verified (gain, and the passage "
             "states the gold option's text; needs --answers).")
ANSWERS_HELP = ("The dataset the feedback was collected on (e.g. mirage/medmcqa): passages stating the gold "
                "option's text are never hard negatives; needed by --rule verified.")


@app.command()
def candidates(
    out: Path = typer.Option(..., help="JSONL file of retrieved passages per question (resumes if it exists)."),
    dataset: str = typer.Option("medagents/medmcqa", help="A multiple-choice set with gold letters."),
    subset: Optional[int] = typer.Option(400, help="Seeded subset size (0 = all)."),
    seed: int = typer.Option(0),
    config: str = typer.Option("feedback", help="Pipeline config (a shipped name or a YAML path) whose retrieve section is used."),
    passages: int = typer.Option(16, min=1, help="Passages stored per question."),
) -> None:
    """Retrieve and store each question's passages, so `train feedback --candidates` can judge them
    on another machine (a GPU box) without the indexes."""
    from medground.eval.datasets import load_dataset
    from medground.eval.datasets import subset as take
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import shared_engine
    from medground.train.feedback import write_candidates

    cfg = load_pipeline_config(config)
    questions = [q for q in load_dataset(dataset) if q.options and (q.answer or "") in q.options]
    if subset:
        questions = take(questions, subset, seed=seed)
    n = write_candidates(shared_engine(cfg.retrieve), questions, out, passages, progress=True)
    typer.echo(json.dumps({"written": n, "file": str(out)}))


@app.command()
def mine(
    out: Path = typer.Option(..., help="JSONL file of mined candidates per question (resumes if it exists)."),
    datasets: list[str] = typer.Option(["mirage/medmcqa"], "--dataset", help="Multiple-choice sets (repeat)."),
    exclude_n: int = typer.Option(200, min=0, help="Never mine each set's seeded N-question subset (what the "
                                                   "benchmarks evaluate; 0 = exclude nothing)."),
    exclude_seed: int = typer.Option(0),
    evaluated_sets: Optional[list[str]] = typer.Option(
        None, "--evaluated", help="Sets whose seeded subsets are excluded (repeat; default: the mined sets). Their "
                                  "near-duplicates are dropped from every mined set."),
    near_duplicate: float = typer.Option(0.6, min=0.0, max=1.0,
                                         help="Also drop questions with word-set Jaccard >= this to an excluded one."),
    config: str = typer.Option("feedback", help="Pipeline config (a shipped name or a YAML path) whose retrieve section is used."),
    passages: int = typer.Option(20, min=1, help="The question's own passages stored (hard negatives)."),
    mined: int = typer.Option(20, min=1, help="Passages stored per mining query (question + gold option text, then "
                                              "the gold text alone; positives only)."),
) -> None:
    """Answer-aware mining: each question's own top passages and those found with its gold option's
    text, for `train biencoder --mined` (no LLM)."""
    from medground.eval.datasets import load_dataset
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import shared_engine
    from medground.train.mining import evaluated_ids, near_duplicates, question_key, write_mined

    questions = [q for ds in datasets for q in load_dataset(ds) if q.options and (q.answer or "") in q.options]
    excluded: set[str] = set()
    if exclude_n:
        excluded, evaluated = evaluated_ids(evaluated_sets or datasets, exclude_n, exclude_seed)
        excluded |= near_duplicates([q for q in questions if question_key(q) not in excluded], evaluated,
                                    near_duplicate)
    kept = [q for q in questions if question_key(q) not in excluded]
    typer.echo(json.dumps({"questions": len(questions), "excluded": len(questions) - len(kept)}), err=True)
    cfg = load_pipeline_config(config)
    n = write_mined(shared_engine(cfg.retrieve), kept, out, passages, mined, progress=True)
    typer.echo(json.dumps({"written": n, "file": str(out), "excluded": len(questions) - len(kept)}))


@app.command()
def feedback(
    out: Path = typer.Option(..., help="JSONL file to write (resumes if it exists)."),
    dataset: str = typer.Option("medagents/medmcqa", help="A multiple-choice set with gold letters."),
    subset: Optional[int] = typer.Option(200, help="Seeded subset size (0 = all)."),
    seed: int = typer.Option(0),
    config: str = typer.Option("rag",
                                help="Pipeline config (a shipped name or a YAML path) whose llm and retrieve sections are used."),
    model: Optional[str] = typer.Option(None, help="Override the config's LLM."),
    backend: Optional[str] = typer.Option(None, help="Override the config's LLM backend (local | openai | transformers)."),
    passages: int = typer.Option(8, min=1, help="Retrieved passages judged per question."),
    candidates_file: Optional[Path] = typer.Option(
        None, "--candidates", exists=True, dir_okay=False,
        help="Judge the questions and passages stored by `train candidates` (no retrieval; --dataset/--subset ignored)."),
) -> None:
    """Judge retrieved passages by whether they turn the LLM's wrong answer right."""
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import shared_llm
    from medground.train.feedback import CandidateSet, FeedbackSettings

    cfg = load_pipeline_config(config)
    update = {k: v for k, v in (("model", model), ("backend", backend)) if v}
    llm_settings = cfg.llm.model_copy(update=update) if update else cfg.llm
    if candidates_file is not None:
        source = CandidateSet(candidates_file)
        questions = source.questions
    else:
        from medground.eval.datasets import load_dataset
        from medground.eval.datasets import subset as take
        from medground.pipelines.factory import shared_engine

        questions = load_dataset(dataset)
        if subset:
            questions = take(questions, subset, seed=seed)
        source = shared_engine(cfg.retrieve)
    report = _collect(shared_llm(llm_settings), source, questions, out, FeedbackSettings(passages=passages))
    typer.echo(json.dumps(asdict(report), indent=2))


def _collect(llm, source, questions, out: Path, settings):
    """``feedback.collect`` with progress; a file another process is writing is a clean exit 2."""
    from medground.train.feedback import FeedbackLockedError, collect

    try:
        return collect(llm, source, questions, out, settings, progress=True)
    except FeedbackLockedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command("judge-mined")
def judge_mined(
    mined_files: list[Path] = typer.Option(..., "--mined", exists=True, dir_okay=False,
                                           help="From `train mine` (repeat; question ids must not repeat)."),
    out: Path = typer.Option(..., help="Feedback JSONL to write (resumes if it exists)."),
    config: str = typer.Option("rag", help="Pipeline config (a shipped name or a YAML path) whose llm section is used."),
    model: Optional[str] = typer.Option(None, help="Override the config's LLM."),
    backend: Optional[str] = typer.Option(None, help="Override the config's LLM backend (local | openai | transformers)."),
    max_positives: int = typer.Option(2, min=1, help="Answer-stating passages judged per question (as in training)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Judge only a seeded sample of this many questions."),
    seed: int = typer.Option(0, help="Order of the questions (a killed run resumes; its prefix is a random sample)."),
) -> None:
    """The reader's feedback on mined labels: closed book, then each answer-stating positive and its
    paired hard negative as context, for `train biencoder --mined … --judged` (LLM-AMT's signal)."""
    import random

    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import shared_llm
    from medground.train.feedback import FeedbackSettings, load_feedback
    from medground.train.mining import MinedJudgeSource, load_mined

    items = [it for f in mined_files for it in load_mined(f)]
    source = MinedJudgeSource(items, max_positives)
    questions = list(source.questions)
    # feedback is resumed by question id: one id must name one question, in --out and in this call
    asked = {j.qid: j.query for j in load_feedback(out)} if out.is_file() else {}
    for q in questions:
        if asked.setdefault(q.qid, q.question) != q.question:
            raise typer.BadParameter(f"question id {q.qid!r} ({q.dataset}) is already used in {out} or the --mined "
                                     "files for another question: judge each set into its own --out file",
                                     param_hint="--mined")
    random.Random(seed).shuffle(questions)
    if limit:
        questions = questions[:limit]
    cfg = load_pipeline_config(config)
    update = {k: v for k, v in (("model", model), ("backend", backend)) if v}
    llm_settings = cfg.llm.model_copy(update=update) if update else cfg.llm
    typer.echo(json.dumps({"mined_questions": len(items), "judgeable": len(source.questions),
                           "to_judge": len(questions)}), err=True)
    report = _collect(shared_llm(llm_settings), source, questions, out,
                      FeedbackSettings(passages=2 * max_positives, rule="gain"))
    typer.echo(json.dumps(asdict(report), indent=2))


@app.command()
def reranker(
    feedback_files: list[Path] = typer.Option(..., "--feedback", exists=True, dir_okay=False,
                                              help="From `train feedback` (repeat for several files)."),
    out: Path = typer.Option(..., help="Directory for the fine-tuned CrossEncoder."),
    rule: str = typer.Option("flip", help=RULE_HELP),
    margin: float = typer.Option(0.1),
    holdout: float = typer.Option(0.2, min=0.0, max=0.9, help="Share of questions kept out for evaluation."),
    base_model: Optional[str] = typer.Option(None, help="Start point (default: the bundled MiniLM)."),
    epochs: float = typer.Option(2.0),
    max_negatives: Optional[int] = typer.Option(None, min=1, help="Per question, keep only the N hardest negatives."),
    answers: Optional[str] = typer.Option(None, help=ANSWERS_HELP),
    seed: int = typer.Option(0),
) -> None:
    """Fine-tune a cross-encoder on the feedback and compare it with first-stage order on held-out questions."""
    from medground.train.feedback import training_pairs
    from medground.train.flows import fine_tune
    from medground.train.reranker import RerankerTrainSettings, evaluate, train_reranker

    _report(fine_tune, feedback_files, out, rule, margin, holdout, seed, answers=answers,
            train=lambda js: train_reranker(training_pairs(js, rule, margin, max_negatives=max_negatives), out,
                                            RerankerTrainSettings(base_model=base_model, epochs=epochs, seed=seed)),
            check=lambda js: evaluate(js, out, rule=rule, margin=margin))


@app.command()
def biencoder(
    feedback_files: Optional[list[Path]] = typer.Option(None, "--feedback", exists=True, dir_okay=False,
                                                        help="From `train feedback` (repeat for several files)."),
    candidates_files: Optional[list[Path]] = typer.Option(
        None, "--candidates", exists=True, dir_okay=False,
        help="Instead of --feedback, no LLM: stored candidates from `train candidates`, labelled by whether a "
             "passage states the gold option's text (distant supervision, rule answer)."),
    mined_files: Optional[list[Path]] = typer.Option(
        None, "--mined", exists=True, dir_okay=False,
        help="Instead of --feedback, no LLM: mined candidates from `train mine` (answer-stating positives found "
             "with the gold option's text, hard negatives from the question's own ranking)."),
    out: Path = typer.Option(..., help="Directory for the fine-tuned SentenceTransformer."),
    rule: str = typer.Option("gain", help=RULE_HELP + " With --candidates or --mined the rule is answer."),
    max_positives: int = typer.Option(2, min=1, help="--candidates / --mined: answer-stating passages used per question."),
    margin: float = typer.Option(0.1),
    holdout: float = typer.Option(0.2, min=0.0, max=0.9, help="Share of questions kept out for the held-out check."),
    pubmedqa: bool = typer.Option(True, help="Add PubMedQA question -> own abstract pairs (its 500 test ids left out)."),
    base_model: Optional[str] = typer.Option(None, help="Start point (default: the bundled MiniLM)."),
    epochs: float = typer.Option(1.0),
    batch_size: int = typer.Option(32),
    lr: float = typer.Option(2e-5, min=0.0, help="Peak learning rate (linear warm-up over 10 % of the steps)."),
    threads: Optional[int] = typer.Option(None, min=1, help="Torch CPU threads (default: all cores)."),
    device: Optional[str] = typer.Option(
        None, help="cpu or cuda (default: cuda when available, else cpu; pick a GPU with CUDA_VISIBLE_DEVICES)."),
    answers: Optional[str] = typer.Option(None, help=ANSWERS_HELP),
    seed: int = typer.Option(0),
    crossfit_fold: Optional[int] = typer.Option(
        None, "--crossfit-fold", min=0,
        help="--mined only: leave out this fold of the --crossfit-set questions (and their near-duplicates in every "
             "set) for cross-fitting; `benchmarks/learned.py --only crossfit` evaluates each fold with its model."),
    crossfit_folds: int = typer.Option(2, "--crossfit-folds", min=2),
    crossfit_sets: list[str] = typer.Option(["mirage/medqa", "mirage/mmlu"], "--crossfit-set",
                                            help="The sets split into folds (repeat)."),
    judged_files: Optional[list[Path]] = typer.Option(
        None, "--judged", exists=True, dir_okay=False,
        help="--mined only: the reader's feedback from `train judge-mined` (repeat; the same --max-positives). "
             "A positive must also have helped the reader (--rule gain / flip, --margin) and a negative must not; "
             "questions not judged are not trained on (the held-out check is unchanged)."),
) -> None:
    """Fine-tune the dense retriever's bi-encoder on LLM feedback (MultipleNegativesRanking, hard negatives)."""
    from medground.paths import data_root
    from medground.train.biencoder import (
        BiEncoderTrainSettings,
        feedback_triplets,
        pubmedqa_known_items,
        rank_judged,
        train_biencoder,
    )
    from medground.train.flows import fine_tune, fine_tune_on_answers, fine_tune_on_mined

    if sum(map(bool, (feedback_files, candidates_files, mined_files))) != 1:
        raise typer.BadParameter("give one of --feedback, --candidates or --mined", param_hint="--feedback")
    if crossfit_fold is not None and not mined_files:
        raise typer.BadParameter("cross-fitting needs --mined", param_hint="--crossfit-fold")
    if judged_files and not mined_files:
        raise typer.BadParameter("--judged labels mined items: give --mined too", param_hint="--judged")
    if judged_files and rule not in {"gain", "flip"}:
        raise typer.BadParameter("with --judged the rule is gain or flip", param_hint="--rule")
    if device not in (None, "cpu", "cuda"):
        raise typer.BadParameter(f"{device!r}: expected cpu or cuda (pick a GPU with CUDA_VISIBLE_DEVICES)",
                                 param_hint="--device")
    (out / "trained_questions.txt").unlink(missing_ok=True)  # written again only by a --mined run
    known = pubmedqa_known_items(data_root()) if pubmedqa else []
    settings = BiEncoderTrainSettings(base_model=base_model, epochs=epochs, batch_size=batch_size,
                                      learning_rate=lr, threads=threads, seed=seed, device=device)
    if candidates_files:
        _report(fine_tune_on_answers, candidates_files, out, holdout, seed, max_positives, settings, known)
        return
    if mined_files:
        from medground.train.mining import CrossFit

        try:
            crossfit = (CrossFit(tuple(crossfit_sets), crossfit_fold, crossfit_folds)
                        if crossfit_fold is not None else None)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--crossfit-fold") from None
        judged = None
        if judged_files:
            from medground.train.feedback import load_feedback

            judged = ([j for f in judged_files for j in load_feedback(f)], rule, margin)
        _report(fine_tune_on_mined, mined_files, out, holdout, seed, max_positives, settings, known, crossfit, judged)
        return
    _report(fine_tune, feedback_files, out, rule, margin, holdout, seed, answers=answers,
            train=lambda js: train_biencoder(feedback_triplets(js, rule, margin), out, settings, known_items=known),
            check=lambda js: {"base": rank_judged(js, base_model, rule=rule, margin=margin),
                              "fine_tuned": rank_judged(js, out, rule=rule, margin=margin)})


def _report(flow, *args, **kwargs) -> None:
    """Run a training flow and print its held-out report; a failure the user can fix is a clean exit 2."""
    from medground.train.flows import TrainInputError

    try:
        result = flow(*args, **kwargs)
    except TrainInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(json.dumps(result, indent=2))


@app.command("toolcall-data")
def toolcall_data(
    out: Path = typer.Option(..., help="JSONL file to write (chat format with tools)."),
    n: int = typer.Option(2000, min=1, help="Examples to build."),
    seed: int = typer.Option(0),
    dev_share: float = typer.Option(0.1, min=0.0, max=0.9, help="Share of drugs kept for the dev split."),
) -> None:
    """Build RagPULSE's distillation data: consultations → search_engine(keywords), from the database."""
    from medground.store.drugs import DrugStore
    from medground.train.toolcall_data import build, write_jsonl

    store = DrugStore()
    store.require_built()
    counts = write_jsonl(build(store.drugs(), store.attributes(), n, seed=seed, dev_share=dev_share), out)
    typer.echo(json.dumps({"out": str(out), "examples": counts}))


@app.command("toolcall-lora")
def toolcall_lora(
    data: Path = typer.Option(..., exists=True, dir_okay=False, help="From `train toolcall-data`."),
    out: Path = typer.Option(..., help="Directory for the LoRA adapter."),
    base: str = typer.Option(..., help="HF model directory / hub name, or a .gguf file (dequantized)."),
    steps: int = typer.Option(100, min=1),
    batch_size: int = typer.Option(8, min=1),
    lr: float = typer.Option(2e-4),
    rank: int = typer.Option(8, min=1),
) -> None:
    """LoRA-fine-tune a chat model to make the tool call (PEFT; a GPU is used when present)."""
    from medground.train.lora import LoraSettings, train_lora

    settings = LoraSettings(base=base, steps=steps, batch_size=batch_size, lr=lr, rank=rank)
    try:
        summary = train_lora(data, out, settings,
                             progress=lambda step, loss: typer.echo(f"step {step}/{steps} loss {loss:.4f}", err=True))
    except (ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(json.dumps(summary, indent=2))
