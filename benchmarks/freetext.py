"""Free-text textbook answers: does the support gate abstain on the wrong evidence, and do the
answers follow the passages they cite? Merges the section "freetext" into
benchmarks/results/reader.json.

Every question of the answerable set (benchmarks/data/answerable_textbooks.jsonl) is asked
WITHOUT its options, through the default reader's retrieval (configs/pipelines/rag.yaml:
hybrid over the textbooks, compressed to its evidence budget):

  retrieved  the evidence retrieved for the question itself;
  wrong      the evidence retrieved for another question of the set (question i + n/2).

Support = 1 - P("0") from one forward pass ("which passage answers, 0 = none"). The abstention
threshold is fitted on the first half (maximising right-abstention + 1 - wrong-abstention, where
wrong-abstention counts questions whose retrieved evidence holds the gold chunk) and reported on
the second half. Answers on the retrieved evidence in three modes (generate, checked,
extractive) are scored by
  gold      the answer names the gold option and no other (>= 60 % of an option's content terms
            in the answer; a lexical proxy for a right free-text answer, the options were never
            shown);
  supported every sentence has >= 70 % of its content terms in the passages it cites
            (pipelines.support.claims_supported).

    python benchmarks/freetext.py [--n 40] [--config configs/pipelines/variants/rag-neighbor.yaml --section freetext_neighbor]
                                          (a variant's section is paired with "freetext": --paired-with)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from medground.eval.bench import print_table, save_section
from medground.eval.evaluators import accuracy_row, fit_threshold, gate_rates, mcnemar_row, rate, scored_rows
from medground.eval.testbeds import load_answerable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "reader.json"
ANSWERABLE = ROOT / "benchmarks" / "data" / "answerable_textbooks.jsonl"
CONFIGS = ROOT / "configs" / "pipelines"


def names_gold(answer: str, options: dict[str, str], gold: str) -> bool:
    """The answer names the gold option and no other: an option is named when >= 60 % of its
    content terms (BM25 stems) are in the answer ("aquaporin water channels" names "Aquaporins")."""
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    said = set(tok.tokenize(answer))
    named = set()
    for k, v in options.items():
        terms = set(tok.tokenize(v))
        if terms and len(terms & said) / len(terms) >= 0.6:
            named.add(k)
    return named == {gold}


def gate_side(pairs: list[dict], unanswerable: bool) -> list[dict]:
    return scored_rows(pairs, "wrong_support" if unanswerable else "gold_support", unanswerable=unanswerable)


def support_gate(rows: list[dict]) -> tuple[float, list[dict]]:
    """The threshold fitted on the first half, and the gate's rates on each half. Wrong abstention
    counts only questions whose retrieved evidence holds the gold chunk; right abstention only those
    whose wrong evidence does not."""
    n = len(rows)
    dev, test = rows[: n // 2], rows[n // 2:]
    fit_on = [r for r in dev if r["gold_chunk_in_evidence"]] or dev
    threshold = fit_threshold(gate_side(fit_on, False) + gate_side(fit_on, True))
    out = []
    for name, part in (("dev", dev), ("test", test)):
        answerable_part = [r for r in part if r["gold_chunk_in_evidence"]]
        g = gate_rates(gate_side(answerable_part, False)
                       + gate_side([r for r in part if not r["gold_chunk_in_wrong"]], True), threshold)
        out.append({"split": name, "n": len(part), "threshold": threshold,
                    "n_gold_chunk_retrieved": len(answerable_part),
                    "wrong_abstention": g["wrong_abstention"]["rate"],
                    "right_abstention": g["right_abstention"]["rate"]})
    return threshold, out


def answers(rows: list[dict], modes: tuple[str, ...]) -> list[dict]:
    """Per answer mode: names the gold option (a rate), supported share of the answers given,
    cites the gold chunk, seconds per question, exact McNemar against generate."""
    out = []
    for mode in modes:
        gold = [r[mode]["gold"] for r in rows]
        out.append({"mode": mode, **accuracy_row(gold),
                    "supported": rate([r[mode]["supported"] for r in rows if r[mode]["outcome"] == "answered"])["rate"],
                    "cites_gold_chunk": sum(r[mode]["cites_gold_chunk"] for r in rows),
                    "seconds_per_q": round(sum(r[mode]["seconds"] for r in rows) / len(rows), 2),
                    "mcnemar_vs_generate": None if mode == "generate" else
                    mcnemar_row([r["generate"]["gold"] for r in rows], gold)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=None, help="questions (default: the whole set)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--config", type=Path, default=CONFIGS / "rag.yaml",
                    help="pipeline config whose retrieval, compression and reader settings are used")
    ap.add_argument("--section", default="freetext", help="reader.json section to write")
    ap.add_argument("--paired-with", default="freetext", metavar="SECTION",
                    help="another reader.json section of this benchmark: exact McNemar per mode against it")
    args = ap.parse_args()

    from medground.reading import support as sup
    from medground.pipelines.base import ReaderSettings, Tally, focus, free_text_answer
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline
    from medground.schema import Query, Question

    cfg = load_pipeline_config(args.config)
    config_name = args.config.resolve().relative_to(ROOT) if args.config.resolve().is_relative_to(ROOT) else args.config
    cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": args.threads})})
    pipe = build_pipeline(cfg)
    llm, engine, reader = pipe.llm, pipe.engine, pipe.reader
    items = load_answerable(ANSWERABLE)[: args.n]
    n = len(items)

    evidence = []
    for q, _ in items:
        free = Question(qid=q.qid, dataset="answerable-free", question=q.question)
        evidence.append((free, focus(Tally().evidence(engine, [Query(q.question)]), free, reader, engine, Tally())))

    modes = ("generate", "checked", "extractive")
    rows = []
    for i, ((q, d), (free, ev)) in enumerate(zip(items, evidence)):
        wrong_ev = evidence[(i + n // 2) % n][1]
        gold = d["gold_ids"]  # the chunks holding the evidence sentence in this store
        row = {"qid": q.qid, "gold_chunk_in_evidence": bool(gold & {c.chunk_id for c in ev.citations}),
               "gold_chunk_in_wrong": bool(gold & {c.chunk_id for c in wrong_ev.citations})}
        for label, e in (("gold", ev), ("wrong", wrong_ev)):
            s, _ = sup.passage_support(llm, e, "passage_support", question=free.question)
            row[f"{label}_support"] = s.score
            if label == "gold":
                row["supporting_passage_is_gold_chunk"] = bool(s.passage and s.passage.chunk_id in gold)
        for mode in modes:
            t = time.perf_counter()
            ans = free_text_answer(llm, free, ev, ReaderSettings(freetext_answer=mode), Tally(),
                                   count_tokens=engine.count_tokens)
            cited = " ".join(c.text for c in ans.citations)
            said = ans.metadata.get("quoted") or ans.text  # a quote's "Book / chapter:" label is no claim
            row[mode] = {"text": ans.text, "outcome": ans.outcome, "seconds": round(time.perf_counter() - t, 2),
                         "gold": ans.outcome == "answered" and names_gold(ans.text, q.options, q.answer),
                         "supported": ans.outcome == "answered"
                         and sup.claims_supported(said, cited, exclude=[free.question]),
                         "cites_gold_chunk": bool(gold & {c.chunk_id for c in ans.citations}),
                         "quoted": bool(ans.metadata.get("extractive")),
                         "dropped_sentences": len(ans.metadata.get("dropped_sentences", []))}
        # whether the answer given would be supported (kept per question, as the drugs section does)
        row["gold_supported"] = row["checked"]["supported"]
        rows.append(row)
        print(f"freetext {i + 1}/{n}", file=sys.stderr, flush=True)

    threshold, gate_rows = support_gate(rows)
    answer_rows = answers(rows, modes)
    if args.paired_with != args.section and RESULTS.exists():
        other = json.loads(RESULTS.read_text()).get(args.paired_with)
        if other:  # the same questions answered with another config (e.g. shipped vs a variant)
            by_qid = {r["qid"]: r for r in other["per_question"]}
            both = [r for r in rows if r["qid"] in by_qid]
            for row in answer_rows:
                m = row["mode"]
                row[f"mcnemar_vs_{args.paired_with}"] = {
                    "n": len(both), **mcnemar_row([by_qid[r["qid"]][m]["gold"] for r in both], [r[m]["gold"] for r in both])}
    fallback = sum(r["checked"]["quoted"] for r in rows)
    trimmed = sum(not r["checked"]["quoted"] and r["checked"]["dropped_sentences"] > 0 for r in rows)
    save_section(RESULTS, args.section, {
        "set": "benchmarks/data/answerable_textbooks.jsonl (asked without options)", "n": n,
        "config": f"{config_name} retrieval and compression",
        "gold_chunk_in_evidence": sum(r["gold_chunk_in_evidence"] for r in rows),
        "support_gate": {"threshold_fitted_on_dev": threshold, "rows": gate_rows},
        "answers": answer_rows, "checked_fell_back_to_quote": fallback,
        "checked_dropped_unsupported_sentences": trimmed, "per_question": rows})
    print(f"gold chunk in the retrieved evidence: {sum(r['gold_chunk_in_evidence'] for r in rows)}/{n}")
    print_table(f"Support gate, threshold {threshold} fitted on dev", gate_rows,
                ["split", "n", "n_gold_chunk_retrieved", "wrong_abstention", "right_abstention"])
    print_table(f"Free-text answers n={n} (gold = names the gold option's text and no other)", answer_rows,
                ["mode", "accuracy", "ci95", "supported", "cites_gold_chunk", "seconds_per_q", "mcnemar_vs_generate"])
    print(f"checked: quoted the supporting passage on {fallback}/{n}, dropped unsupported sentences on {trimmed}/{n}")


if __name__ == "__main__":
    main()
