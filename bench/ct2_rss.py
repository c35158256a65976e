"""Peak RSS of CTranslate2 alone translating 128 val sentences: no torch, our tokenizer only.

    python bench/ct2_rss.py MODEL_DIR TOKENIZER_JSON VAL_DE MAX_LEN COMPUTE_TYPE   (run by bench/versus_ct2.py)

Prints {"peak_rss_mb": ...}. Kept apart so that importing torch does not count against CTranslate2.
"""

from __future__ import annotations

import gzip
import json
import sys

import ctranslate2
from tokenizers import Tokenizer


def peak_rss_mb() -> float:
    """VmHWM, this process's peak RSS since exec (ru_maxrss would keep the parent's from before the fork)."""
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return kb / 1024


def main() -> None:
    model_dir, tokenizer_json, val_de, max_len, compute_type = sys.argv[1:6]
    tokenizer = Tokenizer.from_file(tokenizer_json)
    opener = gzip.open if val_de.endswith(".gz") else open
    with opener(val_de, "rt", encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()][:128]
    # As Translator.encode_source: the ids cut to max_len - 1, then </s>.
    sources = [tokenizer.encode(s, add_special_tokens=False).tokens[: int(max_len) - 1] + ["</s>"] for s in sentences]
    sources.sort(key=len)
    translator = ctranslate2.Translator(model_dir, device="cpu", compute_type=compute_type, intra_threads=1)
    for start in range(0, len(sources), 64):
        batch = sources[start : start + 64]
        limit = 2 * max(map(len, batch)) + 10
        translator.translate_batch(batch, beam_size=4, max_batch_size=64, max_decoding_length=limit)
    print(json.dumps({"peak_rss_mb": peak_rss_mb()}))


if __name__ == "__main__":
    main()
