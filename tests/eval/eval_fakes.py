"""Fake pipelines and questions for the evaluation tests (no models)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from medground.schema import Answer, ChoiceDetail, Question, Vote


def make_questions(n: int, dataset: str = "fake") -> list[Question]:
    opts = {"A": "a", "B": "b", "C": "c", "D": "d"}
    return [Question(qid=f"q{i:03d}", dataset=dataset, question=f"question {i}?", options=dict(opts),
                     answer="ABCD"[i % 4], metadata={"subject": "xy"[i % 2]}) for i in range(n)]


class FakePipeline:
    """Answers correctly when sha256(name, qid) falls under ``skill``; deterministic."""

    def __init__(self, name: str, skill: float = 0.5, sleep: float = 0.0, parse_fail_every: int = 0,
                 fail_all: bool = False, votes: bool = False):
        self.name, self.skill, self.sleep = name, skill, sleep
        self.parse_fail_every, self.fail_all, self.votes = parse_fail_every, fail_all, votes
        self.calls: list[str] = []

    def answer(self, q: Question) -> Answer:
        self.calls.append(q.qid)
        if self.sleep:
            time.sleep(self.sleep)
        if self.fail_all:
            raise ConnectionError("server down")
        i = int(q.qid[1:])
        if self.parse_fail_every and i % self.parse_fail_every == 0:
            return Answer(outcome="parse_failure", text="I think maybe")
        u = int(hashlib.sha256(f"{self.name}:{q.qid}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        wrong = "B" if q.answer != "B" else "C"
        choice = q.answer if u < self.skill else wrong
        detail = None
        if self.votes:  # three passages: first votes wrong weakly, then two right
            detail = ChoiceDetail(votes=[Vote(wrong, 0.9), Vote(q.answer, 0.6), Vote(q.answer, 0.5)])
        return Answer(outcome="answered", choice=choice, option_scores={choice: 1.0}, detail=detail,
                      tokens={"prompt": 10, "completion": 2})


class CrashingPipeline(FakePipeline):
    """Kills its process at question ``at`` while the file ``flag`` exists (a lost Ray worker);
    ``once``: the flag is removed first, so the retry of the same question succeeds."""

    def __init__(self, name: str, at: str, flag: str, once: bool, **kw):
        super().__init__(name, **kw)
        self.at, self.flag, self.once = at, flag, once

    def answer(self, q: Question) -> Answer:
        if q.qid == self.at and os.path.exists(self.flag):
            if self.once:
                os.remove(self.flag)
            os._exit(1)
        return super().answer(q)


def make_fake(config: dict) -> FakePipeline:
    """A ``make_pipeline`` factory: the run config chooses skill and speed."""
    kw = dict(skill=config.get("skill", 0.5), sleep=config.get("sleep", 0.0),
              parse_fail_every=config.get("parse_fail_every", 0), votes=config.get("votes", False))
    if "crash" in config:
        c = config["crash"]
        return CrashingPipeline(config.get("name", "fake"), c["at"], c["flag"], c.get("once", False), **kw)
    return FakePipeline(config.get("name", "fake"), **kw)


def sweep_killed_midway(script: Path, runs: Path, at_least: int, *,
                        poll: float = 0.05) -> tuple[Callable[[], int], dict[str, str]]:
    """Start ``script RUNS`` (a sweep), SIGKILL it once ``at_least`` records are on disk, and
    return a counter of record lines plus the environment to resume it with."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen([sys.executable, str(script), str(runs)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def n_lines() -> int:
        return sum(p.read_bytes().count(b"\n") for p in runs.glob("*/results.jsonl"))

    deadline = time.monotonic() + 120
    while n_lines() < at_least and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(poll)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return n_lines, env
