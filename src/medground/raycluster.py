"""Ray, optional (``pip install 'medground[distributed]'``): reach a cluster or start a local one.

Addresses (``--ray ADDRESS``):
    local               a private Ray on this machine, stopped when the command ends
    auto                the cluster running on this machine (``ray start``) or $RAY_ADDRESS;
                        a private local one when there is none
    HOST:PORT           a cluster's GCS address (``ray start --head`` prints it)
    ray://HOST:PORT     a cluster through Ray Client

An address that cannot be reached is an error naming it, raised before anything is started
or written (a plain TCP probe: ``ray.init`` itself would retry for ~20 s and then raise a
generic ConnectionError). Ray is imported only here, and only when asked for.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from types import ModuleType, TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

_LOCAL = {"", "local"}
# A private local Ray only carries shards of questions, records and embedding batches.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024**2


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
    """Context manager: connected to Ray inside, and a local Ray it started is stopped after.
    A process already connected to Ray (a test fixture, a notebook) keeps its connection."""

    def __init__(self, settings: RaySettings | None = None):
        self.settings = settings or RaySettings()
        self.ray: Any = None
        self.workers = 0
        self._started = False

    def __enter__(self) -> RayCluster:
        s = self.settings
        address = s.address.strip()
        named = address.lower() not in _LOCAL | {"auto"}
        if named:  # before importing Ray: a typo must not cost a Ray start
            check_reachable(address, s.connect_timeout_s)
        ray = self.ray = import_ray()
        if not ray.is_initialized():
            if named:
                self._init(f"cannot connect to the Ray cluster at {address!r}", address=address)
            elif address.lower() == "auto" and self._try_running_cluster():
                pass
            else:
                self._start_local()
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

    def _start_local(self) -> None:
        cpus = max(self.settings.workers or 0, os.cpu_count() or 1)
        # Local workers import what this process imports (a test's or a benchmark's factory
        # module included); Ray itself only adds the working directory and the script's.
        path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        self._init("cannot start a local Ray", address="local", num_cpus=cpus, object_store_memory=_LOCAL_OBJECT_STORE_BYTES,
                   runtime_env={"env_vars": {"PYTHONPATH": path}})

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._started:
            self.ray.shutdown()
            self._started = False
