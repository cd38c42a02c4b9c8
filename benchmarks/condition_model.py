"""The condition reading of a patient's phrases (reading/patient_condition.py): the medicine
database's own short items, contraindications items as conditions and interactions items as
substances, embedded once and written to src/medground/reading/data/condition_substance.npz.

Measured two ways (section ``condition_model`` of benchmarks/results/consult.json):
- held-out items: a fixed fifth of the items (by a hash of their text) read against the other
  four fifths (nearest item's kind), and
- the linear classifier this replaced, fitted on the same four fifths (for the record: it scores
  as well on items, but calls any medical-sounding phrase a condition).

    python benchmarks/condition_model.py            # after `medground drugs build`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from medground.eval.bench import save_section
from medground.eval.evaluators import rate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="model path (default: the shipped one)")
    ap.add_argument("--section", default="condition_model")
    args = ap.parse_args()

    from sklearn.linear_model import LogisticRegression

    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.reading.patient_condition import (
        CONDITION,
        MODEL_PATH,
        ConditionReader,
        build,
        held_out,
        training_items,
    )
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.store.drugs import DrugStore

    items = training_items(DrugStore().attributes())
    embedder = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    x = embedder.encode_passages([t for t, _ in items])
    y = np.array([lab for _, lab in items])
    test = np.array([held_out(t) for t, _ in items])
    fold = build([it for it, h in zip(items, test) if not h], x[~test])
    to_c, _, to_s = fold.nearest(embedder.encode_queries([t for (t, _), h in zip(items, test) if h]))
    knn = [(c > s) == (g == CONDITION) for c, s, g in zip(to_c, to_s, y[test])]
    clf = LogisticRegression(max_iter=3000, class_weight="balanced").fit(x[~test], y[~test])
    linear = list(clf.predict(x[test]) == y[test])
    per_class = {lab: rate([r for r, g in zip(knn, y[test]) if g == lab]) for lab in ("condition", "substance")}
    model = build(items, x)
    out_path = Path(args.out) if args.out else MODEL_PATH
    model.save(out_path)
    assert ConditionReader(model, embedder).named([("pregnant", 1.0)]) is not None  # it loads and reads
    out = {"items": len(items), "conditions": len(model.conditions), "held_out_n": int(test.sum()),
           "nearest_item_held_out": rate(knn), "per_class": per_class, "linear_held_out": rate(linear),
           "embedder": EMBEDDER_KIND,
           "model": str(out_path.relative_to(ROOT) if out_path.is_relative_to(ROOT) else out_path),
           "command": "python benchmarks/condition_model.py"}
    save_section(RESULTS, args.section, out)
    acc, lin = out["nearest_item_held_out"], out["linear_held_out"]
    print(f"{'reading':<22}{'n':>6}{'accuracy':>10}{'95% CI':>16}")
    for name, r in (("nearest item", acc), ("linear (not used)", lin)):
        print(f"{name:<22}{r['n']:>6}{r['rate']:>10}{'{:.3f}-{:.3f}'.format(*r['ci95']):>16}")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
