"""Where a run keeps its files, and how far it has got (saved with the training state)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from translation.snapshots import FOLDER as SNAPSHOTS

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RUNS_DIR = PROJECT_ROOT / "runs"  # git-ignored


def default_work_dir(output: str | Path) -> Path:
    """runs/<output name>-<hash of the full output path>: two outputs never share a work folder."""
    resolved = Path(output).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    return RUNS_DIR / f"{resolved.name or 'output'}-{digest}"


@dataclass(frozen=True)
class RunFiles:
    """The files of one work directory."""

    work_dir: Path

    @property
    def state(self) -> Path:
        return self.work_dir / "state.safetensors"

    @property
    def metrics(self) -> Path:
        return self.work_dir / "metrics.jsonl"

    @property
    def curves(self) -> Path:
        return self.work_dir / "curves.png"

    @property
    def tokenizer(self) -> Path:
        return self.work_dir / "tokenizer.json"

    @property
    def best(self) -> Path:
        return self.work_dir / "best.safetensors"

    @property
    def snapshots(self) -> Path:
        return self.work_dir / SNAPSHOTS

    def checkpoint(self, step: int) -> Path:
        return self.work_dir / f"ckpt-{step}.safetensors"


@dataclass
class RunState:
    """Progress of a run: what a resume needs besides the weights, optimizer and RNG."""

    step: int = 0
    epoch: int = 0
    position: int = 0  # batches of the current epoch already trained on
    best_score: float = -math.inf
    wall_time: float = 0.0  # seconds of training so far, across resumes
    tokens: int = 0  # target tokens trained on so far, all ranks together
    saved_steps: list[int] = field(default_factory=list)  # rotation checkpoints, oldest first
    snapshots: list[dict] = field(default_factory=list)  # {"step", metrics...} of each snapshot taken
    finished: bool = False  # the output folder was written

    def advance(self, tokens: int, seconds: float) -> None:
        self.step += 1
        self.position += 1
        self.tokens += tokens
        self.wall_time += seconds

    def next_epoch(self) -> None:
        self.epoch += 1
        self.position = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, progress: dict, source: object) -> RunState:
        """Progress read from a state file; anything impossible is an error naming `source`."""
        defaults = cls()
        values = {k: progress.get(k, getattr(defaults, k)) for k in defaults.to_dict()}
        for key in ("step", "epoch", "position", "tokens"):
            if not isinstance(values[key], int) or isinstance(values[key], bool) or values[key] < 0:
                raise ValueError(f"{source}: progress.{key} is {values[key]!r}, expected a whole number >= 0")
        if not isinstance(values["wall_time"], (int, float)) or not values["wall_time"] >= 0:
            raise ValueError(f"{source}: progress.wall_time is {values['wall_time']!r}, expected seconds >= 0")
        if not all(isinstance(s, int) and 0 <= s <= values["step"] for s in values["saved_steps"]):
            raise ValueError(f"{source}: progress.saved_steps is {values['saved_steps']!r}, expected steps")
        return cls(**values)
