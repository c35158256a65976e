"""Levers for a stronger translator: several training runs side by side, each for the same wall-clock
budget on one machine, compared on val (test is left for the one that is shipped).

    python recipes/levers.py --data-dir ../shared/data/multi30k --minutes 7 --out runs/levers-out
    python recipes/levers.py --set everyday --minutes 7 --out runs/levers-everyday   # + the Ding sentences

Each lever is a set of train.py flags over a common recipe; the runs go at once (one process each,
sharing the GPU when there is one) with --time-limit and --skip-test. Afterwards, for every run:
val BLEU (beam, length penalty tuned on val), the greedy val BLEU of its last and averaged weights,
steps, and its CPU decoding cost (greedy, batch 1, one thread, 30 val sentences, as a ratio to the
first lever's, measured side by side). The best run on val whose shape decodes as fast as the
shipped model's is packed into --out as files of at most 15 MiB: its fp32 weights in parts, two of
its fp16 snapshots, and the rest (card, results, metrics, snapshot index, every run's figures and
log tail) in bundle.tar.gz. `recipes/unpack_levers.py` turns that back into a checkpoint folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

COMMON = [
    "--epochs",
    "400",
    "--eval-every",
    "500",
    "--save-every",
    "1000",
    "--num-beams",
    "5",
    "--length-penalties",
    "0.6,1.0,1.4",
    "--snapshot-steps",
    "0,100,250,600,1500,4000",
    "--skip-test",
]
BASE = ["--batch-tokens", "6144", "--lr", "1e-3", "--warmup", "800", "--dropout", "0.3"]
LEVERS = {  # name: (what it changes, flags)
    "recipe-0.15": (
        "the shipped model's recipe (dropout 0.15, 3,072-token batches), trained on",
        ["--batch-tokens", "3072", "--lr", "1e-3", "--warmup", "800", "--dropout", "0.15"],
    ),
    "dropout-0.3": ("dropout 0.3, 6,144-token batches", BASE),
    "dropout-0.3-seed": ("the same, another seed (run-to-run noise)", [*BASE, "--seed", "4321"]),
    "dropout-0.4": ("dropout 0.4", [*BASE[:-1], "0.4"]),
    "vocab-5000": ("dropout 0.3, a 5,000-piece BPE vocabulary", [*BASE, "--vocab-size", "5000"]),
    "smoothing-0.2": ("dropout 0.3, label smoothing 0.2", [*BASE, "--label-smoothing", "0.2"]),
    "batch-12k": (
        "dropout 0.3, 12,288-token batches, peak lr 2e-3",
        ["--batch-tokens", "12288", "--lr", "2e-3", "--warmup", "800", "--dropout", "0.3"],
    ),
    "wide-512": (
        "dropout 0.3, d_model 512, 8 heads, d_ff 2048 (slower to decode)",
        [*BASE, "--d-model", "512", "--n-heads", "8", "--d-ff", "2048"],
    ),
}
RECIPE = ["--batch-tokens", "12288", "--lr", "2e-3", "--warmup", "800", "--dropout", "0.3"]  # the shipped one
MIX = ["--corpus", "multi30k+ding"]
EVERYDAY_LEVERS = {  # --set everyday: captions and the Ding sentences (python -m corpora.everyday_corpus first)
    "captions-only": ("the shipped recipe on Multi30k alone (the baseline)", RECIPE),
    "mix-r1": ("Multi30k + Ding sentences, each Ding pair once an epoch; one tokenizer for both", [*RECIPE, *MIX]),
    "mix-r2": ("the same, each Ding pair twice an epoch", [*RECIPE, *MIX, "--ding-repeat", "2"]),
    "mix-r3": ("the same, three times", [*RECIPE, *MIX, "--ding-repeat", "3"]),
    "mix-r2-vocab-10k": (
        "mix-r2 with a 10,000-piece vocabulary",
        [*RECIPE, *MIX, "--ding-repeat", "2", "--vocab-size", "10000"],
    ),
    "mix-r2-phrases": (
        "mix-r2 and the Ding phrase pairs (52,000 multi-word entries, once an epoch)",
        [*RECIPE, *MIX, "--ding-repeat", "2", "--ding-phrases"],
    ),
    "mix-r2-wide-512": (
        "mix-r2, d_model 512, 8 heads, d_ff 2048 (slower to decode; a distillation teacher)",
        [*RECIPE, *MIX, "--ding-repeat", "2", "--d-model", "512", "--n-heads", "8", "--d-ff", "2048"],
    ),
    "finetune-r2": (
        "the shipped checkpoint trained on with Ding twice an epoch (its caption vocabulary kept)",
        [
            "--init-from",
            "checkpoints/de-en",
            *MIX,
            "--ding-repeat",
            "2",
            "--batch-tokens",
            "12288",
            "--lr",
            "5e-4",
            "--warmup",
            "200",
            "--dropout",
            "0.3",
        ],
    ),
}
LEVER_SETS = {"captions": LEVERS, "everyday": EVERYDAY_LEVERS}
TINY = [
    "--max-train-pairs",
    "400",
    "--max-eval-sentences",
    "16",
    "--d-model",
    "32",
    "--n-heads",
    "2",
    "--n-layers",
    "1",
    "--d-ff",
    "64",
    "--vocab-size",
    "600",
    "--batch-tokens",
    "1024",
    "--eval-every",
    "20",
    "--snapshot-steps",
    "0,5,10,20",
]
SHAPE = ("d_model", "n_heads", "n_layers", "d_ff")  # what decides the decoding cost, besides vocabulary
PART = 15 * 2**20


def launch(name: str, flags: list[str], args) -> subprocess.Popen:
    run = args.work / name
    run.mkdir(parents=True, exist_ok=True)
    if args.tiny and "--init-from" in flags:  # the tiny shape cannot start from the shipped weights
        flags = flags[: flags.index("--init-from")] + flags[flags.index("--init-from") + 2 :]
    ding = ["--ding-dir", str(args.ding_dir)] if args.ding_dir and "--corpus" in flags else []
    cmd = [
        sys.executable,
        "train.py",
        "--data-dir",
        str(args.data_dir),
        "--output",
        str(run / "checkpoint"),
        "--work-dir",
        str(run / "work"),
        "--time-limit",
        str(args.minutes),
        "--threads",
        str(args.threads),
        *COMMON,
        *flags,
        *ding,
        *(TINY if args.tiny else []),
    ]
    (run / "command.txt").write_text(" ".join(cmd[1:]) + "\n")
    log = open(run / "train.log", "w")
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )


def wait_all(procs: dict, deadline: float) -> dict[str, int | None]:
    """Return codes by name; a run still going at the deadline is stopped (None)."""
    while any(p.poll() is None for p in procs.values()) and time.time() < deadline:
        time.sleep(2)
    codes = {}
    for name, proc in procs.items():
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            codes[name] = None
        else:
            codes[name] = proc.returncode
    return codes


def candidate_scores(log: Path) -> str:
    """The greedy val score of the last, best and averaged weights, as the run printed it."""
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "(greedy): {" in ln]
    return lines[-1].split("(greedy): ", 1)[1] if lines else ""


def decode_cost(folders: dict[str, Path], data_dir: Path, repeats: int = 3) -> dict[str, float]:
    """Median ms/sentence of greedy batch-1 decoding on the CPU, one thread, runs interleaved."""
    import torch
    from timing import interleaved

    import data
    from translation import Translator

    torch.set_num_threads(1)
    sentences = data.load_split(data_dir, "val").src[:30]
    translators = {n: Translator.from_pretrained(f, device="cpu") for n, f in folders.items()}
    seconds = interleaved(
        {n: lambda t=t: [t.translate(s, num_beams=1) for s in sentences] for n, t in translators.items()}, repeats
    )
    return {n: round(1000 * s / len(sentences), 2) for n, s in seconds.items()}


def summarise(args, codes: dict) -> list[dict]:
    rows = []
    for name, (what, _) in LEVER_SETS[args.set].items():
        if name not in codes:
            continue
        run = args.work / name
        row = {
            "lever": name,
            "what": what,
            "exit": codes[name],
            "command": (run / "command.txt").read_text().strip(),
            "candidates_greedy": candidate_scores(run / "train.log"),
        }
        results = run / "checkpoint" / "results.json"
        if codes[name] == 0 and results.is_file():
            info = json.loads(results.read_text())
            row.update(
                val_bleu=round(info["results"]["val"]["bleu"], 2),
                val_chrf=round(info["results"]["val"]["chrf"], 2),
                length_penalty=info["results"]["decoding"]["length_penalty"],
                steps=info["training"]["steps"],
                epochs=info["training"]["epochs"],
                weights=info["training"]["weights"],
                shape={k: info["settings"][k] for k in SHAPE},
                vocab_size=info["settings"]["vocab_size"],
                hardware=info["training"]["hardware"],
            )
            if "everyday_dev" in info["results"]:
                row.update(
                    everyday_dev_bleu=round(info["results"]["everyday_dev"]["bleu"], 2),
                    everyday_dev_chrf=round(info["results"]["everyday_dev"]["chrf"], 2),
                )
        rows.append(row)
    return rows


def weights_hash(folder: Path) -> str:
    """sha256 over the fp16 tensors of a checkpoint, by name (how step 0 is checked after a rebuild)."""
    import torch

    from translation import Translator

    model = Translator.from_pretrained(folder, device="cpu").model
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.to(torch.float16).contiguous().numpy().tobytes())
    return digest.hexdigest()


def choose(rows: list[dict], caption_slack: float = 0.3) -> dict | None:
    """Among finished runs shaped like the first lever (same decoding cost): with everyday figures, the best
    everyday dev chrF within `caption_slack` val BLEU of the best captions run; else the best val BLEU."""
    base = next((r for r in rows if "shape" in r), None)
    same = [r for r in rows if "shape" in r and base and r["shape"] == base["shape"]]
    if not same:
        return None
    best_val = max(r["val_bleu"] for r in same)
    everyday = [r for r in same if "everyday_dev_chrf" in r and r["val_bleu"] >= best_val - caption_slack]
    if everyday:
        return max(everyday, key=lambda r: r["everyday_dev_chrf"])
    return max(same, key=lambda r: r["val_bleu"])


def pick_snapshots(index: list[dict], count: int = 2) -> list[dict]:
    """Snapshots between the first and the last whose greedy val BLEU is nearest 20% and 65% of the last's."""
    inner = [e for e in index[1:-1] if e.get("val_bleu") is not None]
    if not index or not inner:
        return []
    final = index[-1].get("val_bleu") or 0.0
    picks = []
    for share in (0.2, 0.65)[:count]:
        left = [e for e in inner if e not in picks]
        if left:
            picks.append(min(left, key=lambda e: abs(e["val_bleu"] - share * final)))
    return sorted(picks, key=lambda e: e["step"])


def pack(chosen: dict, rows: list[dict], args, extra: dict) -> None:
    """Write the chosen checkpoint into --out as files of at most 15 MiB."""
    out, folder = args.out, args.work / chosen["lever"] / "checkpoint"
    out.mkdir(parents=True, exist_ok=True)
    weights = (folder / "model.safetensors").read_bytes()
    for i in range(0, len(weights), PART):
        (out / f"model.part{i // PART}").write_bytes(weights[i : i + PART])
    index_file = folder / "snapshots" / "index.json"
    index = json.loads(index_file.read_text())["snapshots"] if index_file.is_file() else []
    picks = pick_snapshots(index)
    for entry in picks:
        (out / f"{entry['path']}.safetensors").write_bytes(
            (folder / "snapshots" / entry["path"] / "model.safetensors").read_bytes()
        )
    summary = {
        "chosen": chosen["lever"],
        "rows": rows,
        "shipped_snapshots": [e["step"] for e in picks],
        "weights_sha256": hashlib.sha256(weights).hexdigest(),
        **extra,
    }
    if index and index[0]["step"] == 0:
        summary["step0_fp16_sha256"] = weights_hash(folder / "snapshots" / index[0]["path"])
    (args.work / "levers.json").write_text(json.dumps(summary, indent=2) + "\n")
    with tarfile.open(out / "bundle.tar.gz", "w:gz") as tar:
        tar.add(args.work / "levers.json", "levers.json")
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != "model.safetensors":
                tar.add(path, f"checkpoint/{path.relative_to(folder)}")
        for row in rows:
            run = args.work / row["lever"]
            tail = "\n".join((run / "train.log").read_text(errors="replace").splitlines()[-150:])
            log = run / "train.tail.log"
            log.write_text(tail + "\n")
            tar.add(log, f"runs/{row['lever']}/train.tail.log")
            for name in ("checkpoint/results.json", "work/metrics.jsonl", "command.txt"):
                if (run / name).is_file():
                    tar.add(run / name, f"runs/{row['lever']}/{Path(name).name}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=None, help="Multi30k folder (default: $MULTI30K_DIR)")
    parser.add_argument("--minutes", type=float, default=7.0, help="training time of every run")
    parser.add_argument("--deadline", type=float, default=None, help="minutes after which unfinished runs are stopped")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of each run")
    parser.add_argument(
        "--set",
        default="captions",
        choices=sorted(LEVER_SETS),
        help="which levers: the captions recipe's, or captions + everyday Ding sentences",
    )
    parser.add_argument(
        "--ding-dir", type=Path, default=None, help="Ding folder (default: $DING_DIR or runs/corpora/ding)"
    )
    parser.add_argument("--only", default=None, help="comma-separated lever names (default: all)")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "levers", help="where the runs are written")
    parser.add_argument("--out", type=Path, required=True, help="where the chosen checkpoint is packed")
    parser.add_argument("--tiny", action="store_true", help="a tiny model on 400 pairs: checks this script")
    args = parser.parse_args(argv)
    import data

    args.data_dir = data.find_corpus(args.data_dir)
    levers = LEVER_SETS[args.set]
    if args.set == "everyday":
        args.ding_dir = data.find_ding(args.ding_dir)
    names = args.only.split(",") if args.only else list(levers)
    started = time.time()
    procs = {n: launch(n, levers[n][1], args) for n in names}
    deadline = started + 60 * (args.deadline or args.minutes + 4)
    codes = wait_all(procs, deadline)
    rows = summarise(args, codes)
    finished = {r["lever"]: args.work / r["lever"] / "checkpoint" for r in rows if "val_bleu" in r}
    costs = decode_cost(finished, args.data_dir) if finished else {}
    first = costs.get(names[0])
    for row in rows:
        if row["lever"] in costs:
            row["cpu_ms_per_sentence"] = costs[row["lever"]]
            row["cpu_cost_ratio"] = round(costs[row["lever"]] / first, 3) if first else None
    chosen = choose(rows)
    print(json.dumps(rows, indent=1))
    if chosen is None:
        print("no run finished", file=sys.stderr)
        return 1
    pack(chosen, rows, args, {"minutes": args.minutes, "elapsed_s": round(time.time() - started, 1)})
    print(f"chosen: {chosen['lever']} (val BLEU {chosen['val_bleu']}); packed into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
