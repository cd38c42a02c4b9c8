"""Worker processes on this machine (``--ray local``): no Ray, and no network socket at all.

Ray's servers (GCS, raylet, every worker's gRPC server) listen on all interfaces whatever
``ray.init`` is told: ``_node_ip_address="127.0.0.1"`` is rewritten to the machine's network
address, and a second driver that reaches that address can run code here. A private pool on
one machine needs none of that, so ``local`` means these processes instead. They talk to this
process over pipes only; a Ray cluster is used only when the user names one.

Each worker is its own one-process pool, so like a Ray actor it keeps what it has loaded (a
pipeline, an embedder) between tasks, and a worker that dies breaks only its own tasks: the
caller restarts it (``restart``) and may retry them. Processes are spawned, not forked: the
parent may hold model threads (llama.cpp, torch) that a fork would copy in a broken state. As with
any spawned pool, a script that starts workers must guard its entry point (``if __name__ ==
"__main__":``), since each worker imports the main module.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any

__all__ = ["BrokenProcessPool", "LocalWorkers", "dumps_callable", "loads_callable"]


def dumps_callable(fn: Callable[..., Any]) -> bytes:
    """Pickle a factory for a worker; cloudpickle (when installed) also takes lambdas and closures."""
    try:
        import cloudpickle
    except ImportError:
        cloudpickle = None
    try:
        return cloudpickle.dumps(fn) if cloudpickle is not None else pickle.dumps(fn)
    except (TypeError, AttributeError, pickle.PicklingError) as exc:
        raise TypeError(f"local workers build their own copy, so it must be picklable "
                        f"(a module-level function or a functools.partial of one): {exc}") from None


def loads_callable(blob: bytes) -> Callable[..., Any]:
    return pickle.loads(blob)  # noqa: S301 - bytes this process made itself


class LocalWorkers:
    """``n`` single-process pools; use as a context manager."""

    def __init__(self, n: int | None = None):
        self.n = max(1, n or os.cpu_count() or 1)
        self._pools: list[ProcessPoolExecutor] = []
        self._generation: list[int] = []
        self._context = multiprocessing.get_context("spawn")

    def __enter__(self) -> LocalWorkers:
        self._pools = [self._new_pool() for _ in range(self.n)]
        self._generation = [0] * self.n
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools = []

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=1, mp_context=self._context)

    def submit(self, worker: int, fn: Callable[..., Any], *args: Any) -> tuple[Future, int]:
        """Run ``fn(*args)`` on worker ``worker``; returns the future and the worker's generation
        (pass it to ``restart`` so that several failed tasks restart a worker only once)."""
        if not self._pools:
            raise RuntimeError("LocalWorkers is not open; use it as a context manager")
        return self._pools[worker].submit(fn, *args), self._generation[worker]

    def restart(self, worker: int, generation: int) -> None:
        """Replace a worker that died (a no-op when it was already replaced since ``generation``)."""
        if self._generation[worker] != generation:
            return
        self._pools[worker].shutdown(wait=False, cancel_futures=True)
        self._pools[worker] = self._new_pool()
        self._generation[worker] += 1

    def pids(self) -> list[int]:
        """Process ids of the running workers (for tests and diagnostics)."""
        return [pid for pool in self._pools for pid in (getattr(pool, "_processes", None) or {})]
