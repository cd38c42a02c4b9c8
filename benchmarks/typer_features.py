"""Does a word or character n-gram block help the consultation typer? (session 27)

5-fold cross-validation on Medication QA's development part only (3 seeds), the shipped typer's
set-up (MiniLM + class-balanced logistic regression, trained on plain + name-masked questions,
read masked) against TF-IDF word 1–2-grams alone, character 2–5-grams alone, and MiniLM with the
word block appended at weight 0.5, 1 or 2. McNemar against the shipped set-up on seed 0's folds.

    python benchmarks/typer_features.py            # → benchmarks/results/consult.json "typer_features_s27"
    python benchmarks/typer_features.py finetune   # → "typer_finetune_s28" (session 28)

``finetune``: MiniLM itself fine-tuned, SetFit's way (cosine loss on pairs of questions of one
type and of two types, then the same logistic regression), against the frozen MiniLM on the same
folds. Both arms use the sentence-transformers MiniLM (fp32), so only the fine-tuning differs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from medground.eval.bench import print_table, save_section

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "consult.json"


def main() -> None:
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.metrics import mcnemar_test
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.reading.consult_typer import MIN_EXAMPLES, train
    from medground.retrieve.drug_intent import EMBEDDER_KIND

    emb = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    plain, masked, y = _dev_questions()
    xp, xm = emb.encode_queries(plain), emb.encode_queries(masked)
    strata = np.array([lab if (y == lab).sum() >= 5 else "rare" for lab in y])
    counts = Counter(y)

    def fit(x, labels, c):
        keep = np.array([counts[lab] >= MIN_EXAMPLES for lab in labels])
        clf = LogisticRegression(C=c, max_iter=4000, class_weight="balanced")
        return clf.fit(x[keep], np.array(labels)[keep])

    arms = ["shipped (MiniLM)", "word 1-2-grams", "char 2-5-grams", "MiniLM + words x0.5", "MiniLM + words x1",
            "MiniLM + words x2"]
    acc: dict[str, list[float]] = {a: [] for a in arms}
    first: dict[str, np.ndarray] = {}
    for seed in range(3):
        right = {a: np.zeros(len(y), dtype=bool) for a in arms}
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(xp, strata):
            labels = list(y[tr]) * 2
            texts = [plain[i] for i in tr] + [masked[i] for i in tr]
            read = [masked[i] for i in te]
            for a in arms:
                if a.startswith("shipped"):
                    m = train(np.vstack([xp[tr], xm[tr]]), labels)
                    pred = [m.classes[i] for i in m.probabilities(xm[te]).argmax(axis=1)]
                else:
                    vec = (TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)
                           if a.startswith("char") else TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2))
                    t_fit, t_read = vec.fit_transform(texts), vec.transform(read)
                    if "+" in a:
                        w = float(a.rsplit("x", 1)[1])
                        x_fit = hstack([csr_matrix(np.vstack([xp[tr], xm[tr]])), w * t_fit]).tocsr()
                        x_read, c = hstack([csr_matrix(xm[te]), w * t_read]).tocsr(), 4.0
                    else:
                        x_fit, x_read, c = t_fit, t_read, 10.0
                    pred = list(fit(x_fit, labels, c).predict(x_read))
                right[a][te] = [p == g for p, g in zip(pred, y[te])]
        for a in arms:
            acc[a].append(float(right[a].mean()))
        if seed == 0:
            first = right
    base = first[arms[0]]
    rows = []
    for a in arms:
        test = mcnemar_test(list(base), list(first[a])) if a != arms[0] else None
        rows.append({"typer": a, "n": len(y), "mean_accuracy": round(float(np.mean(acc[a])), 4),
                     "per_seed": [round(v, 4) for v in acc[a]],
                     "seed0_only_shipped": int((base & ~first[a]).sum()), "seed0_only_this": int((first[a] & ~base).sum()),
                     "seed0_mcnemar_p": None if test is None else round(float(test.pvalue), 4)})
    save_section(RESULTS, "typer_features_s27", {"rows": rows, "note": "5-fold CV x 3 seeds on Medication QA's dev part only"})
    print_table("Typer features (5-fold CV, dev part)", rows,
                ["typer", "n", "mean_accuracy", "seed0_only_shipped", "seed0_only_this", "seed0_mcnemar_p"])


def _dev_questions() -> tuple[list[str], list[str], np.ndarray]:
    """Medication QA's dev questions with a label: as asked, masked, and their labels."""
    from medground.train.typer_bank import medication_qa_questions

    plain, masked, labels = medication_qa_questions("dev")
    return plain, masked, np.array(labels)


def finetune(pairs_per_question: int = 8, folds: int = 5, seed: int = 0) -> None:
    import random

    import torch
    from sentence_transformers import SentenceTransformer
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.metrics import mcnemar_test
    from medground.index.embedders import _package_model_dir
    from medground.reading.consult_typer import train

    torch.set_num_threads(2)
    plain, masked, y = _dev_questions()
    strata = np.array([lab if (y == lab).sum() >= 5 else "rare" for lab in y])
    path = str(_package_model_dir())

    def encode(model, texts):
        return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def tuned(texts, labels, fold_seed):
        rng = random.Random(fold_seed)
        by_label: dict[str, list[str]] = {}
        for t, lab in zip(texts, labels):
            by_label.setdefault(lab, []).append(t)
        pairs = []
        for t, lab in zip(texts, labels):
            for _ in range(pairs_per_question // 2):
                pairs.append((t, rng.choice(by_label[lab]), 1.0))
                other = rng.choice([k for k in by_label if k != lab])
                pairs.append((t, rng.choice(by_label[other]), 0.0))
        rng.shuffle(pairs)
        torch.manual_seed(fold_seed)  # dropout
        model = SentenceTransformer(path, device="cpu")
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
        model.train()
        for i in range(0, len(pairs), 32):
            batch = pairs[i:i + 32]
            # tokenize pads to the batch's longest question (preprocess pads to 256 tokens: 10× slower)
            a = model(model.tokenize([p[0] for p in batch]))["sentence_embedding"]
            b = model(model.tokenize([p[1] for p in batch]))["sentence_embedding"]
            loss = torch.nn.functional.mse_loss(torch.nn.functional.cosine_similarity(a, b),
                                                torch.tensor([p[2] for p in batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        return model

    frozen = SentenceTransformer(path, device="cpu")
    right = {"frozen": np.zeros(len(y), dtype=bool), "fine-tuned": np.zeros(len(y), dtype=bool)}
    for k, (tr, te) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=seed).split(plain, strata)):
        labels = list(y[tr]) * 2
        texts = [plain[i] for i in tr] + [masked[i] for i in tr]
        read = [masked[i] for i in te]
        for arm, model in (("frozen", frozen), ("fine-tuned", tuned(texts, labels, k))):
            m = train(encode(model, texts), labels)
            pred = [m.classes[i] for i in m.probabilities(encode(model, read)).argmax(axis=1)]
            right[arm][te] = [p == g for p, g in zip(pred, y[te])]
    test = mcnemar_test(list(right["frozen"]), list(right["fine-tuned"]))
    rows = [{"typer": arm, "n": len(y), "accuracy": round(float(r.mean()), 4),
             "only_frozen": int((right["frozen"] & ~right["fine-tuned"]).sum()),
             "only_fine_tuned": int((right["fine-tuned"] & ~right["frozen"]).sum()),
             "mcnemar_p": round(float(test.pvalue), 4)} for arm, r in right.items()]
    save_section(RESULTS, "typer_finetune_s28", {"rows": rows, "pairs_per_question": pairs_per_question,
                                                "note": f"{folds}-fold CV (seed {seed}) on Medication QA's dev part only"})
    print_table("Typer: MiniLM fine-tuned SetFit's way vs frozen (CV, dev part)", rows,
                ["typer", "n", "accuracy", "only_frozen", "only_fine_tuned", "mcnemar_p"])


if __name__ == "__main__":
    import sys

    finetune() if sys.argv[1:] == ["finetune"] else main()
