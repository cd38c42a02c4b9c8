"""SQLite persistence of the medicine database: drugs, names (→ drug), attributes.

One file (default ``paths.home()/"drugs.sqlite"``); :meth:`DrugStore.build` replaces its whole
content in one transaction, so a reader never sees half a database.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from medground import paths
from medground.drug_schema import (
    CATALOG_VERSION,
    AttributeType,
    Drug,
    DrugAttribute,
    DrugCatalog,
    normalize_name,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS drugs (
    drug_id TEXT PRIMARY KEY, generic_name TEXT NOT NULL, drug_class TEXT NOT NULL,
    brand_names TEXT NOT NULL, synonyms TEXT NOT NULL, components TEXT NOT NULL,
    sources TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS names (
    name TEXT NOT NULL, drug_id TEXT NOT NULL REFERENCES drugs(drug_id),
    kind TEXT NOT NULL CHECK (kind IN ('generic', 'brand', 'synonym', 'component')),
    PRIMARY KEY (name, drug_id, kind));
CREATE INDEX IF NOT EXISTS names_by_drug ON names(drug_id);
CREATE TABLE IF NOT EXISTS attributes (
    attr_id INTEGER PRIMARY KEY, drug_id TEXT NOT NULL REFERENCES drugs(drug_id),
    type TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS attributes_by_drug ON attributes(drug_id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass
class DrugStats:
    drugs: int
    attributes: int
    attributes_by_type: dict[str, int]
    drugs_with_4plus_types: int
    names_by_kind: dict[str, int]
    drugs_by_source: dict[str, int]
    attributes_by_source: dict[str, int]
    build: dict[str, int] = field(default_factory=dict)  # builder counters
    unknown_headings: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


class EmptyDrugStoreError(FileNotFoundError):
    pass


def default_path() -> Path:
    return paths.home() / "drugs.sqlite"


def name_rows(drug: Drug) -> list[tuple[str, str, str]]:
    """(normalized name, drug_id, kind) for every name that should find this drug."""
    rows = {(normalize_name(drug.generic_name), drug.drug_id, "generic")}
    rows |= {(normalize_name(b), drug.drug_id, "brand") for b in drug.brand_names}
    strong = {r[0] for r in rows}
    rows |= {(normalize_name(s), drug.drug_id, "synonym") for s in drug.synonyms
             if normalize_name(s) not in strong}
    rows |= {(normalize_name(c), drug.drug_id, "component") for c in drug.components}
    return sorted(r for r in rows if r[0])


class DrugStore:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path)
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> DrugStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def build(self, catalog: DrugCatalog) -> None:
        """Replace the content with ``catalog`` in one transaction."""
        with self._conn:
            for table in ("attributes", "names", "drugs", "meta"):
                self._conn.execute(f"DELETE FROM {table}")
            self._conn.executemany(
                "INSERT INTO drugs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(d.drug_id, d.generic_name, d.drug_class, json.dumps(d.brand_names),
                  json.dumps(d.synonyms), json.dumps(d.components), json.dumps(d.sources))
                 for d in catalog.drugs])
            self._conn.executemany("INSERT INTO names VALUES (?, ?, ?)",
                                   [r for d in catalog.drugs for r in name_rows(d)])
            self._conn.executemany(
                "INSERT INTO attributes (drug_id, type, heading, text, source) "
                "VALUES (?, ?, ?, ?, ?)",
                [(a.drug_id, a.type.value, a.heading, a.text, a.source)
                 for a in catalog.attributes])
            unknown = [{"source": u.source, "heading": u.heading} for u in catalog.unknown_headings]
            meta = {"counts": catalog.counts, "unknown_headings": unknown,
                    "problems": catalog.problems, "catalog_version": CATALOG_VERSION}
            self._conn.executemany("INSERT INTO meta VALUES (?, ?)",
                                   [(k, json.dumps(v)) for k, v in meta.items()])

    # ------------------------------------------------------------ reads

    def is_empty(self) -> bool:
        return self._conn.execute("SELECT COUNT(*) FROM drugs").fetchone()[0] == 0

    def require_built(self) -> None:
        if self.is_empty():
            raise EmptyDrugStoreError(f"{self.path}: the medicine database is empty; run "
                                      "`medground drugs build` first")
        built = self.meta("catalog_version") or 1
        if built < CATALOG_VERSION:
            warnings.warn(f"{self.path} was built by an older version of the builders (catalog "
                          f"version {built}, now {CATALOG_VERSION}): run `medground drugs build` "
                          "to get what they add", stacklevel=2)

    def drugs(self) -> list[Drug]:
        rows = self._conn.execute("SELECT * FROM drugs ORDER BY drug_id").fetchall()
        return [_drug(r) for r in rows]

    def drug(self, drug_id: str) -> Drug | None:
        row = self._conn.execute("SELECT * FROM drugs WHERE drug_id = ?", (drug_id,)).fetchone()
        return _drug(row) if row else None

    def names(self) -> list[tuple[str, str, str]]:
        """(name, drug_id, kind), sorted."""
        return self._conn.execute("SELECT name, drug_id, kind FROM names ORDER BY 1, 2, 3").fetchall()

    def lookup(self, name: str) -> list[tuple[str, str]]:
        """Exact (normalized) name → [(drug_id, kind)]."""
        return self._conn.execute("SELECT drug_id, kind FROM names WHERE name = ? ORDER BY 1, 2",
                                  (normalize_name(name),)).fetchall()

    def attributes(self, drug_id: str | None = None) -> list[DrugAttribute]:
        sql = "SELECT drug_id, type, text, source, heading FROM attributes"
        args: tuple = ()
        if drug_id is not None:
            sql, args = sql + " WHERE drug_id = ?", (drug_id,)
        rows = self._conn.execute(sql + " ORDER BY attr_id", args).fetchall()
        return [DrugAttribute(r[0], AttributeType(r[1]), r[2], r[3], r[4]) for r in rows]

    def meta(self, key: str) -> object:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def stats(self) -> DrugStats:
        q = self._conn.execute
        by_type = dict(q("SELECT type, COUNT(*) FROM attributes GROUP BY 1 ORDER BY 1").fetchall())
        rich = q("SELECT COUNT(*) FROM (SELECT drug_id FROM attributes GROUP BY drug_id "
                 "HAVING COUNT(DISTINCT type) >= 4)").fetchone()[0]
        names = dict(q("SELECT kind, COUNT(*) FROM names GROUP BY 1 ORDER BY 1").fetchall())
        drugs_by_source: Counter[str] = Counter()
        for (sources,) in q("SELECT sources FROM drugs"):
            drugs_by_source.update(json.loads(sources))
        attrs_by_source: Counter[str] = Counter()
        for (source,) in q("SELECT source FROM attributes"):
            attrs_by_source[source.split(":", 1)[0]] += 1
        return DrugStats(
            drugs=q("SELECT COUNT(*) FROM drugs").fetchone()[0],
            attributes=sum(by_type.values()),
            attributes_by_type=by_type,
            drugs_with_4plus_types=rich,
            names_by_kind=names,
            drugs_by_source=dict(sorted(drugs_by_source.items())),
            attributes_by_source=dict(sorted(attrs_by_source.items())),
            build=self.meta("counts") or {},
            unknown_headings=len(self.meta("unknown_headings") or []),
        )


def _drug(row: tuple) -> Drug:
    drug_id, generic, drug_class, brands, synonyms, components, sources = row
    return Drug(drug_id, generic, json.loads(brands), drug_class, json.loads(synonyms),
                json.loads(components), json.loads(sources))
