"""Back-translation: English-only text made into synthetic German-English pairs by a reverse model.

    python -m corpora.back_translation REVERSE_CHECKPOINT [--text runs/corpora/wordnet/train.en]
        [--output runs/corpora/backtranslated] [--num-beams 4] [--tag "<BT>"]

REVERSE_CHECKPOINT is an English -> German model (train.py --reverse: the `backtranslated` step of
recipes/everyday/de-en-everyday.sh). Each English line of --text (python -m corpora.wordnet_examples) is translated
into German, and the pair is written with the German as the source and the original English as the target, so the
forward model learns to write human English. The German starts with a tag (`<BT>` by default): the forward
model can tell synthetic sources from human ones and, given none, translates as from human German (Caswell et al.
2019, tagged back-translation). `train.py --more-corpora backtranslated:N` reads the folder like the corpora of
corpora/parallel_text.py.

The translation runs in chunks of 1,024 lines on the native search (compiled/native_search.py) where it
builds; each finished chunk is appended to `partial-<weights hash>.de`, so a run stopped part-way goes on
from the last whole chunk of the same reverse model. Dropped: an empty translation, one equal to its English (copied, not translated), and one
more than three times as many words as its English or over 80 words (a search that did not end), and one that
stutters: a word three times in a row ("auch auch auch") or a letter five times ("NANNNNN").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import data
from model.checkpoint.files import write_text

NAME = "backtranslated"  # the corpus name --more-corpora takes
TAG = "<BT>"
CHUNK = 1024
MAX_WORDS = 80
STUTTER = re.compile(r"(\b\w+\b)(?:\s+\1\b){2}|([^\W\d_])\2{4}", re.IGNORECASE)  # a word 3x, a letter 5x in a row


def kept(english: str, german: str) -> str | None:
    """Why the pair is dropped, or None to keep it."""
    words, english_words = len(german.split()), len(english.split())
    if not german.strip():
        return "empty"
    if german.strip().lower() == english.strip().lower():
        return "copied"
    if words > MAX_WORDS or words > 3 * max(english_words, 1):
        return "too long"
    if STUTTER.search(german):
        return "stutters"
    return None


def translate_resumably(translator, lines: list[str], partial: Path, num_beams: int, chunk: int = CHUNK) -> list[str]:
    """German for every line, resuming from the whole chunks already in `partial` (one translation a line)."""
    done = partial.read_text(encoding="utf-8").split("\n")[:-1] if partial.exists() else []
    done = done[: len(done) // chunk * chunk] if len(done) < len(lines) else done[: len(lines)]
    write_text(partial, "".join(g + "\n" for g in done))
    for start in range(len(done), len(lines), chunk):
        batch = lines[start : start + chunk]
        german = [" ".join(g.split()) for g in translator.translate(batch, num_beams=num_beams, batch_size=64)]
        with open(partial, "a", encoding="utf-8") as f:
            f.write("".join(g + "\n" for g in german))
        done += german
        print(f"back-translated {len(done):,} of {len(lines):,} lines", flush=True)
    return done


def build(reverse: Path, text: Path, output: Path, num_beams: int = 4, tag: str = TAG, chunk: int = CHUNK) -> dict:
    """Translate `text` with the reverse checkpoint and write output/train.de (tagged), train.en and SOURCE.json."""
    from translation import Translator

    lines = [line.strip() for line in text.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise data.CorpusError(f"{text} holds no text to back-translate")
    translator = Translator.from_pretrained(reverse, device="cpu")
    translator.compile()  # the native search where it builds; eager otherwise
    output.mkdir(parents=True, exist_ok=True)
    weights = hashlib.sha256((reverse / "model.safetensors").read_bytes()).hexdigest()
    german = translate_resumably(
        translator, lines, output / f"partial-{weights[:12]}-beam{num_beams}.de", num_beams, chunk
    )
    pairs, dropped = [], {}
    for english, de in zip(lines, german):
        why = kept(english, de)
        if why:
            dropped[why] = dropped.get(why, 0) + 1
        else:
            pairs.append((f"{tag} {de}" if tag else de, english))
    source = {
        "corpus": NAME,
        "synthetic": True,
        "tag": tag,
        "reverse_checkpoint": str(reverse),
        "reverse_weights_sha256": weights,
        "text": str(text),
        "num_beams": num_beams,
        "lines": len(lines),
        "pairs": len(pairs),
        "dropped": dict(sorted(dropped.items())),
    }
    text_source = text.parent / "SOURCE.json"
    if text_source.is_file():
        source["text_source"] = json.loads(text_source.read_text(encoding="utf-8"))
    write_text(output / "train.de", "".join(de + "\n" for de, _ in pairs))
    write_text(output / "train.en", "".join(en + "\n" for _, en in pairs))
    write_text(output / "SOURCE.json", json.dumps(source, indent=2, ensure_ascii=False) + "\n")
    return source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reverse", help="an English -> German checkpoint folder (train.py --reverse)")
    parser.add_argument("--text", default=str(data.DEFAULT_DING_DIR.parent / "wordnet" / "train.en"))
    parser.add_argument("--output", default=str(data.DEFAULT_DING_DIR.parent / NAME))
    parser.add_argument("--num-beams", type=int, default=4)
    parser.add_argument("--tag", default=TAG, help="what starts every synthetic German source ('' for none)")
    args = parser.parse_args(argv)
    try:
        source = build(Path(args.reverse), Path(args.text), Path(args.output), args.num_beams, args.tag)
    except (data.CorpusError, OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{NAME}: {source['pairs']:,} pairs of {source['lines']:,} lines, dropped {source['dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
