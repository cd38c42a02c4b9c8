"""Where a textbook question's answering sentence is lost: retrieval's packed passages, or the
compression of those passages to the reader's token budget (no LLM call).

For every rewording test-bed item that names its gold sentence (medground.eval.rewording_testbed),
the share whose sentence is in the packed passages and, per arm of reader settings, in the
compressed evidence the reader sees. Each arm is the shipped reader with some settings changed.

    python benchmarks/evidence_retention.py --split dev --kind free \
        --arm lexical= --arm rrf=evidence_ranking:rrf --arm 500=freetext_evidence_tokens:500
    python benchmarks/evidence_retention.py --split dev --kind mc --arm lexical= --arm rrf=evidence_ranking:rrf

Writes reader.json section evidence_retention_<split>_<kind> (per-question hits included, so two
arms can be compared item by item).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from medground.eval import rewording_testbed
from medground.eval.bench import print_table, save_section
from medground.eval.evaluators import accuracy_row

RESULTS = Path(__file__).resolve().parent / "results" / "reader.json"
DATA = Path(__file__).resolve().parent / "data"


def normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def holds(texts: list[str], sentence: str) -> bool:
    """The sentence's first 60 normalized characters stand in one of ``texts`` (a chunk may
    reflow a sentence's whitespace or punctuation, never its words)."""
    key = normalized(sentence)[:60]
    return any(key in normalized(t) for t in texts)


def parse_arm(spec: str) -> tuple[str, dict]:
    """"name=key:value,key:value" → (name, reader settings update); values read as JSON when they parse."""
    name, _, body = spec.partition("=")
    update = {}
    for pair in filter(None, body.split(",")):
        key, _, raw = pair.partition(":")
        try:
            update[key] = json.loads(raw)
        except json.JSONDecodeError:
            update[key] = raw
    return name, update


def main() -> None:
    from medground.pipelines.base import focus
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline
    from medground.reading.reader import Tally

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test"], required=True)
    ap.add_argument("--kind", choices=["mc", "free"], required=True)
    ap.add_argument("--config", default="rag")
    ap.add_argument("--arm", action="append", required=True, help="NAME=key:value,… (reader settings changed)")
    args = ap.parse_args()
    items = (rewording_testbed.load_free(DATA, args.split) if args.kind == "free"
             else rewording_testbed.load_testbed(DATA, args.split))
    items = [(q, info) for q, info in items if info.get("evidence")]
    pipe = build_pipeline(load_pipeline_config(args.config))
    shipped = pipe.reader
    packs = []
    for q, info in items:
        tally = Tally()
        packed = tally.evidence(pipe.engine, pipe.queries(q, tally), pipe.naming_entities(q),
                                shipped.freetext_entity_passages == "only")
        packs.append((q, info, packed))
    in_packed = [holds([c.text for c in p.citations], i["evidence"]) for _, i, p in packs]
    sets = sorted({i["set"] for _, i, _ in packs})
    rows, per = [], {}
    for spec in args.arm:
        name, update = parse_arm(spec)
        pipe.reader = shipped.model_copy(update=update)
        hits = [holds([c.text for c in focus(p, q, pipe.reader, pipe.engine, Tally()).citations], i["evidence"])
                for q, i, p in packs]
        per[name] = {q.qid: h for (q, _, _), h in zip(packs, hits)}
        row = {"arm": name, "settings": json.dumps(update), "compressed": accuracy_row(hits)}
        for s in sets:
            row[s] = sum(h for h, (_, i, _) in zip(hits, packs) if i["set"] == s)
        rows.append(row)
    pipe.reader = shipped
    summary = {"split": args.split, "kind": args.kind, "config": args.config, "n": len(packs),
               "packed": accuracy_row(in_packed),
               "packed_per_set": {s: sum(h for h, (_, i, _) in zip(in_packed, packs) if i["set"] == s) for s in sets},
               "set_sizes": {s: sum(1 for _, i, _ in packs if i["set"] == s) for s in sets},
               "rows": rows, "per_question": per}
    save_section(RESULTS, f"evidence_retention_{args.split}_{args.kind}", summary)
    flat = [{"arm": r["arm"], "settings": r["settings"], "kept": f"{r['compressed']['correct']}/{len(packs)}",
             **{s: r[s] for s in sets}} for r in rows]
    print(f"gold sentence in the packed passages: {sum(in_packed)}/{len(packs)} "
          f"({summary['packed_per_set']} of {summary['set_sizes']})")
    print_table(f"Gold sentence kept through compression ({args.split}, {args.kind})", flat,
                ["arm", "settings", "kept", *sets])


if __name__ == "__main__":
    main()
