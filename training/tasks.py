"""What a run learns, behind one small interface: Multi30k translation, or copying random sequences.

The loop asks a task for its model config, its batches, its validation metrics, its final results
and how to save a checkpoint; it never asks which task it is.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import torch
import torch.nn.functional as F

import data
from generation import generate
from model import Transformer, TransformerConfig
from model.checkpoint.card import render_copy_card
from model.checkpoint.files import atomic_path, write_text
from tokenizer import load_tokenizer, train_tokenizer
from training_data.evidence import build_index, write_index
from translation import Translator

from .checkpointing import average_checkpoints, read_weights
from .evaluation import (
    choose_weights,
    evaluate_translation,
    final_evaluation,
    greedy_bleu,
    score_everyday,
)
from .evidence import training_corpora
from .guard import RunError
from .settings import TrainSettings

COPY_MIN_LEN, COPY_MAX_LEN = 4, 12  # lengths of the random sequences (without EOS)
COPY_STEPS_PER_EPOCH = 100  # the copy task has no data set; an "epoch" is this many batches
COPY_FIRST_SYMBOL = 4  # ids below are the special tokens


class Task(Protocol):
    """The interface the loop, the finish and the lab rely on."""

    score_key: str  # the validation metric that picks the best checkpoint (higher is better)
    config: TransformerConfig

    def fingerprint(self) -> dict: ...
    def data_info(self) -> dict: ...
    def steps_per_epoch(self) -> int: ...
    def batches(self, epoch: int, start: int) -> Iterator[data.Batch]: ...
    def evaluate(self, model: Transformer, device) -> dict: ...
    def final_results(self, model: Transformer, device, candidates: dict) -> tuple[str, dict, dict[str, str]]: ...
    def save(self, model: Transformer, folder: Path, card_info: dict) -> None: ...


def make_task(settings: TrainSettings, work_dir: Path, rank: int = 0, world: int = 1) -> Task:
    if settings.task == "copy":
        return CopyTask(settings, rank)
    return TranslationTask(settings, work_dir / "tokenizer.json", rank, world)


def ding_info(settings: TrainSettings, dev: data.ParallelCorpus, test: data.ParallelCorpus) -> dict:
    """What the model card and results.json say of the everyday corpus: its source, license and splits."""
    folder = data.find_ding(settings.ding_dir)
    try:
        source = json.loads((folder / "SOURCE.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        source = {}
    return {
        "name": "Ding example sentences",
        "package": source.get("package"),
        "license": source.get("license"),
        "dictionary_sha256": source.get("dictionary_sha256"),
        "repeat": settings.ding_repeat,
        "dev_sentences": len(dev),
        "test_sentences": len(test),
    }


def weight_candidates(model: Transformer, best: Path, rotation: list[Path]) -> dict[str, dict]:
    """The weights a run may end with: its best checkpoint and the average of the last ones.

    Damaged files are skipped with a warning."""
    candidates = {}
    if best.exists() and (weights := read_weights(model, best)) is not None:
        candidates["best"] = weights
    if (average := average_checkpoints(model, [p for p in rotation if p.exists()])) is not None:
        candidates["average"] = average
    return candidates


# ----- translation -------------------------------------------------------------------------------


def held_out_splits(folder: Path, chinese: bool) -> tuple[data.ParallelCorpus, data.ParallelCorpus]:
    """(val, test): Multi30k's val and test2016, or the Tatoeba Chinese corpus's dev and test."""
    if chinese:
        return data.load_split(folder, "dev", "zh"), data.load_split(folder, "test", "zh")
    return data.load_split(folder, "val"), data.load_split(folder, "test_2016_flickr")


def chinese_info(settings: TrainSettings, train: int, val: int, test: int, sliced: bool) -> dict:
    """What the model card and results.json say of the Tatoeba Chinese corpus: its source, licence and splits."""
    folder = data.find_chinese(settings.zh_dir)
    try:
        source = json.loads((folder / "SOURCE.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        source = {}
    return {
        "corpus": "Tatoeba zh-en",
        "source_language": "zh",
        "package": source.get("package"),
        "license": source.get("license"),
        "attribution": source.get("attribution"),
        "tsv_sha256": source.get("tsv_sha256"),
        "train_pairs": train,
        "val_sentences": val,
        "test_sentences": test,
        "test_set": "tatoeba-zh test",
        "test_set_size": source.get("counts", {}).get("test", test),
        "test_is_slice": sliced,
    }


def swapped(corpus: data.ParallelCorpus) -> data.ParallelCorpus:
    """The same pairs the other way round (--reverse)."""
    return data.ParallelCorpus(corpus.tgt, corpus.src)


def tagged(sources: list[str], tag: str) -> list[str]:
    """Each German sentence with the domain tag in front (--caption-tag)."""
    return [f"{tag} {s}" for s in sources]


class TranslationTask:
    """German -> English on Multi30k (with `--corpus multi30k+ding`, also on the everyday Ding sentences),
    with a BPE vocabulary learned from the training split."""

    def __init__(self, settings: TrainSettings, tokenizer_path: Path, rank: int = 0, world: int = 1):
        self.settings, self.rank, self.world = settings, rank, world
        self.more_repeats = settings.more_corpora_repeats() if settings.more_corpora else {}
        self.chinese = settings.corpus == "tatoeba-zh"
        data_dir = data.find_chinese(settings.zh_dir) if self.chinese else data.resolve_data_dir(settings.data_dir)
        # Each training corpus once (the evidence index and the vocabulary read them so), then mixed.
        self.corpora = training_corpora(
            settings.corpus,
            str(data_dir),
            settings.ding_dir,
            settings.max_train_pairs,
            settings.ding_phrases,
            settings.ding_words,
            settings.distilled_targets,
            settings.distilled_ding,
            tuple(self.more_repeats),
            settings.corpora_dir,
        )
        if settings.caption_tag:  # a domain tag: every caption's German starts with it
            src, tgt = self.corpora["multi30k"]
            self.corpora["multi30k"] = (tagged(src, settings.caption_tag), tgt)
        vocabulary_text = [text for src, tgt in self.corpora.values() for text in src + tgt]
        repeat = {"ding": settings.ding_repeat, **self.more_repeats}
        train = data.ParallelCorpus(
            [s for name, (src, _) in self.corpora.items() for s in src * repeat.get(name, 1)],
            [t for name, (_, tgt) in self.corpora.items() for t in tgt * repeat.get(name, 1)],
        )
        self.everyday = None  # (dev, test) of the Ding corpus, when it is trained on
        if settings.corpus == "multi30k+ding":
            ding_dir = data.find_ding(settings.ding_dir)
            self.everyday = (
                self._sliced(data.load_split(ding_dir, "dev")),
                self._sliced(data.load_split(ding_dir, "test")),
            )
        val, test = held_out_splits(data_dir, self.chinese)
        if settings.caption_tag:
            val, test = (data.ParallelCorpus(tagged(c.src, settings.caption_tag), c.tgt) for c in (val, test))
        if settings.reverse:  # English -> German: every split's sides swapped
            train, val, test = swapped(train), swapped(val), swapped(test)
            if self.everyday is not None:
                self.everyday = swapped(self.everyday[0]), swapped(self.everyday[1])
        self.train_text_sha256 = hashlib.sha256("\n".join(train.src + ["\t"] + train.tgt).encode()).hexdigest()
        self.test_size = len(test)
        self.val, self.test = self._sliced(val), self._sliced(test)
        self.tokenizer = self._tokenizer(tokenizer_path, vocabulary_text)
        pad, bos, eos = data.special_ids(self.tokenizer)
        self.config = settings.model_config(self.tokenizer.get_vocab_size(), pad, bos, eos)
        self.train_pairs, dropped = data.encode_pairs(self.tokenizer, train, settings.max_len)
        if dropped and rank == 0:
            print(f"train: skipped {dropped} pair(s) longer than {settings.max_len} tokens", file=sys.stderr)
        self.val_pairs, _ = data.encode_pairs(self.tokenizer, self.val, settings.max_len)
        self.score_key = "val_bleu" if self.everyday is None else "val_bleu_mean"

    def _sliced(self, corpus: data.ParallelCorpus) -> data.ParallelCorpus:
        n = self.settings.max_eval_sentences
        return data.ParallelCorpus(corpus.src[:n], corpus.tgt[:n]) if n else corpus

    def _tokenizer(self, path: Path, text: list[str]):
        if self.rank == 0 and not path.exists() and self.settings.init_from:  # fine-tuning keeps the vocabulary
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                tmp.write_bytes((Path(self.settings.init_from) / "tokenizer.json").read_bytes())
        if self.rank == 0 and not path.exists():
            # Only the training split: val and test stay unseen, even by the vocabulary.
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                train_tokenizer(text, self.settings.vocab_size, whole_han=self.chinese).save(str(tmp))
        if self.world > 1:
            torch.distributed.barrier()
        try:
            return load_tokenizer(path)
        except ValueError as err:  # garbage, or special tokens at other ids
            raise RunError(
                f"{err}; delete {path} to learn the tokenizer again (the run starts over), or use another --work-dir"
            ) from None

    def fingerprint(self) -> dict:
        return {"train_text_sha256": self.train_text_sha256, "train_pairs": len(self.train_pairs)}

    def data_info(self) -> dict:
        sliced = len(self.test) < self.test_size
        if self.chinese:
            return chinese_info(self.settings, len(self.train_pairs), len(self.val), len(self.test), sliced)
        info = {
            "corpus": "Multi30k",
            "train_pairs": len(self.train_pairs),
            "val_sentences": len(self.val),
            "test_sentences": len(self.test),
            "test_set": "test_2016_flickr",
            "test_set_size": self.test_size,
            "test_is_slice": sliced,
        }
        if self.everyday is not None:
            info.update(corpus="Multi30k + Ding", everyday=ding_info(self.settings, *self.everyday))
        if self.more_repeats:
            info.update(corpus=" + ".join(["Multi30k", "Ding", *self.more_repeats]), more_corpora=self.more_repeats)
        return info

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """This rank's share of an epoch's batches; every rank gets the same number."""
        batches = data.token_batches(self.train_pairs, self.settings.batch_tokens, self.settings.seed, epoch)
        usable = len(batches) - len(batches) % self.world
        return batches[self.rank : usable : self.world]

    def steps_per_epoch(self) -> int:
        return len(self.epoch_batches(0))

    def batches(self, epoch: int, start: int) -> Iterator[data.Batch]:
        return data.iterate_batches(self.train_pairs, self.epoch_batches(epoch), self.config.pad_id, start)

    def evaluate(self, model: Transformer, device) -> dict:
        metrics = evaluate_translation(
            model, self.tokenizer, self.val, self.val_pairs, self.settings.batch_tokens, device
        )
        if self.everyday is not None:
            metrics["everyday_dev_bleu"] = greedy_bleu(model, self.tokenizer, self.everyday[0], device)
            metrics["val_bleu_mean"] = (metrics["val_bleu"] + metrics["everyday_dev_bleu"]) / 2
        return metrics

    def final_results(self, model: Transformer, device, candidates: dict) -> tuple[str, dict, dict[str, str]]:
        """Keep the candidate weights with the best greedy val BLEU, then tune and score with beams."""
        choice, scores = choose_weights(model, candidates, lambda m: self.evaluate(m, device)[self.score_key])
        if scores:
            print(f"{self.score_key} (greedy): {scores}; keeping {choice}", file=sys.stderr)
        translator = Translator(model, self.tokenizer, device=device)
        skip = self.settings.skip_test
        results, hyps = final_evaluation(
            translator, self.val, None if skip else self.test, self.settings.num_beams, self.settings.penalties()
        )
        files = {"test_hypotheses.txt": "\n".join(hyps) + "\n"} if hyps else {}
        if self.everyday is not None:
            dev, test = self.everyday
            penalty = results["decoding"]["length_penalty"]
            everyday, everyday_hyps = score_everyday(
                translator, dev, None if skip else test, self.settings.num_beams, penalty
            )
            results.update(everyday)
            if everyday_hyps:
                files["everyday_test_hypotheses.txt"] = "\n".join(everyday_hyps) + "\n"
        return choice, results, files

    def save(self, model: Transformer, folder: Path, card_info: dict) -> None:
        """The checkpoint, and beside the final one the evidence index of the training data (each pair once;
        a snapshot's data is the final model's, so the app reads the index once, from the final model)."""
        Translator(model, self.tokenizer, device=next(model.parameters()).device).save_pretrained(
            folder, card_info=card_info
        )
        if "snapshot" in card_info or self.settings.reverse:  # the index counts German source words
            return
        write_index(Path(folder), build_index(self.corpora))


# ----- copy ----------------------------------------------------------------------------------------


def copy_task_batch(config: TransformerConfig, batch_tokens: int, seed: int, rank: int = 0) -> data.Batch:
    """Random sequences of ordinary tokens; the target is the source itself."""
    gen = torch.Generator().manual_seed(seed * 31 + rank)
    n = batch_tokens // (COPY_MAX_LEN + 2)
    pairs = []
    for _ in range(n):
        length = int(torch.randint(COPY_MIN_LEN, COPY_MAX_LEN + 1, (1,), generator=gen))
        seq = torch.randint(COPY_FIRST_SYMBOL, config.vocab_size, (length,), generator=gen).tolist()
        pairs.append((seq + [config.eos_id], [config.bos_id] + seq + [config.eos_id]))
    return data.collate(pairs, list(range(n)), config.pad_id)


@torch.inference_mode()
def evaluate_copy(model: Transformer, batch: data.Batch) -> dict:
    """Validation loss, and the share of sequences that greedy decoding copies exactly."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    pad = model.config.pad_id
    logits = model(batch.src.to(device), batch.tgt_in.to(device))  # (B, T, V)
    loss = F.cross_entropy(
        logits.float().view(-1, logits.size(-1)), batch.tgt_out.to(device).view(-1), ignore_index=pad
    )
    out = generate(model, batch.src.to(device), max_new_tokens=COPY_MAX_LEN + 2)
    correct = 0
    for row in range(batch.src.size(0)):
        want = [t for t in batch.tgt_out[row].tolist() if t != pad]
        got = [t for t in out[row].tolist() if t != pad]
        correct += want == got
    model.train(was_training)
    return {"val_loss": loss.item(), "copy_accuracy": correct / batch.src.size(0)}


class CopyTask:
    """Copy a random sequence of symbols: the first sign that attention works (no data, no tokenizer)."""

    score_key = "copy_accuracy"

    def __init__(self, settings: TrainSettings, rank: int = 0):
        self.settings, self.rank = settings, rank
        self.config = settings.model_config(settings.vocab_size)
        # Held out: a seed no training batch uses.
        self.held_out = copy_task_batch(self.config, 256 * (COPY_MAX_LEN + 2), seed=-1 - settings.seed)

    def fingerprint(self) -> dict:
        return {"copy": [COPY_MIN_LEN, COPY_MAX_LEN, COPY_STEPS_PER_EPOCH]}

    def data_info(self) -> dict:
        return {
            "corpus": "random sequences",
            "min_len": COPY_MIN_LEN,
            "max_len": COPY_MAX_LEN,
            "symbols": self.config.vocab_size - COPY_FIRST_SYMBOL,
            "held_out": self.held_out.src.size(0),
        }

    def steps_per_epoch(self) -> int:
        return COPY_STEPS_PER_EPOCH

    def batches(self, epoch: int, start: int) -> Iterator[data.Batch]:
        for position in range(start, COPY_STEPS_PER_EPOCH):
            step = epoch * COPY_STEPS_PER_EPOCH + position  # each step its own batch, rebuilt exactly on resume
            yield copy_task_batch(
                self.config, self.settings.batch_tokens, seed=self.settings.seed * 7919 + step, rank=self.rank
            )

    def evaluate(self, model: Transformer, device) -> dict:
        return evaluate_copy(model, self.held_out)

    def final_results(self, model: Transformer, device, candidates: dict) -> tuple[str, dict, dict[str, str]]:
        return "last", {"copy_accuracy": self.evaluate(model, device)["copy_accuracy"]}, {}

    def save(self, model: Transformer, folder: Path, card_info: dict) -> None:
        """A Transformer checkpoint (config.json, model.safetensors) and its own card; no tokenizer."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(folder)
        write_text(folder / "README.md", render_copy_card(model.config, model, card_info))


def half_copy(model: Transformer) -> Transformer:
    """An fp16 copy of `model` on the CPU (for snapshots); the original is untouched."""
    return copy.deepcopy(model).to("cpu").half().eval()


def write_json(path: Path, value: dict) -> None:
    write_text(path, json.dumps(value, indent=2) + "\n")
