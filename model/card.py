"""The model card (README.md of a checkpoint): Hub metadata plus what a user needs to know.

Generated from the config and the measured results, never edited by hand.
"""

from __future__ import annotations

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from .config import TransformerConfig
from .hub import HUB_METADATA, HUB_REPO_ID

DEMO_URL = f"https://huggingface.co/spaces/{HUB_REPO_ID}"
TEST_SET = "Multi30k test_2016_flickr"


def card_data(info: dict) -> ModelCardData:
    """YAML metadata; `model-index` only when test results were measured."""
    test = info.get("results", {}).get("test", {})
    eval_results = []
    for metric, name in (("bleu", "sacreBLEU (cased, detokenized)"), ("chrf", "chrF")):
        if metric in test:
            eval_results.append(
                EvalResult(
                    task_type="translation",
                    task_name="Translation German to English",
                    dataset_type="bentrevett/multi30k",
                    dataset_name=TEST_SET,
                    dataset_split="test",
                    metric_type=metric,
                    metric_name=name,
                    metric_value=round(float(test[metric]), 2),
                    metric_config=test.get(f"{metric}_signature"),
                )
            )
    return ModelCardData(
        **{**HUB_METADATA, "tags": [*HUB_METADATA["tags"], "pytorch_model_hub_mixin"]},
        datasets=["bentrevett/multi30k"],
        metrics=["bleu", "chrf"],
        model_name="attention-lens-de-en" if eval_results else None,
        eval_results=eval_results or None,
    )


def _results_table(info: dict) -> str:
    results = info.get("results", {})
    if not results.get("test"):
        return "No evaluation results were recorded for this checkpoint.\n"
    decoding = results.get("decoding", {})
    rows = ["| split | BLEU (cased) | chrF | BLEU (lowercased) |", "|---|---|---|---|"]
    for split in ("val", "test"):
        r = results.get(split)
        if r:
            name = TEST_SET if split == "test" else "Multi30k val"
            rows.append(f"| {name} | {r['bleu']:.2f} | {r['chrf']:.2f} | {r.get('bleu_lowercase', float('nan')):.2f} |")
    lines = "\n".join(rows)
    return (
        f"{lines}\n\nBeam search with {decoding.get('num_beams', '?')} beams, length penalty "
        f"{decoding.get('length_penalty', '?')} (chosen on val). sacreBLEU signature: "
        f"`{results['test'].get('bleu_signature', '?')}`; chrF: `{results['test'].get('chrf_signature', '?')}`.\n"
    )


def _training_section(info: dict) -> str:
    training = info.get("training")
    if not training:
        return "Training details were not recorded for this checkpoint.\n"
    hours = training.get("wall_time_s", 0) / 3600
    return (
        f"- Data: Multi30k train (29,000 German-English image descriptions), checkpoint chosen on val.\n"
        f"- Command: `{training.get('command', '?')}`\n"
        f"- Hardware: {training.get('hardware', '?')}\n"
        f"- Steps: {training.get('steps', '?')} ({training.get('epochs', '?')} epochs), "
        f"wall time {hours:.2f} h, {training.get('tokens_per_s', 0):,.0f} target tokens/s\n"
        f"- Recipe: Adam (0.9, 0.98, 1e-9), inverse-square-root schedule with warmup, label smoothing 0.1, "
        f"dropout, gradient clipping{', checkpoint averaging' if training.get('averaged') else ''}.\n"
    )


def render_model_card(config: TransformerConfig, model, info: dict) -> str:
    """Full README.md text; it parses back with huggingface_hub.ModelCard."""
    n_params = sum(p.numel() for p in model.parameters())
    data = card_data(info)
    layers = f"{config.n_encoder_layers}+{config.n_decoder_layers}"
    body = f"""
# Attention Lens: German → English Transformer

A from-scratch implementation of the encoder-decoder Transformer of
["Attention Is All You Need"](https://arxiv.org/abs/1706.03762), trained on Multi30k, written to be
read: every attention map of every layer and head can be inspected. See the demo: {DEMO_URL}

## Use

```python
from model import Translator   # the `model` package of the Attention Lens code
translator = Translator.from_pretrained("{HUB_REPO_ID}")
print(translator.translate("Ein Mann fährt Fahrrad."))
```

`translator.explain(text)` returns the translation with the encoder, decoder and cross-attention
maps as arrays of shape (layers, heads, rows, columns).

## Architecture

| | |
|---|---|
| layers (encoder + decoder) | {layers} |
| d_model / heads / d_ff | {config.d_model} / {config.n_heads} / {config.d_ff} |
| vocabulary | {config.vocab_size} byte-level BPE tokens shared by German and English |
| parameters | {n_params / 1e6:.1f} M (source, target and output embeddings tied) |
| normalisation | {"Pre-LN" if config.norm_first else "Post-LN (as in the paper)"} |
| max length | {config.max_len} tokens |

## Training

{_training_section(info)}
## Results

{_results_table(info)}
## Limits

Multi30k is a corpus of short image descriptions (people, animals, places, actions). The model
translates such sentences best; news, dialogue, long or technical text are far outside what it
saw, and it will produce fluent but wrong English for them. It was trained on one domain only,
has no knowledge of the world beyond it, and must not be used where a wrong translation matters.
"""
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n{body}"))
