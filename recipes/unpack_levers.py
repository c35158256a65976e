"""Turn what recipes/levers.py packed into a checkpoint folder, and score its test set once.

    python recipes/unpack_levers.py PACKED_DIR --output checkpoints/de-en --data-dir ../shared/data/multi30k

1. The fp32 weights are joined from their parts and checked against the recorded sha256.
2. Snapshots: the two packed fp16 ones; step 0 rebuilt from the run's seed (the untrained model is
   a function of the seed) and checked against the recorded sha256 of the run's own step 0; the
   final model itself as the last point of the index (path ".."), with its greedy val BLEU and
   val loss measured here. Snapshots that were not packed are left out of the index.
3. The test set is translated once, with the beam and length penalty chosen on val, and the
   results, hypotheses and card are written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from levers import weights_hash  # noqa: E402

import data  # noqa: E402
from model import Transformer, TransformerConfig  # noqa: E402
from tokenizer import load_tokenizer  # noqa: E402
from training.evaluation import bleu_chrf, evaluate_translation, translate_all  # noqa: E402
from translation import Translator  # noqa: E402


def join_weights(packed: Path, summary: dict, folder: Path) -> None:
    parts = sorted(packed.glob("model.part*"), key=lambda p: int(p.suffix.removeprefix(".part")))
    weights = b"".join(p.read_bytes() for p in parts)
    if hashlib.sha256(weights).hexdigest() != summary["weights_sha256"]:
        raise SystemExit(f"the weights joined from {[p.name for p in parts]} do not match the recorded sha256")
    (folder / "model.safetensors").write_bytes(weights)


def rebuild_step0(folder: Path, seed: int, expected: str) -> None:
    """The untrained model of the run: the same seed and initialisation, stored fp16."""
    config = TransformerConfig(**json.loads((folder / "config.json").read_text()))
    torch.manual_seed(seed)
    model = Transformer(config).half().eval()
    with tempfile.TemporaryDirectory() as tmp:
        Translator(model, load_tokenizer(folder / "tokenizer.json")).save_pretrained(tmp)
        shutil.copy(Path(tmp) / "model.safetensors", folder / "model.safetensors")
    if weights_hash(folder) != expected:
        raise SystemExit(f"step 0 rebuilt from seed {seed} differs from the run's own step 0")


def final_entry(folder: Path, data_dir: Path, metrics: list[dict]) -> dict:
    """The shipped model as the slider's last point: greedy val BLEU and val loss, as for snapshots."""
    translator = Translator.from_pretrained(folder, device="cpu")
    val = data.load_split(data_dir, "val")
    pairs, _ = data.encode_pairs(translator.tokenizer, val, translator.model.config.max_len)
    figures = evaluate_translation(translator.model, translator.tokenizer, val, pairs, 4096, "cpu")
    evaluated = [r for r in metrics if "val_bleu" in r]
    step = min(evaluated, key=lambda r: abs(r["val_bleu"] - figures["val_bleu"]))["step"]  # whose weights these are
    return {"step": step, "revision": "main", "path": "..", "final": True, **figures}


def snapshots(folder: Path, summary: dict, packed: Path, data_dir: Path, seed: int) -> list[dict]:
    root = folder / "snapshots"
    index = json.loads((root / "index.json").read_text())["snapshots"]
    keep = [e for e in index if e["step"] == 0 or e["step"] in summary["shipped_snapshots"]]
    for entry in keep:
        if entry["step"] == 0:
            rebuild_step0(root / entry["path"], seed, summary["step0_fp16_sha256"])
        else:
            shutil.copy(packed / f"{entry['path']}.safetensors", root / entry["path"] / "model.safetensors")
    for path in root.glob("step-*"):
        if path.name not in {e["path"] for e in keep}:
            shutil.rmtree(path)
    metrics = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines() if line.strip()]
    entries = [*keep, final_entry(folder, data_dir, metrics)]
    (root / "index.json").write_text(json.dumps({"snapshots": entries}, indent=2) + "\n")
    return keep


def score_test(folder: Path, data_dir: Path, info: dict) -> None:
    """Translate test once with the decoding chosen on val; write results, hypotheses and card."""
    translator = Translator.from_pretrained(folder, device="cpu")
    decoding = info["results"]["decoding"]
    test = data.load_split(data_dir, "test_2016_flickr")
    hyps = translate_all(
        translator, test.src, desc="test", num_beams=decoding["num_beams"], length_penalty=decoding["length_penalty"]
    )
    info["results"]["test"] = bleu_chrf(hyps, test.tgt)
    (folder / "test_hypotheses.txt").write_text("\n".join(hyps) + "\n")
    (folder / "results.json").write_text(json.dumps(info, indent=2) + "\n")
    translator.save_pretrained(folder, card_info=info)
    print(json.dumps(info["results"]["test"], indent=2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packed", type=Path, help="the folder recipes/levers.py --out wrote")
    parser.add_argument("--output", type=Path, required=True, help="the checkpoint folder to write (replaced)")
    parser.add_argument("--data-dir", type=Path, default=None, help="Multi30k folder (default: $MULTI30K_DIR)")
    args = parser.parse_args(argv)
    data_dir = data.find_corpus(args.data_dir)
    with tempfile.TemporaryDirectory(dir=args.output.parent) as tmp:
        with tarfile.open(args.packed / "bundle.tar.gz") as tar:
            tar.extractall(tmp, filter="data")
        summary = json.loads((Path(tmp) / "levers.json").read_text())
        folder = Path(tmp) / "checkpoint"
        join_weights(args.packed, summary, folder)
        info = json.loads((folder / "results.json").read_text())
        kept = snapshots(folder, summary, args.packed, data_dir, info["settings"]["seed"])
        info["snapshots"] = [{k: s.get(k) for k in ("step", "revision", "path", "val_loss", "val_bleu")} for s in kept]
        shutil.copy(Path(tmp) / "levers.json", folder / "levers.json")
        score_test(folder, data_dir, info)
        if args.output.exists():
            shutil.rmtree(args.output)
        shutil.move(str(folder), args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
