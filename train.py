"""Train the German -> English Transformer (or the copy task), evaluate it, save it, push it.

    python train.py --data-dir ../shared/data/multi30k --output runs/de-en-new
    python train.py --task copy --output runs/copy --max-steps 400
    torchrun --nproc_per_node=2 train.py ...      # DistributedDataParallel, one shard each

The run is resumable: rerunning the same command continues from the training state in
--work-dir (written atomically every --save-every steps, and on Ctrl-C or SIGTERM). A state is
only resumed by the run it belongs to (same output, settings and data); a finished run says so
and exits. Every flag, its meaning and its default come from training/settings.py.
"""

from __future__ import annotations

import sys

from data import CorpusError
from training.checkpointing import StateError
from training.guard import RunError
from training.loop import Interrupt, train
from training.metrics import MetricsError
from training.settings import TrainSettings, parse_settings


def parse_args(argv: list[str] | None = None) -> TrainSettings:
    return parse_settings(list(sys.argv[1:] if argv is None else argv), description=__doc__)


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    interrupt = Interrupt()
    try:
        return train(settings, interrupt)
    except (RunError, StateError, MetricsError, CorpusError) as err:
        raise SystemExit(f"train.py: {err}") from None
    finally:
        interrupt.restore()


if __name__ == "__main__":
    sys.exit(main())
