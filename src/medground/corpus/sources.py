"""Pinned data sources: what `medground data pull/verify` fetch and check.

Each pin names a folder under the data root, where it came from, and a digest of its tree:
sha256 over the sorted relative paths and file sha256s (hidden files skipped), plus the file
count. Pins were computed from the shared data on 2026-11-22.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class SourcePin:
    name: str
    path: str  # relative to the data root
    origin: str  # a public origin: repository@commit or a description
    sha256: str
    file_count: int
    archive_url: str = (
        ""  # a tarball of the origin; empty when there is no automatic download
    )
    archive_subdir: str = ""  # folder inside the tarball that becomes ``path``


_OPENSTAX_NURSING = "github.com/openstax/osbooks-nursing-external-bundle@7876f90a3dbdc0756e21a374d4a46526d0ac453b"

PINS: tuple[SourcePin, ...] = (
    SourcePin(
        "openstax/anatomy-physiology-2e",
        "corpora/openstax/anatomy-physiology-2e",
        "github.com/openstax/osbooks-anatomy-physiology@b0058a74 (CC BY 4.0)",
        "b73d37717184efab19d24bec616fe18bcd41911a218c52e02a632fad9189f93b",
        201,
    ),
    SourcePin(
        "openstax/microbiology",
        "corpora/openstax/microbiology",
        "github.com/openstax/osbooks-microbiology@ecf34dad (CC BY 4.0)",
        "f5c6c42af4366855d0a59f415f4776936cdad9955806676c17908ab96a0f751f",
        162,
    ),
    SourcePin(
        "openstax/psychology-2e",
        "corpora/openstax/psychology-2e",
        "github.com/openstax/osbooks-psychology@e061043b (CC BY 4.0)",
        "c38ca54bf7d5f25e2c27a7e60f49eb8da06d86337eccc34f0f9e24a7446f57f7",
        108,
    ),
    SourcePin(
        "openstax/pharmacology-for-nurses",
        "corpora/openstax/pharmacology-for-nurses",
        _OPENSTAX_NURSING + " (CC BY 4.0)",
        "10fe968acd40842f62678a269df27158cab7dc1c3449610b121f911f4fc9ac53",
        206,
    ),
    SourcePin(
        "openstax/nutrition-for-nurses",
        "corpora/openstax/nutrition-for-nurses",
        _OPENSTAX_NURSING + " (CC BY 4.0)",
        "e2c7f146b015c2b60c1992f16abcd1c1934049c018b32ef680a4576093868bc9",
        96,
    ),
    SourcePin(
        "openstax/population-health-for-nurses",
        "corpora/openstax/population-health-for-nurses",
        _OPENSTAX_NURSING + " (CC BY 4.0)",
        "427edf1da3be3cca88cf69b3aba51f3359bcf284d11d9a2b4a098d53c18b0c3f",
        188,
    ),
    SourcePin(
        "medquad",
        "corpora/medquad",
        "github.com/abachaa/MedQuAD@577bd37b96c02d1833b2c9eed2de9f96964e96cb (CC BY 4.0)",
        "5575c45b72bb0f595cce3ddbda97432ccaa8ebd3f465095ff8525d3eb8cbc283",
        5500,
        archive_url="https://codeload.github.com/abachaa/MedQuAD/tar.gz/"
        "577bd37b96c02d1833b2c9eed2de9f96964e96cb",
    ),
    SourcePin(
        "medlineplus-topics",
        "corpora/medlineplus-topics",
        "MedlinePlus health-topic summaries, NLM (public domain)",
        "e9c8471a2ea9d6c184a0cf89861380167832435f299dc60bfef922664420b437",
        1,
    ),
    SourcePin(
        "fda-labels-tac2017",
        "drugs/fda-labels-tac2017",
        "TAC 2017 Adverse Drug Reaction labels, Demner-Fushman et al. (public domain)",
        "c41a5526c204469023b92bf07ff0402b10c96008e7ac90d0701b802635c1e6c2",
        2,
    ),
    SourcePin(
        "mirage",
        "benchmarks/mirage",
        "MIRAGE benchmark.json (Xiong et al. 2024)",
        "cd508c5535751750246595c713f1c7da17de9328f7bd207e378457b509227a1b",
        1,
    ),
    SourcePin(
        "medagents",
        "benchmarks/medagents",
        "MedAgents-Benchmark test sets (MIT)",
        "67b2b6f4e4bfbdd3b74496845774828494d4609c3ab4ba145f00a68c3f327555",
        6,
    ),
    SourcePin(
        "pubmedqa",
        "benchmarks/pubmedqa",
        "PubMedQA ori_pqal.json + test ground truth (MIT)",
        "49b0e4092fff875eb2c9d9181a2b5941dfe32d8f7f1674b2bbe5aa78b99643a9",
        3,
    ),
    SourcePin(
        "cnmleqa",
        "benchmarks/cnmleqa",
        "CNMLEQA-3k Chinese licensing-exam questions",
        "be3d55cd99865e94430d03809549453a7e5b894a58e884d2d3c1e2724edd50c4",
        1,
    ),
    SourcePin(
        "medicineqa-zh",
        "benchmarks/medicineqa-zh",
        "MedicineQA_RAG.jsonl (MedicineQA paper)",
        "77d6d3556e3ca7df156edf879a8e7c0eb7d2ebdfde5c107fa854e7858fb953d5",
        1,
    ),
    SourcePin(
        "medication-qa",
        "benchmarks/medication-qa",
        "MedInfo2019-QA-Medications.xlsx (Ben Abacha et al. 2019)",
        "fe43d741352961db1ee49bba6e4aeb876d5d4d983b0c0562be39824310817b32",
        1,
    ),
)


class PinMismatchError(RuntimeError):
    pass


def pin_named(name: str) -> SourcePin:
    for p in PINS:
        if p.name == name:
            return p
    raise KeyError(
        f"no pinned source {name!r}; known: {', '.join(p.name for p in PINS)}"
    )


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def tree_sha256(path: Path) -> tuple[str, int]:
    """sha256 of a file, or of a directory's sorted relative paths + file hashes; file count."""
    path = Path(path)
    if path.is_file():
        return file_sha256(path), 1
    h = hashlib.sha256()
    count = 0
    files = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        files.extend(Path(dirpath) / f for f in filenames if not f.startswith("."))
    for f in sorted(files, key=lambda p: p.relative_to(path).as_posix()):
        h.update(
            f.relative_to(path).as_posix().encode()
            + b"\0"
            + file_sha256(f).encode()
            + b"\n"
        )
        count += 1
    return h.hexdigest(), count


def check_pin(data: Path, pin: SourcePin) -> str | None:
    """None when ``data/pin.path`` matches the pin, else what is wrong."""
    where = Path(data) / pin.path
    if not where.exists():
        return f"{pin.name}: missing ({where})"
    sha, count = tree_sha256(where)
    if count != pin.file_count:
        return f"{pin.name}: {count} files at {where}, pinned {pin.file_count}"
    if sha != pin.sha256:
        return f"{pin.name}: content differs from the pin at {where} (sha256 {sha[:12]}…, pinned {pin.sha256[:12]}…)"
    return None


def copy_source(
    pin: SourcePin, src_root: Path, dst_root: Path, link: bool = False
) -> Path:
    """Copy (or symlink) one pinned source from a local data directory, then verify it."""
    src, dst = Path(src_root) / pin.path, Path(dst_root) / pin.path
    if not src.exists():
        raise FileNotFoundError(
            f"{pin.name}: not found under {src_root} (expected {src})"
        )
    problem = check_pin(Path(src_root), pin)
    if problem:
        raise PinMismatchError(problem)
    if Path(dst).resolve() == Path(src).resolve():
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.is_symlink() or dst.is_file():
        dst.unlink()
    elif dst.exists():
        shutil.rmtree(dst)
    if link:
        dst.symlink_to(src.resolve(), target_is_directory=src.is_dir())
    elif src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy2(src, dst)
    return dst


def download_source(pin: SourcePin, dst_root: Path, timeout: float = 20.0) -> Path:
    """Fetch a pinned source from its origin archive and verify it against the pin."""
    if not pin.archive_url:
        raise PinMismatchError(
            f"{pin.name}: no automatic download (origin: {pin.origin}); fetch it yourself and "
            "run `medground data pull --from DIR`"
        )
    dst = Path(dst_root) / pin.path
    with tempfile.TemporaryDirectory() as tmp:
        tarball = Path(tmp) / "src.tar.gz"
        try:
            with (
                urllib.request.urlopen(pin.archive_url, timeout=timeout) as resp,
                open(tarball, "wb") as fh,
            ):
                shutil.copyfileobj(resp, fh)
        except (urllib.error.URLError, OSError) as exc:
            raise ConnectionError(
                f"{pin.name}: cannot download {pin.archive_url} ({exc}); without network, copy "
                "the data from a local directory: `medground data pull --from DIR`"
            ) from None
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data")
        tops = [p for p in Path(tmp).iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise PinMismatchError(
                f"{pin.name}: unexpected archive layout from {pin.archive_url}"
            )
        staged = tops[0] / pin.archive_subdir if pin.archive_subdir else tops[0]
        sha, count = tree_sha256(staged)
        if (sha, count) != (pin.sha256, pin.file_count):
            raise PinMismatchError(
                f"{pin.name}: downloaded tree does not match the pin ({count} files, sha256 {sha[:12]}…)"
            )
        if dst.exists():
            shutil.rmtree(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staged, dst)
    return dst
