"""What every script under benchmarks/ shares: the machine a result was measured on, merging one
section into a results JSON file, a plain-text table, and the LLM a script reads with.

The scripts import this (and the rest of ``medground``) instead of each other, so a figure in a
results file is computed by package code the tests cover, never by a sibling script.

    save_section(RESULTS, "pubmedqa", {"n": 200, "rows": rows})
    print_table("PubMedQA n=200", rows, ["arm", "accuracy", "ci95"])
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    """Where and when a section was measured. Load is read at save time (the end of the run): the
    machine is shared, and a busy one explains slow seconds-per-question figures."""
    return {"cpu_count": os.cpu_count(), "load_1min_at_end": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def save_section(path: Path, section: str, payload: dict[str, Any]) -> None:
    """Merge ``payload`` into the JSON file ``path`` as ``section``, with the machine and the exact
    command; the file's other sections are kept (each script section is run on its own)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[section] = {**payload, "machine": machine(), "command": "python " + " ".join(sys.argv)}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def print_table(title: str, rows: list[dict], cols: list[str]) -> None:
    print(f"\n{title}")
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols))


def make_llm(model: str, threads: int, cache: bool = True):
    """The local LLM by registry name; ``cache``: answers come from the shared response cache when
    the same prompt was asked before (off for timings)."""
    from medground.llm.base import LLMSettings, create_llm

    return create_llm(LLMSettings(model=model, threads=threads, cache=cache))
