"""Report over a runs directory: the full table, technique deltas, McNemar vs the no-RAG
baseline, an accuracy-runtime scatter and an accuracy-vs-top-k vote curve.

    write_report("runs/", "report/")  ->  report.md, report.html, *.png

Paired statistics only use the questions both runs answered (intersection of qids).
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medground.eval.axes import COLUMNS, RunAxes
from medground.eval.metrics import mcnemar_test, vote_curve
from medground.eval.records import RESULTS, RunRecord, read_run
from medground.eval.runner import RunSummary, summarize


@dataclass(slots=True)
class LoadedRun:
    meta: dict[str, Any]
    records: list[RunRecord]
    axes: RunAxes
    summary: RunSummary
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.meta.get("name") or self.meta["run_id"]

    def correct_by_qid(self) -> dict[str, bool]:
        return {r.qid: r.correct for r in self.records if r.correct is not None}


@dataclass(slots=True)
class Table:
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass(slots=True)
class Report:
    tables: list[Table] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (title, file name)


def load_runs(runs_dir: str | Path) -> list[LoadedRun]:
    runs = []
    for d in sorted(p for p in Path(runs_dir).iterdir() if p.is_dir() and (p / RESULTS).exists()):
        meta, records = read_run(d)
        meta.setdefault("run_id", d.name)
        summary = summarize(meta["run_id"], meta.get("name", d.name), records, len(records))
        runs.append(LoadedRun(meta, records, RunAxes.from_meta(meta), summary, d))
    return runs


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}"


def _secs(x: float) -> str:
    return f"{x:.1f}" if x >= 10 else f"{x:.3g}"


def _delta(x: float) -> str:
    return f"{100 * x + 0.0:+.1f}"  # + 0.0 turns -0.0 into 0.0


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def main_table(runs: list[LoadedRun]) -> Table:
    rows = []
    for r in sorted(runs, key=lambda r: (r.axes.dataset, -(r.summary.accuracy or -1))):
        s = r.summary
        ci = "—" if s.ci_low is None else f"{_pct(s.ci_low)}–{_pct(s.ci_high)}"
        tput = "—" if s.throughput_qps is None else f"{s.throughput_qps:.2f}"
        rows.append([*r.axes.as_row(), s.n_done, _pct(s.accuracy), ci, s.parse_failures, s.errors,
                     _secs(s.runtime_s), tput, r.meta["run_id"]])
    return Table("All runs", [*COLUMNS, "n", "accuracy %", "95% CI (Wilson)", "parse failures", "errors",
                              "runtime s", "questions/s", "run"], rows,
                 "Parse failures and errors count as wrong answers and are also listed on their own. "
                 "Runtime is the sum of per-question pipeline seconds (resumes included).")


def _paired(a: LoadedRun, b: LoadedRun) -> tuple[list[bool], list[bool]]:
    ca, cb = a.correct_by_qid(), b.correct_by_qid()
    common = [q for q in ca if q in cb]
    return [ca[q] for q in common], [cb[q] for q in common]


def _holm(pvalues: list[float]) -> list[float]:
    if not pvalues:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(p) for p in multipletests(pvalues, method="holm")[1]]


def technique_deltas(runs: list[LoadedRun]) -> tuple[Table, Table]:
    """For each axis label vs the axis's first (baseline) label: runs identical in every other
    axis are paired; mean paired delta over pairs, and per-pair McNemar."""
    axis_order: dict[str, list[str]] = {}
    for r in runs:
        for a, labels in (r.meta.get("axis_labels") or {}).items():
            axis_order.setdefault(a, list(labels))
        for a, lab in (r.meta.get("axes") or {}).items():
            order = axis_order.setdefault(a, [])
            if lab not in order:
                order.append(lab)
    pairs_by: dict[tuple[str, str], list[tuple[LoadedRun, LoadedRun]]] = defaultdict(list)
    for axis, labels in axis_order.items():
        if len(labels) < 2:
            continue
        groups: dict[str, dict[str, LoadedRun]] = defaultdict(dict)
        for r in runs:
            axes = r.meta.get("axes") or {}
            if axis not in axes:
                continue
            rest = json.dumps({k: v for k, v in sorted(axes.items()) if k != axis}) + "|" + r.axes.dataset
            groups[rest][axes[axis]] = r
        for g in groups.values():
            base = g.get(labels[0])
            for lab in labels[1:]:
                if base is not None and lab in g:
                    pairs_by[(axis, lab)].append((base, g[lab]))
    summary_rows, detail_rows = [], []
    for (axis, lab), pairs in pairs_by.items():
        deltas, sig_up, sig_down = [], 0, 0
        for base, other in pairs:
            a, b = _paired(base, other)
            if not a:
                continue
            m = mcnemar_test(a, b)
            d = (sum(b) - sum(a)) / len(a)
            deltas.append(d)
            sig_up += m.pvalue < 0.05 and d > 0
            sig_down += m.pvalue < 0.05 and d < 0
            detail_rows.append([axis, f"{lab} vs {axis_order[axis][0]}", other.name, len(a),
                                _delta(d), m.b_only, m.a_only, _p(m.pvalue)])
        if deltas:
            summary_rows.append([axis, f"{lab} vs {axis_order[axis][0]}", len(deltas),
                                 _delta(sum(deltas) / len(deltas)), _delta(min(deltas)),
                                 _delta(max(deltas)), sig_up, sig_down])
    summary = Table("Technique effects (paired runs differing in one axis)",
                    ["axis", "comparison", "pairs", "mean Δ pts", "min Δ", "max Δ", "better (p<.05)",
                     "worse (p<.05)"], summary_rows,
                    "Δ = accuracy of the technique minus its baseline label on the same questions; "
                    "significance by exact McNemar per pair (uncorrected).")
    detail = Table("Technique pairs", ["axis", "comparison", "run", "n", "Δ pts", "only technique right",
                                       "only baseline right", "McNemar p"], detail_rows)
    return summary, detail


def baseline_table(runs: list[LoadedRun]) -> Table | None:
    """Exact McNemar of each run vs the closest no-RAG baseline of the same dataset (same LLM,
    then most shared axis labels), with Holm-adjusted p-values over the table."""
    baselines = [r for r in runs if r.axes.is_baseline]
    if not baselines:
        return None
    rows, pvals = [], []
    for r in runs:
        if r.axes.is_baseline:
            continue
        cands = [b for b in baselines if b.axes.dataset == r.axes.dataset]
        if not cands:
            continue
        # The closest baseline: same LLM first, then the most shared axis labels (e.g. the prompt).
        mine = (r.meta.get("axes") or {}).items()
        base = max(cands, key=lambda b: (b.axes.llm == r.axes.llm,
                                         len(set(mine) & set((b.meta.get("axes") or {}).items()))))
        a, b = _paired(base, r)
        if not a:
            continue
        m = mcnemar_test(a, b)
        pvals.append(m.pvalue)
        rows.append([r.name, base.name, len(a), _pct(sum(a) / len(a)), _pct(sum(b) / len(b)),
                     _delta((sum(b) - sum(a)) / len(a)), m.b_only, m.a_only, _p(m.pvalue)])
    for row, adj in zip(rows, _holm(pvals)):
        row.append(_p(adj))
    return Table("McNemar vs the no-RAG baseline",
                 ["run", "baseline", "n", "baseline %", "run %", "Δ pts", "only run right", "only baseline right",
                  "p (exact)", "p (Holm)"], rows)


def scatter_plot(runs: list[LoadedRun], path: Path) -> bool:
    pts = [r for r in runs if r.summary.accuracy is not None and r.summary.runtime_s > 0]
    if not pts:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    families = sorted({r.axes.family for r in pts})
    for fam in families:
        sel = [r for r in pts if r.axes.family == fam]
        acc = [100 * r.summary.accuracy for r in sel]
        # Clamped: a Wilson bound can sit a rounding error past the point estimate (0 correct).
        err = [[max(0.0, 100 * (r.summary.accuracy - r.summary.ci_low)) for r in sel],
               [max(0.0, 100 * (r.summary.ci_high - r.summary.accuracy)) for r in sel]]
        ax.errorbar([r.summary.runtime_s for r in sel], acc, yerr=err, fmt="o", capsize=2, label=fam)
    ax.set_xscale("log")
    ax.set_xlabel("runtime (s, log scale)")
    ax.set_ylabel("accuracy % (95% Wilson CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def vote_plot(runs: list[LoadedRun], path: Path) -> list[list[Any]]:
    curves = [(r, vote_curve(r.records)) for r in runs]
    curves = [(r, c) for r, c in curves if c]
    if not curves:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = []
    for r, c in curves:
        ax.plot([k for k, _ in c], [100 * a for _, a in c], marker="o", label=r.name[:50])
        rows += [[r.name, k, _pct(a)] for k, a in c]
    ax.set_xlabel("k (votes from the top-k passages)")
    ax.set_ylabel("accuracy % of the weighted vote")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return rows


def attribution_table(runs: list[LoadedRun]) -> Table | None:
    """Claim-level attribution of every run with free-text answers: the judged figures when
    `medground attribution` wrote them into the run, else the lexical judge's, computed here."""
    import json

    from medground.eval import attribution as attr
    from medground.reading import claims

    rows = []
    store = None
    for r in runs:
        if not attr.free_text_answers(r.records):
            continue
        saved = r.path / attr.ATTRIBUTION if r.path is not None else None
        if saved is not None and saved.is_file():
            got = json.loads(saved.read_text(encoding="utf-8"))
        else:
            if store is None:
                from medground.store.settings import StoreMissingError, open_store

                try:
                    store = open_store(must_exist=True)
                except StoreMissingError as exc:  # the table says what it could not do
                    return Table("Claim-level attribution (free text)", ["run"], [[x.name] for x in runs],
                                 f"No chunk store to read the cited passages from: {exc}")
            got = attr.attribute_run(r.records, store, claims.LexicalClaimJudge(), claims.LEXICAL_THRESHOLD)
        rows.append([r.name, got["judge"], got["threshold"], got["answers"], got["claims"],
                     _pct(got["claims_supported"]), _pct(got["citation_precision"]), _pct(got["citation_recall"])])
    if not rows:
        return None
    return Table("Claim-level attribution (free text)",
                 ["run", "judge", "threshold", "answers", "claims", "claims supported %", "citation precision %",
                  "citation recall %"], rows,
                 "Each claim (answer sentence) checked against the passages it cites; precision and recall are "
                 "means over answers (eval/attribution.py). `medground attribution RUN_DIR --judge llm` replaces "
                 "the lexical judge's figures with the LLM judge's.")


def build_report(runs: list[LoadedRun], out_dir: Path) -> Report:
    rep = Report()
    rep.tables.append(main_table(runs))
    summary, detail = technique_deltas(runs)
    if summary.rows:
        rep.tables.append(summary)
    base = baseline_table(runs)
    if base is not None and base.rows:
        rep.tables.append(base)
    if summary.rows:
        rep.tables.append(detail)
    if scatter_plot(runs, out_dir / "accuracy_runtime.png"):
        rep.images.append(("Accuracy vs runtime", "accuracy_runtime.png"))
    attributed = attribution_table(runs)
    if attributed is not None:
        rep.tables.append(attributed)
    vote_rows = vote_plot(runs, out_dir / "vote_topk.png")
    if vote_rows:
        rep.images.append(("Accuracy vs top-k (weighted vote)", "vote_topk.png"))
        rep.tables.append(Table("Weighted vote by k", ["run", "k", "accuracy %"], vote_rows))
    return rep


def _md_table(t: Table) -> str:
    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = [f"## {t.title}", ""]
    if t.note:
        lines += [t.note, ""]
    lines.append("| " + " | ".join(t.headers) + " |")
    lines.append("|" + "---|" * len(t.headers))
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in t.rows]
    return "\n".join(lines) + "\n"


def _html_table(t: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in t.headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in row) + "</tr>" for row in t.rows)
    note = f"<p>{html.escape(t.note)}</p>" if t.note else ""
    return f"<h2>{html.escape(t.title)}</h2>{note}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_CSS = ("body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}th{background:#f3f3f3}")


def write_report(runs_dir: str | Path, out_dir: str | Path, title: str = "MedGround evaluation report") -> Report:
    """Write report.md, report.html and the PNG plots for every run under ``runs_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = load_runs(runs_dir)
    if not runs:
        raise FileNotFoundError(f"{runs_dir}: no run directories with {RESULTS} found")
    rep = build_report(runs, out)
    md = [f"# {title}", "", f"{len(runs)} runs from `{runs_dir}`.", ""]
    md += [_md_table(t) for t in rep.tables]
    md += [f"## {t}\n\n![{t}]({f})\n" for t, f in rep.images]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")
    body = "".join(_html_table(t) for t in rep.tables)
    body += "".join(f"<h2>{html.escape(t)}</h2><img src='{html.escape(f)}' alt='{html.escape(t)}'>" for t, f in rep.images)
    (out / "report.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>", encoding="utf-8")
    return rep
