"""Options that share an evidence sentence with the question's rare words, weighted up (session 27).

A simulation over a stored multiple-choice run of the rewording test bed (no LLM call): each
option's support is the best share, over the cited passages' sentences that name the option's own
terms (at least half of those no other option has), of the question's IDF weight those sentences
hold (the question's terms minus every option's; IDF over the textbook chunks). The reader's
letter probability p(X) becomes p(X)·exp(beta · support(X)). Dev only: it decides whether the
weight is worth building into the reader.

    python benchmarks/option_cooccurrence.py --label rag-s24 --split dev   # → reader.json
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rewording as R  # noqa: E402

from medground.eval.bench import print_table, save_section  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "reader.json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="rag-s24")
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    args = ap.parse_args()
    from medground.corpus.sentences import split_spans
    from medground.eval.metrics import mcnemar_test
    from medground.index.text import text_tokenizer
    from medground.store.chunks import ChunkStore

    tok, store = text_tokenizer(), ChunkStore.default()
    df: dict[str, int] = {}
    n_chunks = 0
    for c in store.iter_chunks(["openstax"]):
        n_chunks += 1
        for t in set(tok.tokenize(c.text)):
            df[t] = df.get(t, 0) + 1

    def idf(t: str) -> float:
        return math.log(1 + n_chunks / df.get(t, 1))

    records = R._records(args.label, args.split)
    rows = []
    for q, _ in R.load_testbed(args.split):
        r = records.get(q.qid)
        if r is None or not r.get("option_scores"):
            continue
        terms = {k: set(tok.tokenize(v)) for k, v in q.options.items()}
        asked = set(tok.tokenize(q.question)) - set().union(*terms.values())
        weight = sum(idf(t) for t in asked) or 1.0
        sentences = [set(tok.tokenize(c.text[s:e])) for c in store.get_chunks(r["citation_ids"])
                     for s, e in split_spans(c.text)]
        support = {}
        for k, own in terms.items():
            own = own - set().union(*(v for j, v in terms.items() if j != k))
            need = max(1, math.ceil(len(own) / 2))
            support[k] = max((sum(idf(t) for t in asked & s) / weight for s in sentences
                              if own and len(own & s) >= need), default=0.0)
        rows.append((r["gold"], r["option_scores"], support))

    def right(beta: float) -> list[bool]:
        return [max(p, key=lambda k: math.log(max(p[k], 1e-9)) + beta * sup[k]) == gold for gold, p, sup in rows]

    base = right(0.0)
    table = []
    for beta in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0):
        now = right(beta)
        test = mcnemar_test(base, now)
        table.append({"beta": beta, "n": len(rows), "right": sum(now),
                      "gained": sum(a and not b for a, b in zip(now, base)),
                      "lost": sum(b and not a for a, b in zip(now, base)), "mcnemar_p": round(float(test.pvalue), 4)})
    save_section(RESULTS, f"option_cooccurrence_{args.split}_s27", {"label": args.label, "rows": table})
    print_table(f"Option co-occurrence weight ({args.label}, {args.split})", table,
                ["beta", "n", "right", "gained", "lost", "mcnemar_p"])


if __name__ == "__main__":
    main()
