"""Files written whole or not at all, and locations checked for writing before a run starts.

Every file of a work directory is written to a temporary name beside it and renamed into place:
a kill or a full disk leaves the previous version whole, never half of a new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink()


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def copy_file(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def replace_folder(new: Path, target: Path) -> None:
    """Put the finished folder `new` at `target`, removing what was there only once `new` is in place."""
    target = Path(target)
    old = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.old")
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def check_writable(folder: Path, what: str) -> None:
    """Create `folder` if needed and write a probe file in it; an error names the flag and the path."""
    folder = Path(folder)
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
        if created:
            folder.rmdir()  # leave no empty folder behind if the run stops before writing there
    except OSError as err:
        raise OSError(f"cannot write to {what} {folder}: {err.strerror or err}; choose a writable location") from None


def is_tracked_by_git(path: Path) -> bool:
    """True when git tracks a file at or under `path` (so a run must not silently replace it)."""
    path = Path(path).resolve()
    folder = path if path.is_dir() else path.parent
    while not folder.exists():
        folder = folder.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "--", str(path)], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and bool(out.stdout.strip())
