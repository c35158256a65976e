"""Debian packages as corpora: `apt-get download`, a sha256 check, `dpkg-deb -x`; nothing is installed.

Each corpus module names the packages it reads with the sha256 of the .deb it was written against
(Debian bookworm), so another version is never trained on unnoticed; `any_version=True` accepts it and
records its checksum.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path


class PackageError(RuntimeError):
    """A package could not be downloaded, is not the version we know, or cannot be unpacked."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str | None  # of the .deb; None: any file, recorded
    license: str


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(command: list[str], cwd: Path, what: str) -> None:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise PackageError(f"{what} failed: {err}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise PackageError(f"{what} failed (exit {done.returncode}): {last}")


def download(package: Package, folder: Path, debs: Path | None = None) -> Path:
    """The package's .deb: found in `debs` (a folder of .debs already downloaded), else `apt-get download`."""
    for place in [p for p in (debs, folder) if p]:
        found = sorted(place.glob(f"{package.name}_*.deb"))
        if found:
            return found[-1]
    folder.mkdir(parents=True, exist_ok=True)
    _run(["apt-get", "download", package.name], folder, f"apt-get download {package.name}")
    found = sorted(folder.glob(f"{package.name}_*.deb"))
    if not found:
        raise PackageError(f"apt-get download {package.name} wrote no .deb")
    return found[-1]


def checked(deb: Path, package: Package, any_version: bool = False) -> str:
    """The .deb's sha256, refused when it is not the one the package was written against."""
    digest = sha256_of(deb)
    if package.sha256 and digest != package.sha256 and not any_version:
        raise PackageError(
            f"{deb.name} has sha256 {digest}, not {package.sha256} ({package.name} {package.version}); "
            "another version extracts other pairs: pass --any-version to use it (its sha256 is recorded)"
        )
    return digest


def unpacked(package: Package, scratch: Path, debs: Path | None = None, any_version: bool = False) -> tuple[Path, dict]:
    """The package's files unpacked under `scratch/<name>`, and what SOURCE.json records of it."""
    deb = download(package, scratch / "debs", debs)
    digest = checked(deb, package, any_version)
    root = scratch / package.name
    root.mkdir(parents=True, exist_ok=True)
    _run(["dpkg-deb", "-x", str(deb.resolve()), str(root.resolve())], scratch, f"unpacking {deb.name}")
    return root, {"package": package.name, "version": package.version, "deb_sha256": digest, "license": package.license}
