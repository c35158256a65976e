"""The test sets scored once for a checkpoint as it ships (its decoding.json included): test2016 BLEU / chrF,
and the Ding test set's, with the hypotheses written beside the checkpoint (test_hypotheses.txt,
everyday_test_hypotheses.txt) and the figures in its results.json under results.test_as_shipped.

    python recipes/everyday/score_test.py checkpoints/de-en
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
import data  # noqa: E402
from translation import Translator  # noqa: E402


def main(folder: Path) -> int:
    import sacrebleu
    import torch

    torch.set_num_threads(2)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    decoding = results["results"]["decoding"]
    translator = Translator.from_pretrained(folder)
    scored = {"no_repeat_ngram": translator.no_repeat_ngram}
    sets = {
        "test": data.load_split(data.resolve_data_dir(None), "test_2016_flickr"),
        "everyday_test": data.load_split(data.find_ding(None), "test"),
    }
    for name, corpus in sets.items():
        hyp = translator.translate(
            corpus.src, num_beams=decoding["num_beams"], length_penalty=decoding["length_penalty"]
        )
        (folder / f"{name}_hypotheses.txt").write_text("\n".join(hyp) + "\n", encoding="utf-8")
        scored[name] = {
            "bleu": round(sacrebleu.corpus_bleu(hyp, [corpus.tgt]).score, 2),
            "chrf": round(sacrebleu.corpus_chrf(hyp, [corpus.tgt]).score, 2),
        }
        print(folder.name, name, scored[name], flush=True)
    results["results"]["test_as_shipped"] = scored
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", type=Path, help="a checkpoint folder with its results.json")
    folder = parser.parse_args().checkpoint
    if not (folder / "results.json").is_file():
        parser.error(f"{folder} holds no results.json: not a checkpoint folder written by train.py")
    sys.exit(main(folder))
