"""Sweep wall time on 1 vs 2 local workers (`--ray local`: worker processes, no Ray) on the same small grid.

The grid: 2 runs x 48 questions of a CPU-bound stand-in pipeline (a fixed number of sha256
rounds per question, ~0.1 s of one core, the answer derived from the digest), so two workers
on two cores have real work to split; an LLM behind HTTP would instead be measured by
benchmarks/llm_concurrency.py. Each configuration runs the grid into a fresh directory; the
pool is warmed (actors started, factory imported) before the clock starts; each
configuration runs ``--repeats`` times (median reported: the machine is shared). Records must
equal the serial run's (timing fields aside).

    python benchmarks/ray_sweep.py            # -> benchmarks/results/ray_sweep.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "ray_sweep.json"
TIMING = {"seconds", "timings"}


class CpuPipeline:
    """Deterministic CPU work per question; the letter comes from the digest."""

    def __init__(self, name: str, rounds: int):
        self.name, self.rounds = name, rounds

    def answer(self, question):
        from medground.schema import Answer

        digest = f"{self.name}:{question.qid}".encode()
        for _ in range(self.rounds):
            digest = hashlib.sha256(digest).digest()
        choice = sorted(question.options)[digest[0] % len(question.options)]
        return Answer(outcome="answered", choice=choice, option_scores={choice: 1.0})


def make_cpu_pipeline(config: dict) -> CpuPipeline:
    return CpuPipeline(config["variant"], config["rounds"])


def questions(n: int):
    from medground.schema import Question

    return [Question(qid=f"q{i:03d}", dataset="synthetic", question=f"question {i}?",
                     options={"A": "a", "B": "b", "C": "c", "D": "d"}, answer="ABCD"[i % 4]) for i in range(n)]


def comparable(run_dir: Path) -> dict[str, dict]:
    from medground.eval.records import read_records

    return {r.qid: {k: v for k, v in r.to_dict().items() if k not in TIMING}
            for r in read_records(run_dir / "results.jsonl")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=150_000, help="sha256 rounds per question")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    from medground.eval.distributed import RayExecutor, RayExecutorSettings
    from medground.eval.sweep import SweepSettings, run_sweep
    from medground.raycluster import RaySettings

    grid = SweepSettings.model_validate({
        "name": "ray-sweep", "datasets": [{"name": "synthetic"}], "base": {"rounds": args.rounds},
        "axes": {"variant": {"key": "variant", "values": ["a", "b"]}}})
    qs = questions(args.questions)
    load = lambda spec: qs  # noqa: E731
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ray-sweep-") as tmp:
        def timed(mode: str, workers: int, executor=None) -> None:
            walls, same = [], True
            for rep in range(args.repeats):
                runs = Path(tmp) / f"{workers}-{rep}"
                t0 = time.perf_counter()
                res = run_sweep(grid, make_cpu_pipeline, runs, load_questions=load, progress=False, executor=executor)
                walls.append(time.perf_counter() - t0)
                same = same and not res.failures and all(
                    comparable(runs / s.run_id) == comparable(Path(tmp) / "0-0" / s.run_id) for s in res.summaries)
            rows.append({"mode": mode, "workers": workers, "wall_s": round(statistics.median(walls), 3),
                         "walls_s": [round(w, 3) for w in walls], "records_equal_serial": same})

        # Imports (the summary's statistics) happen in an untimed warm-up run.
        run_sweep(grid, make_cpu_pipeline, Path(tmp) / "warmup", load_questions=lambda spec: qs[:1], progress=False)
        timed("serial", 0)
        for workers in (1, 2):
            with RayExecutor(RayExecutorSettings(ray=RaySettings(address="local", workers=workers))) as ex:
                # Workers started and the factory unpickled before the clock starts.
                warm = ex.answers("warmup", lambda: make_cpu_pipeline({"variant": "w", "rounds": 10}),
                                  questions(2 * workers))
                assert len(list(warm)) == 2 * workers
                timed(f"local workers, {workers}", workers, ex)
    by_workers = {r["workers"]: r["wall_s"] for r in rows}
    out = {"benchmark": "ray_sweep", "grid": f"2 runs x {args.questions} questions, {args.rounds} sha256 rounds each",
           "repeats": args.repeats, "wall_s": "median of the repeats",
           "machine": {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                       "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
           "rows": rows, "ratio_1_over_2_workers": round(by_workers[1] / by_workers[2], 2)}
    for r in rows:
        print(f"{r['mode']:<22} {r['wall_s']:>8.2f} s (runs: {r['walls_s']})   same records: {r['records_equal_serial']}")
    print(f"wall(1 worker) / wall(2 workers) = {out['ratio_1_over_2_workers']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
