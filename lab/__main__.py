"""python -m lab list | python -m lab run NAME [--pair ID] [--seeds 0 1 2] [--steps N]: an experiment in PyTorch,
A against B, and the table of their final loss and accuracies (docs/lab.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch

from .experiments import experiments, holds
from .train import train


def table_rows(name: str, pair: str | None, seeds: list[int], steps: int | None) -> list[dict[str, Any]]:
    experiment, rows = experiments()[name], []
    for seed in seeds:
        a, b = experiment.settings(pair, seed, **({"steps": steps} if steps else {}))
        runs = {"a": train(a), "b": train(b)}
        finals = {k: r.final for k, r in runs.items()}
        rows.append({"seed": seed, **{k: {**f, "diverged_at": runs[k].diverged_at} for k, f in finals.items()},
                     "holds": holds(experiment.expected(pair), finals["a"], finals["b"])})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the experiments and their pairs")
    run = sub.add_parser("run", help="train A and B of one experiment")
    run.add_argument("name", choices=sorted(experiments()))
    run.add_argument("--pair", default=None, help="which pair (default: the experiment's first)")
    run.add_argument("--seeds", type=int, nargs="+", default=[0])
    run.add_argument("--steps", type=int, default=None)
    run.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # toy tensors: one thread is fastest
    if args.command == "list":
        for name, e in experiments().items():
            print(f"{name:24} {', '.join(e.pair_ids())}")
        return 0
    try:
        rows = table_rows(args.name, args.pair, args.seeds, args.steps)
    except ValueError as error:
        print(f"python -m lab: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows))
        return 0
    print(
        f"{'seed':>4}  {'A loss':>7} {'A forced':>8} {'A greedy':>8}  {'B loss':>7} {'B forced':>8} {'B greedy':>8}  as said"
    )
    for r in rows:
        a, b = r["a"], r["b"]
        print(
            f"{r['seed']:>4}  {a['loss']:7.3f} {a['forced']:8.1%} {a['greedy']:8.1%}  "
            f"{b['loss']:7.3f} {b['forced']:8.1%} {b['greedy']:8.1%}  {'yes' if r['holds'] else 'NO'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
