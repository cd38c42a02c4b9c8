"""Questions answered on workers (Ray actors, or local worker processes for ``--ray local``);
this process stays the only writer of the run records.

One worker (a Ray actor with ``num_cpus=1``, or a local process) holds the pipelines it has built, one per run, each
built once from the run's factory (``make_pipeline(run config)`` in a sweep), so a model
loads once per worker, not per question. A run's remaining questions are cut into shards; each
actor has at most two shards queued, so it never waits for the driver between shards, and the
shards of a sweep's runs go through the same pool one run after another.

A shard's records come back when the shard is done and are appended (fsync'd) by the runner
at once. A worker that dies takes only its shards in flight with it: Ray restarts the actor
(or this module restarts the local process) and retries the shard once; a shard that is lost anyway ends the run with
``WorkerLostError`` after every other shard is recorded, and a resume answers what is missing.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from medground.eval.records import RunRecord
from medground.localworkers import BrokenProcessPool, LocalWorkers, dumps_callable, loads_callable
from medground.eval.runner import Pipeline, RunAbortedError, make_executor
from medground.raycluster import RayCluster, RaySettings
from medground.schema import Question

log = logging.getLogger(__name__)

_SHARDS_PER_WORKER = 4  # shards per worker and run: small enough for an even finish
_MAX_SHARD = 16  # questions; a lost worker loses at most two shards
_QUEUED_PER_ACTOR = 2


class WorkerLostError(RunAbortedError):
    """Questions whose worker died were not recorded; resuming the run answers them."""


class RayExecutorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ray: RaySettings = Field(default_factory=RaySettings)
    concurrency: int = Field(1, ge=1, description="questions in flight per worker (threads)")
    shard_size: int | None = Field(None, ge=1, description="questions per task; default from run size")


class QuestionWorker:
    """Ray actor body: answers shards of questions with pipelines cached by run."""

    def __init__(self) -> None:
        self._pipes: dict[str, Pipeline] = {}

    def answer_shard(self, key: str, make: Callable[[], Pipeline], shard: Sequence[Question],
                     concurrency: int) -> list[RunRecord]:
        if key not in self._pipes:
            self._pipes[key] = make()
        pipe = self._pipes[key]
        return list(make_executor(concurrency).answers(key, lambda: pipe, shard))


_LOCAL_WORKER = QuestionWorker()  # in a local worker process: its pipelines, by run


def _answer_shard_local(key: str, make_blob: bytes, shard: Sequence[Question], concurrency: int) -> list[RunRecord]:
    return _LOCAL_WORKER.answer_shard(key, lambda: loads_callable(make_blob)(), shard, concurrency)


class RayExecutor:
    """A ``QuestionExecutor`` over a pool of Ray actors; use it as a context manager.

    >>> with RayExecutor(RayExecutorSettings(ray=RaySettings(address="local", workers=2))) as ex:
    ...     run_sweep(settings, make_pipeline, runs_dir, executor=ex)
    """

    def __init__(self, settings: RayExecutorSettings | None = None):
        self.settings = settings or RayExecutorSettings()
        self._cluster = RayCluster(self.settings.ray)
        self._actors: list[Any] = []

    @property
    def workers(self) -> int:
        return len(self._actors)

    def __enter__(self) -> RayExecutor:
        cluster = self._cluster.__enter__()
        if cluster.local is not None:
            self._actors = list(range(cluster.local.n))  # worker indexes
            return self
        try:
            # max_restarts=-1: a worker that dies comes back for the next shards;
            # max_task_retries=1: its shard in flight is tried once more, not forever.
            actor = cluster.ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=1)(QuestionWorker)
            self._actors = [actor.remote() for _ in range(cluster.workers)]
        except BaseException:
            self._cluster.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        ray = self._cluster.ray
        if ray is not None:
            for actor in self._actors:
                ray.kill(actor)
        self._actors = []
        self._cluster.__exit__(exc_type, exc, tb)

    def _shard_size(self, n: int) -> int:
        if self.settings.shard_size:
            return self.settings.shard_size
        even = math.ceil(n / (_SHARDS_PER_WORKER * max(1, self.workers)))
        return max(self.settings.concurrency, min(_MAX_SHARD, even))

    def answers(self, key: str, make: Callable[[], Pipeline], todo: Sequence[Question]) -> Iterator[RunRecord]:
        if not self._actors:
            raise RuntimeError("RayExecutor is not open; use it as a context manager")
        if self._cluster.local is not None:
            yield from self._answers_local(self._cluster.local, key, make, todo)
            return
        ray = self._cluster.ray
        from ray.exceptions import RayActorError

        size = self._shard_size(len(todo))
        shards = deque(list(todo[i:i + size]) for i in range(0, len(todo), size))
        try:
            make_ref = ray.put(make)  # shipped once per run, not once per shard
        except TypeError as exc:
            raise TypeError(f"run {key}: Ray workers build the pipeline themselves, so it must come from "
                            f"a picklable factory (a run config and make_pipeline), not a built pipeline: {exc}") from None
        pending: dict[Any, tuple[int, list[Question]]] = {}
        queued = [0] * len(self._actors)
        lost: list[str] = []
        try:
            while shards or pending:
                for i, actor in enumerate(self._actors):
                    while shards and queued[i] < _QUEUED_PER_ACTOR:
                        shard = shards.popleft()
                        ref = actor.answer_shard.remote(key, make_ref, shard, self.settings.concurrency)
                        pending[ref] = (i, shard)
                        queued[i] += 1
                (ref,), _ = ray.wait(list(pending), num_returns=1)
                i, shard = pending.pop(ref)
                queued[i] -= 1
                try:
                    records: list[RunRecord] = ray.get(ref)
                except RayActorError as exc:
                    log.warning("run %s: a Ray worker died with %d questions (%s)", key, len(shard), exc)
                    lost.extend(q.qid for q in shard)
                    continue
                yield from records
        finally:
            for ref in pending:  # an aborted run: drop the shards not yet answered
                try:
                    ray.cancel(ref)
                except Exception:  # already finished, or the actor is gone: nothing to drop
                    pass
        if lost:
            raise WorkerLostError(
                f"run {key}: {len(lost)} questions were on Ray workers that died and have no record "
                f"(first: {', '.join(lost[:5])}); everything else is recorded - run the sweep again to answer them")

    def _answers_local(self, local: LocalWorkers, key: str, make: Callable[[], Pipeline],
                       todo: Sequence[Question]) -> Iterator[RunRecord]:
        """As on Ray: at most two shards queued per worker; a worker that dies is restarted and
        each of its shards in flight is tried once more."""
        from concurrent.futures import FIRST_COMPLETED, wait

        size = self._shard_size(len(todo))
        shards = deque((list(todo[i:i + size]), 0) for i in range(0, len(todo), size))
        try:
            blob = dumps_callable(make)
        except TypeError as exc:
            raise TypeError(f"run {key}: {exc}") from None
        pending: dict[Any, tuple[int, int, list[Question], int]] = {}  # future -> worker, generation, shard, tries
        queued = [0] * local.n
        lost: list[str] = []
        try:
            while shards or pending:
                for i in range(local.n):
                    while shards and queued[i] < _QUEUED_PER_ACTOR:
                        shard, tries = shards.popleft()
                        fut, gen = local.submit(i, _answer_shard_local, key, blob, shard, self.settings.concurrency)
                        pending[fut] = (i, gen, shard, tries)
                        queued[i] += 1
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    i, gen, shard, tries = pending.pop(fut)
                    queued[i] -= 1
                    try:
                        records: list[RunRecord] = fut.result()
                    except BrokenProcessPool:
                        local.restart(i, gen)
                        if tries == 0:
                            shards.appendleft((shard, 1))
                        else:
                            log.warning("run %s: a local worker died with %d questions", key, len(shard))
                            lost.extend(q.qid for q in shard)
                        continue
                    yield from records
        finally:
            for fut in pending:  # an aborted run: drop the shards not yet answered
                fut.cancel()
        if lost:
            raise WorkerLostError(
                f"run {key}: {len(lost)} questions were on local workers that died and have no record "
                f"(first: {', '.join(lost[:5])}); everything else is recorded - run the sweep again to answer them")
