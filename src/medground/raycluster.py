"""Workers for sweeps and index builds: a Ray cluster the user names, or processes on this machine.

Addresses (``--ray ADDRESS``):
    local               worker processes on this machine (``localworkers``), stopped when the
                        command ends; no Ray is started, and nothing listens on the network
    auto                the cluster running on this machine (``ray start``) or $RAY_ADDRESS;
                        local worker processes when there is none
    HOST:PORT           a cluster's GCS address (``ray start --head`` prints it)
    ray://HOST:PORT     a cluster through Ray Client

A private local Ray is never started: its servers listen on every interface (``localworkers``
says why), which would let anyone who reaches this host run code here. Ray
(``pip install 'medground[distributed]'``) is needed only for a named cluster.

An address that cannot be reached is an error naming it, raised before anything is started
or written (a plain TCP probe: ``ray.init`` itself would retry for ~20 s and then raise a
generic ConnectionError). Ray is imported only here, and only when asked for.
"""

from __future__ import annotations

import logging
import os
import socket
from types import ModuleType, TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from medground.localworkers import LocalWorkers

log = logging.getLogger(__name__)

_LOCAL = {"", "local"}


class RayUnavailableError(RuntimeError):
    """Ray is not installed, or the cluster named cannot be reached."""


class RaySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str = "local"
    workers: int | None = Field(None, ge=1, description="worker actors; default: the cluster's CPUs")
    connect_timeout_s: float = Field(5.0, gt=0, description="TCP probe of a named address")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError("Ray is not installed: pip install 'medground[distributed]'") from None
    return ray


def host_port(address: str) -> tuple[str, int]:
    """``[ray://]HOST[:PORT]`` → (host, port); Ray's default ports when none is given."""
    client = address.startswith("ray://")
    rest = address[len("ray://"):] if client else address
    host, sep, port = rest.rpartition(":")
    if not sep:
        return rest, 10001 if client else 6379
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise RayUnavailableError(f"Ray address {address!r}: the port {port!r} is not a number") from None


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise RayUnavailableError(
            f"cannot reach the Ray cluster at {address!r} ({host}:{port}: {exc.strerror or exc}); "
            "start it with `ray start --head`, or pass `--ray local` for a Ray on this machine") from None


class RayCluster:
    """Context manager: connected to a Ray cluster inside (``ray`` set), or local worker
    processes (``local`` set, ``ray`` None); local workers are stopped after. A process already
    connected to Ray (a notebook) keeps its connection when it names that cluster or ``auto``."""

    def __init__(self, settings: RaySettings | None = None):
        self.settings = settings or RaySettings()
        self.ray: Any = None
        self.local: LocalWorkers | None = None
        self.workers = 0
        self._started = False

    def __enter__(self) -> RayCluster:
        s = self.settings
        address = s.address.strip()
        if address.lower() in _LOCAL:
            return self._start_local()
        named = address.lower() != "auto"
        if named:  # before importing Ray: a typo must not cost a Ray start
            check_reachable(address, s.connect_timeout_s)
            ray = self.ray = import_ray()
            if not ray.is_initialized():
                self._init(f"cannot connect to the Ray cluster at {address!r}", address=address)
        else:
            try:
                ray = self.ray = import_ray()
            except RayUnavailableError:
                return self._start_local()
            if not ray.is_initialized() and not self._try_running_cluster():
                self.ray = None
                return self._start_local()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = s.workers or cpus
        if self.workers > cpus:
            # An actor that asks for a CPU the cluster does not have would wait forever.
            log.warning("Ray cluster has %d CPUs; using %d workers, not %d", cpus, cpus, self.workers)
            self.workers = cpus
        return self

    def _init(self, what: str, **kwargs: Any) -> None:
        try:
            self.ray.init(include_dashboard=False, logging_level=logging.WARNING, **kwargs)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError here
            raise RayUnavailableError(f"{what}: {exc}") from None
        self._started = True  # this process's connection: ours to close

    def _try_running_cluster(self) -> bool:
        try:
            self.ray.init(address="auto", include_dashboard=False, logging_level=logging.WARNING)
        except ConnectionError:
            return False
        self._started = True
        return True

    def _start_local(self) -> RayCluster:
        # Spawned workers inherit this process's sys.path (a test's or a benchmark's factory
        # module included).
        self.local = LocalWorkers(self.settings.workers or os.cpu_count() or 1).__enter__()
        self.workers = self.local.n
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.local is not None:
            self.local.__exit__(exc_type, exc, tb)
            self.local = None
        if self._started:
            self.ray.shutdown()
            self._started = False
