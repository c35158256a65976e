"""Time travel across fine-tuning: a run that started from another checkpoint (`train.py --init-from`) gets
that checkpoint's snapshots, its final weights as one more snapshot, and then its own snapshots with their
steps counted on from there, so the slider runs from the untrained model to the fine-tuned one. The last
point is the run's own final weights, at the step they were kept from; snapshots after it are left out.

    python -m training.lineage --base checkpoints/de-en --run runs/everyday/default-ft/checkpoint \
        --base-phase captions --phase "captions + everyday" [--drop 250,3800]

Each index entry gets `phase`, the name of the training it belongs to. The run's own snapshot folders are
renamed to their new steps; the base's are copied. Rerunning it on a run it has already extended changes
nothing (its entries say `phase` already).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import data
from model.checkpoint.files import replace_folder, write_text
from translation import Translator
from translation.snapshots import FOLDER, INDEX_FILE, revision_name

from .evaluation import evaluate_translation
from .snapshots import write_index
from .tasks import half_copy

FINAL = ".."  # an index entry whose path is this is the checkpoint's own final weights
FIGURES = ("val_loss", "val_bleu", "everyday_dev_bleu")  # what an entry says of its weights


def read_entries(checkpoint: Path) -> list[dict]:
    """The snapshot index of a checkpoint folder (an empty list where it has none)."""
    index = checkpoint / FOLDER / INDEX_FILE
    if not index.is_file():
        return []
    entries = json.loads(index.read_text(encoding="utf-8")).get("snapshots")
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("step"), int) for e in entries
    ):
        raise ValueError(f"{index} is not a snapshot index: every entry needs a whole 'step'")
    return entries


def final_step(checkpoint: Path, entries: list[dict]) -> int:
    """The step of a checkpoint's final weights: its index's final entry, else the steps its results record."""
    for entry in entries:
        if entry.get("path") == FINAL:
            return entry["step"]
    results = json.loads((checkpoint / "results.json").read_text(encoding="utf-8"))
    return int(results["training"]["steps"])


def final_weights(checkpoint: Path) -> dict:
    """The evaluated step whose weights a run kept as its final ones, with its figures: where results.json says
    the best were kept, the first step with the highest score among the loop's evaluations in metrics.jsonl
    (val_bleu_mean where the run had everyday dev text, else val_bleu); otherwise the last step. {} where the
    run recorded no evaluations."""
    metrics = checkpoint / "metrics.jsonl"
    results = json.loads((checkpoint / "results.json").read_text(encoding="utf-8"))
    every, last = results["settings"].get("eval_every") or 1, results["training"]["steps"]
    rows = (
        [json.loads(line) for line in metrics.read_text(encoding="utf-8").splitlines() if line.strip()]
        if metrics.is_file()
        else []
    )
    rows = [
        r for r in rows if isinstance(r.get("val_bleu"), (int, float)) and (r["step"] % every == 0 or r["step"] == last)
    ]
    if not rows:
        return {}
    key = "val_bleu_mean" if "val_bleu_mean" in rows[-1] else "val_bleu"
    best = results["training"].get("weights") == "best"  # the loop keeps a new best only when it is higher
    row = max(rows, key=lambda r: r.get(key, float("-inf"))) if best else rows[-1]
    return {k: row[k] for k in ("step", *FIGURES) if k in row}


def base_final_snapshot(base: Path, root: Path, step: int, phase: str, figures: dict) -> dict:
    """The base checkpoint's final weights, in fp16, as the snapshot folder of `step` under `root`."""
    translator = Translator.from_pretrained(base, device="cpu")
    entry = {"step": step, "revision": revision_name(step), "path": revision_name(step), "phase": phase, **figures}
    tmp = root / f".{revision_name(step)}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    Translator(half_copy(translator.model), translator.tokenizer).save_pretrained(tmp, card_info={"snapshot": entry})
    replace_folder(tmp, root / revision_name(step))
    return entry


def extend(
    base: Path,
    run: Path,
    base_phase: str,
    phase: str,
    final_phase: str | None = None,
    final_figures: dict | None = None,
    drop: frozenset[int] = frozenset(),
) -> list[dict]:
    """Write `run`'s snapshot index as the base's history followed by its own; return the new entries.
    `final_phase` names the last point where it differs from the run's (the run's weights averaged with others),
    and `final_figures` are then its own (measured_figures). The steps in `drop` lose their snapshot folders (to
    keep a long history within the size the checkpoints may take)."""
    own = read_entries(run)
    if any("phase" in e for e in own):
        return own  # extended already
    base_entries = read_entries(base)
    start = final_step(base, base_entries)
    root = run / FOLDER
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for entry in sorted(own, key=lambda e: -e["step"]):  # the last first: a new name never meets one still to move
        step = entry["step"] + start
        # the run's step 0 is the base's final weights
        moved = {**entry, "step": step, "phase": phase if entry["step"] else base_phase}
        if entry.get("path") != FINAL:
            (root / entry["path"]).rename(root / revision_name(step))
            moved.update(path=revision_name(step), revision=revision_name(step))
        entries.append(moved)
    for entry in base_entries:
        if entry.get("path") != FINAL:
            shutil.copytree(base / FOLDER / entry["path"], root / entry["path"], dirs_exist_ok=True)
            entries.append({**entry, "phase": entry.get("phase", base_phase)})
    if not any(e.get("path") == FINAL for e in own):  # the run's final weights, at the step they were kept from
        figures = final_weights(run) or {"step": final_step(run, own)}
        end = start + figures.pop("step")
        figures = (final_figures or {}) if final_phase else figures  # a soup's figures are not its run's
        # weights after the kept ones are a branch the shipped model never took: their folders go
        entries = [e for e in entries if e["step"] < end] + [
            {"step": end, "revision": "main", "path": FINAL, "final": True, "phase": final_phase or phase, **figures}
        ]
    if not any(e["step"] == start for e in entries):  # the base's final weights, unless the run kept them at its step 0
        last = next((e for e in base_entries if e.get("path") == FINAL), {})  # a base fine-tuned itself names its phase
        figures = {k: v for k, v in last.items() if k in FIGURES}
        entries.append(base_final_snapshot(base, root, start, last.get("phase", base_phase), figures))
    for entry in [e for e in entries if e["step"] in drop and e.get("path") != FINAL]:
        shutil.rmtree(root / entry["path"])
        entries.remove(entry)
    entries.sort(key=lambda e: e["step"])
    write_index(root, entries)
    record_in_results(run, entries)
    return entries


def measured_figures(checkpoint: Path, data_dir: str | None) -> dict:
    """Greedy val BLEU and val loss of a checkpoint's own weights, as the loop measures its snapshots."""
    translator = Translator.from_pretrained(checkpoint, device="cpu")
    val = data.load_split(data.find_corpus(data_dir), "val")
    pairs, _ = data.encode_pairs(translator.tokenizer, val, translator.model.config.max_len)
    figures = evaluate_translation(translator.model, translator.tokenizer, val, pairs, 4096, "cpu")
    return {k: figures[k] for k in ("val_loss", "val_bleu")}


def record_in_results(run: Path, entries: list[dict]) -> None:
    """results.json's `snapshots` list, as the index now has it."""
    path = run / "results.json"
    if not path.is_file():
        return
    results = json.loads(path.read_text(encoding="utf-8"))
    results["snapshots"] = [
        {k: e.get(k) for k in ("step", "revision", "path", "phase", "val_loss", "val_bleu")} for e in entries
    ]
    write_text(path, json.dumps(results, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, type=Path, help="the checkpoint folder the run started from")
    parser.add_argument("--run", required=True, type=Path, help="the fine-tuned run's checkpoint folder")
    parser.add_argument("--base-phase", default="captions", help="what the base learned, as the page names it")
    parser.add_argument("--phase", default="captions + everyday", help="what the run learned, as the page names it")
    parser.add_argument(
        "--final-phase",
        help="the last point's name, where it is not the run's own weights "
        "(a soup of them with the base's: recipes/soup.py); its greedy val figures are "
        "measured here on Multi30k val",
    )
    parser.add_argument("--data-dir", help="Multi30k (else $MULTI30K_DIR), for --final-phase")
    parser.add_argument(
        "--drop",
        default="",
        help="steps of the new history, comma-separated, whose snapshots are left out (the size checkpoints/ may take)",
    )
    args = parser.parse_args(argv)
    for folder in (args.base, args.run):
        if not (folder / "model.safetensors").is_file():
            parser.error(f"{folder} is not a checkpoint folder (no model.safetensors)")
    figures = measured_figures(args.run, args.data_dir) if args.final_phase else None
    try:
        drop = frozenset(int(step) for step in args.drop.split(",") if step.strip())
    except ValueError:
        parser.error(f"--drop {args.drop!r}: give whole steps separated by commas, e.g. 250,3800")
    for entry in extend(args.base, args.run, args.base_phase, args.phase, args.final_phase, figures, drop):
        print(f"step {entry['step']:>6,}  {entry['phase']:<22}  {entry.get('path')}")


if __name__ == "__main__":
    main()
