"""The model card (README.md of a checkpoint): Hub metadata plus what a user needs to know.

Generated from the config and the measured results, never edited by hand.
"""

from __future__ import annotations

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from model.config import TransformerConfig

from .hub import HUB_METADATA, HUB_REPO_ID

DEMO_URL = f"https://huggingface.co/spaces/{HUB_REPO_ID}"
TEST_SET = "Multi30k test_2016_flickr"
# What the card says of each source language (results.json's data.source_language; German where it says none).
LANGUAGES = {
    "de": {
        "name": "German",
        "test_set": TEST_SET,
        "val": "Multi30k val",
        "dataset": "bentrevett/multi30k",
        "model_name": "attention-lens-de-en",
        "example": "Ein Mann fährt Fahrrad.",
        "trained_on": "trained on Multi30k",
        "language": ["de", "en"],
        "corpus_tag": "multi30k",
        "repo_id": HUB_REPO_ID,
    },
    "zh": {
        "name": "Chinese",
        "test_set": "Tatoeba zh-en test (held out by corpora/tatoeba_zh.py)",
        "val": "Tatoeba zh-en dev",
        "dataset": "tatoeba",
        "model_name": "attention-lens-zh-en",
        "example": "我想要一杯啤酒。",
        "trained_on": "trained on Tatoeba's Chinese-English sentence pairs",
        "language": ["zh", "en"],
        "corpus_tag": "tatoeba",
        "repo_id": "attention-lens/transformer-zh-en",
    },
}


def _language(info: dict) -> dict:
    return LANGUAGES.get(info.get("data", {}).get("source_language", "de"), LANGUAGES["de"])


def _test_is_slice(info: dict) -> bool:
    return bool(info.get("data", {}).get("test_is_slice"))


def _test_name(info: dict) -> str:
    """The test set's name; a cut test set (--max-eval-sentences) is called a slice, never the benchmark."""
    data = info.get("data", {})
    if _test_is_slice(info):
        return (
            f"{_language(info)['test_set']}, first {data['test_sentences']:,} of {data['test_set_size']:,} sentences "
            "(a slice: not comparable with published scores)"
        )
    return _language(info)["test_set"]


def card_data(info: dict) -> ModelCardData:
    """YAML metadata; `model-index` only when the full test set was scored."""
    test = {} if _test_is_slice(info) else info.get("results", {}).get("test", {})
    eval_results = []
    for metric, name in (("bleu", "sacreBLEU (cased, detokenized)"), ("chrf", "chrF")):
        if metric in test:
            eval_results.append(
                EvalResult(
                    task_type="translation",
                    task_name=f"Translation {_language(info)['name']} to English",
                    dataset_type=_language(info)["dataset"],
                    dataset_name=_language(info)["test_set"],
                    dataset_split="test",
                    metric_type=metric,
                    metric_name=name,
                    metric_value=round(float(test[metric]), 2),
                    metric_config=test.get(f"{metric}_signature"),
                )
            )
    language = _language(info)
    tags = [t if t != "multi30k" else language["corpus_tag"] for t in HUB_METADATA["tags"]]
    return ModelCardData(
        **{**HUB_METADATA, "language": language["language"], "tags": [*tags, "pytorch_model_hub_mixin"]},
        datasets=[_language(info)["dataset"]],
        metrics=["bleu", "chrf"],
        model_name=_language(info)["model_name"] if eval_results else None,
        eval_results=eval_results or None,
    )


def _results_table(info: dict) -> str:
    results, snapshot = info.get("results", {}), info.get("snapshot")
    if snapshot and not results.get("test"):
        figures = ", ".join(
            f"{k.replace('_', ' ')} {v:.4g}"
            for k, v in snapshot.items()
            if isinstance(v, float) and k.startswith(("val_", "copy_"))
        )
        return (
            f"A snapshot taken at step {snapshot['step']:,} of training (fp16 weights); "
            f"greedy decoding on val: {figures or 'not measured'}.\n"
        )
    shipped = results.get("test_as_shipped") or {}  # recipes/everyday/score_test.py: with the decoding rule
    if not results.get("test") and not shipped.get("test"):
        return "No evaluation results were recorded for this checkpoint.\n"
    decoding = results.get("decoding", {})
    rows = ["| split | BLEU (cased) | chrF | BLEU (lowercased) |", "|---|---|---|---|"]
    names = {
        "val": _language(info)["val"],
        "test": _test_name(info),
        "everyday_dev": "Ding everyday dev (1,000)",
        "everyday_test": "Ding everyday test (1,000)",
    }
    for split, name in names.items():
        r = results.get(split)
        if r is None and shipped.get(split):
            r, name = shipped[split], f"{name}, as shipped (no 3-gram twice)"
        if r:
            lower = f"{r['bleu_lowercase']:.2f}" if isinstance(r.get("bleu_lowercase"), float) else "–"
            rows.append(f"| {name} | {r['bleu']:.2f} | {r['chrf']:.2f} | {lower} |")
    lines = "\n".join(rows)
    signed = results.get("test") or results.get("val") or {}
    return (
        f"{lines}\n\nBeam search with {decoding.get('num_beams', '?')} beams, length penalty "
        f"{decoding.get('length_penalty', '?')} (chosen on val). sacreBLEU signature: "
        f"`{signed.get('bleu_signature', '?')}`; chrF: `{signed.get('chrf_signature', '?')}`.\n"
    )


MORE_CORPORA = {  # what --more-corpora names, and its license (docs/everyday.md)
    "backtranslated": "WordNet 3.0's example phrases (WordNet 3.0 license) with German written by an English -> German "
    "model, tagged <BT>",
    "games": "the dialogue of Wesnoth and FreedroidRPG (GPL-2.0-or-later)",
    "software": "the German message catalogues of Debian packages (each package's license)",
    "libreoffice": "LibreOffice's help pages and UI strings (MPL-2.0)",
}


def _more_corpora(data: dict) -> str:
    more = data.get("more_corpora") or {}
    return "".join(f", {MORE_CORPORA.get(name, name)} {n}x" for name, n in more.items())


def _data_line(info: dict) -> str:
    data, settings = info.get("data", {}), info.get("settings", {})
    if data.get("source_language") == "zh":
        return (
            f"- Data: {data.get('attribution') or 'Tatoeba Chinese-English pairs, CC-BY 2.0 FR'}: "
            f"{data['train_pairs']:,} pairs in Simplified characters, no Chinese or English sentence of dev or test "
            f"among them; checkpoint chosen on dev ({data['val_sentences']:,} sentences).\n"
        )
    if "train_pairs" not in data:
        return "- Data: Multi30k train (German-English image descriptions), checkpoint chosen on val.\n"
    cut = f", the first {settings['max_train_pairs']:,} pairs only" if settings.get("max_train_pairs") else ""
    everyday = data.get("everyday")
    if everyday:
        return (
            f"- Data: Multi30k train (image captions) and the example sentences of the Ding dictionary "
            f"({everyday.get('package') or 'Debian trans-de-en'}, {everyday.get('license') or 'GPL-2.0-or-later'}; "
            f"each pair {everyday.get('repeat', 1)}x an epoch{_more_corpora(data)}): {data['train_pairs']:,} pairs of at most "
            f"{settings.get('max_len', '?')} tokens{cut}; checkpoint chosen on Multi30k val and the everyday dev set.\n"
        )
    return (
        f"- Data: Multi30k train, {data['train_pairs']:,} German-English pairs of at most "
        f"{settings.get('max_len', '?')} tokens{cut}; checkpoint chosen on val ({data['val_sentences']:,} sentences).\n"
    )


def _everyday_limit(info: dict) -> str:
    if not info.get("data", {}).get("everyday"):
        return ""
    return (
        "; the Ding example sentences add some everyday German, about 16,000 short, often idiomatic "
        "sentences, far too few to cover it"
    )


def _recipe_line(info: dict, averaged: bool) -> str:
    s = info.get("settings")
    averaging = ", checkpoint averaging" if averaged else ""
    if not s:
        return f"- Recipe: Adam, inverse-square-root schedule with warmup, label smoothing, dropout{averaging} (settings not recorded).\n"
    beta1, beta2 = s["adam_betas"].split(",")
    return (
        f"- Recipe: Adam (β1 {beta1}, β2 {beta2}, ε {s['adam_eps']:g}), peak learning rate {s['lr']:g} after "
        f"{s['warmup']:,} warmup steps, then inverse-square-root decay; label smoothing {s['label_smoothing']:g}, "
        f"dropout {s['dropout']:g}, gradient clipping at norm {s['clip']:g}, batches of {s['batch_tokens']:,} tokens, "
        f"seed {s['seed']}{averaging}.\n"
    )


def _started_from_lines(parent: dict | None) -> str:
    """'Started from' lines, the run's own start first, back to the run that began from random weights."""
    lines = ""
    while parent:
        how = (
            f"{parent['steps']:,} steps, {parent.get('wall_time_s', 0) / 3600:.2f} h"
            if "steps" in parent
            else "not recorded"
        )
        lines += f"- Started from: the weights of `{parent['folder']}` ({how}"
        lines += f"; `{parent['command']}`)\n" if parent.get("command") else ")\n"
        parent = parent.get("started_from")
    return lines


def _training_section(info: dict) -> str:
    training = info.get("training")
    if not training:
        return "Training details were not recorded for this checkpoint.\n"
    hours = training.get("wall_time_s", 0) / 3600
    return (
        _data_line(info) + f"- Command: `{training.get('command', '?')}`\n"
        f"- Hardware: {training.get('hardware', '?')}\n"
        f"- Steps: {training.get('steps', '?')} ({training.get('epochs', '?')} epochs), "
        f"wall time {hours:.2f} h, {training.get('tokens_per_s', 0):,.0f} target tokens/s\n"
        + _recipe_line(info, bool(training.get("averaged")))
        + _started_from_lines(training.get("started_from"))
        + _soup_lines(training.get("soup"))
    )


def _steps(steps) -> str:
    """A step count as the card writes it; "?" where the ingredient (a snapshot folder) records none."""
    return f"{steps:,}" if isinstance(steps, int) else "?"


def _soup_lines(others: list[dict] | None) -> str:
    """What the weights were averaged with, when they are a soup of this run and other checkpoints."""
    if not others:
        return ""
    if all("share" in other for other in others):  # a weighted soup: each ingredient's share
        names = ", ".join(f"{other['share']:.2f} of `{other['folder']}`'s" for other in others)
        return (
            f"- Weights: {1 - sum(other['share'] for other in others):.2f} of this run's weights and {names}, one "
            "line of descent (a weighted model soup), the shares chosen on the dev sets\n"
        )
    names = ", ".join(f"`{other['folder']}` ({_steps(other.get('steps'))} steps)" for other in others)
    return (
        f"- Weights: the mean of this run's weights and those of {names}, one line of "
        "descent (a model soup), chosen on the dev sets\n"
    )


def _snapshots_section(info: dict) -> str:
    snapshots = info.get("snapshots")
    if not snapshots:
        return ""
    repo = info.get("repo_id") or _language(info)["repo_id"]
    rows = ["| step | revision | val loss | val BLEU (greedy) |", "|---|---|---|---|"]
    for s in snapshots:
        loss = f"{s['val_loss']:.3f}" if s.get("val_loss") is not None else "–"
        bleu = f"{s['val_bleu']:.2f}" if s.get("val_bleu") is not None else "–"
        rows.append(f"| {s['step']:,} | `{s['revision']}` | {loss} | {bleu} |")
    return (
        "\n## Training snapshots\n\nThe weights at chosen steps of training (fp16), each in the folder "
        "`snapshots/step-NNNNN/` of the run's output and, on the Hub, on the branch of that name:\n\n"
        + "\n".join(rows)
        + f'\n\n```python\ntranslator = Translator.from_pretrained("{repo}", revision="{snapshots[-1]["revision"]}")\n```\n'
    )


def _code_line() -> str:
    return (
        f"The `model` package is the code of the Attention Lens Space: get it with\n"
        f"`git clone https://huggingface.co/spaces/{HUB_REPO_ID}` and run Python from that folder.\n"
    )


def render_copy_card(config: TransformerConfig, model, info: dict) -> str:
    """README.md of a copy-task checkpoint: a sanity check, not a translator."""
    n_params = sum(p.numel() for p in model.parameters())
    training, results, s = info.get("training", {}), info.get("results", {}), info.get("settings", {})
    accuracy = results.get("copy_accuracy", info.get("snapshot", {}).get("copy_accuracy"))
    return f"""# Attention Lens: copy-task Transformer

A tiny encoder-decoder Transformer ({config.n_encoder_layers}+{config.n_decoder_layers} layers, d_model
{config.d_model}, {config.n_heads} heads, {n_params / 1e3:.1f} k parameters) trained to copy random sequences of
{config.vocab_size - 4} symbols: the first check that a hand-written Transformer works.

**This is not a translator.** The folder holds no tokenizer, so `Translator.from_pretrained` refuses
it; load it with `Transformer.from_pretrained(folder)` and feed token ids (4 to {config.vocab_size - 1},
ending in EOS = {config.eos_id}).

{_code_line()}
- Command: `{training.get("command", "?")}`
- Steps: {training.get("steps", "?")}, lr {s.get("lr", "?")}, warmup {s.get("warmup", "?")}, batches of {s.get("batch_tokens", "?")} tokens
- Held-out sequences copied exactly: {f"{accuracy:.1%}" if accuracy is not None else "not measured"}
"""


def _heads_section(info: dict) -> str:
    """The head-importance table (measured by recipes/head_importance.py, rendered by lens.importance)."""
    table = info.get("head_importance_table")
    if not table:
        return ""
    return f"\n## What each head is worth\n\n{table}\nThe numbers are in `head_importance.json`.\n"


def _whole_han(info: dict) -> str:
    if info.get("data", {}).get("source_language") != "zh":
        return ""
    return " (each Han character of the training text one token: tokenizer/han_pieces.py)"


def _limits(info: dict) -> str:
    if info.get("data", {}).get("source_language") == "zh":
        return (
            "Tatoeba's sentences are short everyday sentences written by volunteers (a median of 10 Chinese\n"
            "characters); news, long or technical text are far outside what the model saw, and it will produce fluent\n"
            "but wrong English for them. Traditional characters are read as Simplified (OpenCC's t2s table) before\n"
            "translation. It must not be used where a wrong translation matters.\n\n"
            "The training data: Tatoeba (https://tatoeba.org), CC-BY 2.0 FR, by Tatoeba's contributors."
        )
    return (
        f"Multi30k is a corpus of short image descriptions (people, animals, places, actions){_everyday_limit(info)}. The model\n"
        "translates such sentences best; news, dialogue, long or technical text are far outside what it\n"
        "saw, and it will produce fluent but wrong English for them. It was trained on one domain only,\n"
        "has no knowledge of the world beyond it, and must not be used where a wrong translation matters."
    )


def render_model_card(config: TransformerConfig, model, info: dict) -> str:
    """Full README.md text; it parses back with huggingface_hub.ModelCard."""
    n_params = sum(p.numel() for p in model.parameters())
    data = card_data(info)
    layers = f"{config.n_encoder_layers}+{config.n_decoder_layers}"
    repo_id = info.get("repo_id") or _language(info)["repo_id"]
    language = _language(info)
    body = f"""
# Attention Lens: {language["name"]} → English Transformer

A from-scratch implementation of the encoder-decoder Transformer of
["Attention Is All You Need"](https://arxiv.org/abs/1706.03762), {language["trained_on"]}, written to be
read: every attention map of every layer and head can be inspected. See the demo: {DEMO_URL}

## Use

{_code_line()}
```python
from translation import Translator
translator = Translator.from_pretrained("{repo_id}")
print(translator.translate("{language["example"]}"))
```

`lens.maps.explain(translator, text)` returns the translation with the encoder, decoder and cross-attention
maps as arrays of shape (layers, heads, rows, columns).

## Architecture

| | |
|---|---|
| layers (encoder + decoder) | {layers} |
| d_model / heads / d_ff | {config.d_model} / {config.n_heads} / {config.d_ff} |
| vocabulary | {config.vocab_size} byte-level BPE tokens shared by {language["name"]} and English{_whole_han(info)} |
| parameters | {n_params / 1e6:.1f} M (source, target and output embeddings tied) |
| normalisation | {"Pre-LN" if config.norm_first else "Post-LN (as in the paper)"} |
| max length | {config.max_len} tokens |

## Training

{_training_section(info)}
## Results

{_results_table(info)}{_snapshots_section(info)}{_heads_section(info)}
## Limits

{_limits(info)}
"""
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n{body}"))
