"""Does evidence compression keep the sentence that answers? No LLM: retrieval and compression only.
Merges the section "compression" into benchmarks/results/reader.json.

Every answerable-set question (benchmarks/data/answerable_textbooks.jsonl; each names the textbook
sentence that answers it, field "evidence") is retrieved as configs/pipelines/rag.yaml retrieves
(hybrid over the textbooks, 8 passages packed into 1,600 tokens). Where the packed evidence holds
that sentence, each compression variant (retrieve/compress.py) cuts it to the reader's budget and
we count whether the sentence survives, asked with the options (multiple choice) and without them
(free text). The first half of the set is where the variants were chosen; the second half checks
them. Exact McNemar on the questions both variants could keep: a variant vs the lexical baseline.

A second, fairer count (rows "metric: answer"): where the packed evidence states the gold option's
text (whole words, ``contains_answer``), whether the compressed evidence still does. The named
sentence is one of several that can answer ("all are transmitted by Anopheles mosquitoes" answers
as well as the set's "transmitted through the bite of Anopheles mosquitoes"), so the sentence
count undercounts what the reader is left.

    python benchmarks/compression.py [--budget 350]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from medground.eval.bench import print_table, save_section
from medground.eval.coverage import holds_sentence
from medground.eval.evaluators import mcnemar_row
from medground.eval.testbeds import load_answerable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "reader.json"
ANSWERABLE = ROOT / "benchmarks" / "data" / "answerable_textbooks.jsonl"
CONFIGS = ROOT / "configs" / "pipelines"

# (name, neighbor_weight, rank_weight)
VARIANTS = [
    ("lexical (shipped)", 0.0, 0.0),
    ("neighbour 0.5", 0.5, 0.0),
    ("rank 1.0", 0.0, 1.0),
    ("neighbour 0.5 + rank 1.0", 0.5, 1.0),
    ("neighbour 1.0 + rank 2.0", 1.0, 2.0),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=350, help="compression budget in tokens (rag.yaml: 350)")
    args = ap.parse_args()

    from medground.eval.retrieval_metrics import contains_answer
    from medground.pipelines.base import Tally
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline
    from medground.retrieve.compress import compress
    from medground.schema import Query

    pipe = build_pipeline(load_pipeline_config(CONFIGS / "rag.yaml"))
    engine = pipe.engine
    items = load_answerable(ANSWERABLE)
    half = len(items) // 2
    kept: dict[tuple[str, str, bool], list[tuple[int, bool]]] = {}
    packed_holds = packed_states = 0
    for i, (q, d) in enumerate(items):
        ev = Tally().evidence(engine, [Query(q.question)])
        gold = q.options[q.answer]
        checks = {"sentence": lambda cs: holds_sentence(cs, d["evidence"]),
                  "answer": lambda cs: any(contains_answer(c.text, gold) for c in cs)}
        checks = {metric: held for metric, held in checks.items() if held(ev.citations)}
        packed_holds += "sentence" in checks
        packed_states += "answer" in checks
        for name, nb, rank in VARIANTS:
            for with_options in (True, False):
                out = compress(ev, q.question, q.options if with_options else None, budget_tokens=args.budget,
                               count_tokens=engine.count_tokens, neighbor_weight=nb, rank_weight=rank)
                for metric, held in checks.items():
                    kept.setdefault((metric, name, with_options), []).append((i, held(out.citations)))

    rows = []
    for metric, with_options in [(m, o) for m in ("sentence", "answer") for o in (True, False)]:
        base = [k for _, k in kept[(metric, VARIANTS[0][0], with_options)]]
        for name, nb, rank in VARIANTS:
            pairs = kept[(metric, name, with_options)]
            flags = [k for _, k in pairs]
            rows.append({"metric": metric, "asked": "with options" if with_options else "free text", "variant": name,
                         "neighbor_weight": nb, "rank_weight": rank, "n": len(pairs), "kept": sum(flags),
                         "kept_dev_half": sum(k for j, k in pairs if j < half),
                         "kept_test_half": sum(k for j, k in pairs if j >= half),
                         "n_dev_half": sum(j < half for j, _ in pairs),
                         "mcnemar_vs_lexical": None if name == VARIANTS[0][0] else mcnemar_row(base, flags)})
    save_section(RESULTS, "compression", {
        "set": "benchmarks/data/answerable_textbooks.jsonl", "n_questions": len(items),
        "packed_evidence_holds_sentence": packed_holds, "packed_evidence_states_gold_option": packed_states,
        "budget_tokens": args.budget, "retrieval": "configs/pipelines/rag.yaml (hybrid RRF, 8 passages, 1,600 tokens)",
        "rows": rows})
    print(f"answer sentence in the packed evidence: {packed_holds}/{len(items)}; "
          f"gold option's text: {packed_states}/{len(items)}")
    print_table(f"Answer sentence (metric sentence) or gold option text (metric answer) kept after compression "
                f"to {args.budget} tokens", rows,
                ["metric", "asked", "variant", "n", "kept", "n_dev_half", "kept_dev_half", "kept_test_half",
                 "mcnemar_vs_lexical"])


if __name__ == "__main__":
    main()
