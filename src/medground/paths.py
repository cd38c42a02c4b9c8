"""Where data and working files live. Data is read from a path, never committed."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


class DataNotFoundError(FileNotFoundError):
    pass


def data_root(explicit: str | Path | None = None, *, must_exist: bool = True) -> Path:
    """The shared data directory: explicit arg > $MEDGROUND_DATA > ../shared/data (from the
    working directory or the checkout) > ~/.cache/medground/data (filled by `data pull`)."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    elif os.environ.get("MEDGROUND_DATA"):
        candidates.append(Path(os.environ["MEDGROUND_DATA"]))
    else:
        candidates.append(Path.cwd().parent / "shared" / "data")
        repo = Path(__file__).resolve().parents[2]
        candidates.append(repo.parent / "shared" / "data")
        candidates.append(Path.home() / ".cache" / "medground" / "data")
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    if must_exist:
        tried = ", ".join(str(c) for c in candidates)
        raise DataNotFoundError(
            f"no data directory found (tried {tried}); set MEDGROUND_DATA, pass --data DIR, "
            "or run `medground data pull --from DIR`"
        )
    return candidates[0]


def home(explicit: str | Path | None = None) -> Path:
    """Working directory for stores, indexes, caches and runs: $MEDGROUND_HOME or ./.medground."""
    p = Path(explicit or os.environ.get("MEDGROUND_HOME") or Path.cwd() / ".medground")
    p.mkdir(parents=True, exist_ok=True)
    return p


def shipped_configs(kind: str = "pipelines") -> Path:
    """The configs shipped inside the package (``pipelines`` or ``sweeps``): package data, so a
    wheel install has them as well as a checkout (where ``configs/`` links to them)."""
    return Path(str(resources.files("medground").joinpath("configs", kind)))


SHIPPED_CONFIGS = shipped_configs("pipelines")
