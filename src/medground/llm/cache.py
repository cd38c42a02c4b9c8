"""Persistent LLM response cache: SQLite keyed by (backend, model fingerprint, request body).

Stores the raw chat-completions JSON, so a hit is parsed by the same code as a fresh answer
and reruns of a benchmark cost nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any


def cache_key(backend: str, fingerprint: str, body: dict[str, Any]) -> str:
    # The model path/name in the body is covered by the fingerprint (a moved file still hits).
    content = {k: v for k, v in body.items() if k != "model"}
    blob = json.dumps([backend, fingerprint, content], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        # One connection shared by threads (chat_many): serialised by the lock.
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, backend TEXT, fingerprint TEXT,"
            " payload TEXT NOT NULL, seconds REAL, created REAL)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, payload: dict[str, Any], *, backend: str, fingerprint: str, seconds: float) -> None:
        blob = json.dumps(payload, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, backend, fingerprint, blob, seconds, time.time()),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self)}

    def close(self) -> None:
        with self._lock:
            self._db.close()
