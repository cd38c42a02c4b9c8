"""Persistent LLM response cache: SQLite keyed by (backend, model fingerprint, request body).

Stores the raw chat-completions JSON, so a hit is parsed by the same code as a fresh answer
and reruns of a benchmark cost nothing.

The cache never fails an answer: a lookup that meets a locked or broken database is a miss, a
write that cannot be made is skipped (and logged once), and neither waits more than
``BUSY_TIMEOUT_S`` for another writer. The files are the user's alone (0600): they hold prompts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any


log = logging.getLogger(__name__)
BUSY_TIMEOUT_S = 2.0


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
        self._write_failed = False
        self.path.touch(mode=0o600, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, backend TEXT, fingerprint TEXT,"
            " payload TEXT NOT NULL, seconds REAL, created REAL)"
        )
        self._db.commit()
        self._private()

    def _private(self) -> None:
        for suffix in ("", "-wal", "-shm"):  # the WAL files hold prompts too
            f = Path(f"{self.path}{suffix}")
            try:
                if f.exists() and f.stat().st_mode & 0o077:
                    os.chmod(f, 0o600)
            except OSError:  # another user's file we may not change: leave it, never fail
                pass

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            try:
                row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:  # locked past the timeout, or broken: answer without it
                log.warning("LLM cache %s unreadable (%s): treated as a miss", self.path, exc)
                row = None
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, payload: dict[str, Any], *, backend: str, fingerprint: str, seconds: float) -> None:
        blob = json.dumps(payload, ensure_ascii=False)
        with self._lock:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                    (key, backend, fingerprint, blob, seconds, time.time()),
                )
                self._db.commit()
            except (sqlite3.Error, OSError) as exc:  # locked, full disk: the answer is returned all the same
                try:
                    self._db.rollback()
                except sqlite3.Error:
                    pass
                if not self._write_failed:
                    log.warning("LLM cache %s: a response could not be stored (%s); answers are not cached "
                                "until this clears", self.path, exc)
                    self._write_failed = True
                return
            if self._write_failed:
                self._write_failed = False
            self._private()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self)}

    def close(self) -> None:
        with self._lock:
            self._db.close()
