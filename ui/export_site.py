"""The lens as a static site: the page translates and draws every map in the visitor's browser, with no server.

    python -m ui.export_site DIR [--model checkpoints/de-en] [--everyday checkpoints/de-en-everyday] [--precision int8]
                                 [--push-to-hub USER/NAME]

DIR gets index.html, the page's scripts and styles (ui/static/, the files the app serves), the weights as
safetensors (int8 with one scale a row, ui/row_int8.py: a quarter of fp32's bytes, val BLEU as fp32's: docs/site.md), tokenizer.json, config.json, the
SIMD kernel, site.json (the decoding rule and alarm threshold of the checkpoint), its guess of which kind of
German a text is (domain.json.gz, where the checkpoint has one) and whether it is German (language.json.gz), the
model's source with each tap's line (code.json, for the Code view: lens/code.py), the everyday model's files in everyday/ (fetched when a sentence first goes to it), and a README.md whose
front matter makes the folder a static Hugging Face Space (`sdk: static`). Any static server serves it:
`python -m http.server -d DIR`. `--push-to-hub USER/NAME` then creates (or updates) that static Space with the
folder, through huggingface_hub (a token from `HF_TOKEN` or `huggingface-cli login`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from html import escape
from pathlib import Path

import torch
from safetensors.torch import save_file

from lens.code import code_map
from lens.time_travel import SnapshotLibrary
from tokenizer.chinese import han_count, t2s_table
from training_data.alarm import load_familiarity
from training_data.domain import DOMAIN_FILE, domain_file
from training_data.language import LANGUAGE_FILE, language_file
from translation import Translator
from ui.head_lab import EXAMPLE as HEADLAB_EXAMPLE
from ui.head_lab_data import importance_payload, load_importance
from ui.header import language_switch
from ui.locales import html, message
from ui.standalone import page_modules
from ui.step_through import EXAMPLES as STEP_EXAMPLES
from ui.time_travel import DEFAULT_SENTENCE as HISTORY_SENTENCE
from ui.translate import CHINESE_EXAMPLES

from .assets import STATIC
from .row_int8 import int8_weights, parameters

# The site as a whole: three models and their snapshots in int8, about 80 MB (in fp16 twice that: refused). A visit
# fetches the first model only; the everyday and Chinese models, a snapshot, the Code view's files when used.
MAX_BYTES = 100 * 2**20
FIRST_VISIT_BYTES = 10 * 2**20  # what a first visit downloads before its first map (tests/test_site.py measures it)
EVERYDAY_FOLDER = "everyday/"
CHINESE_FOLDER = "zh-en/"  # the Chinese model's files, fetched when a Chinese sentence first needs them
T2S_FILE = "t2s.json"  # OpenCC's t2s table, for the router's Traditional -> Simplified (tokenizer/chinese.py)
CODE_FILE = "code.json"  # the Code view's files and tap lines (lens/code.py's code_map)
COPYLAB_SECONDS = 60  # a copy-lab run in the page, at most (ui/static/copytrain.js: TIME_LIMIT_S)
SNAPSHOTS_FOLDER = "snapshots/"  # time travel: snapshots/index.json and one folder a snapshot
HEADS_FILE = "heads.json"  # the head lab's grid and the checkpoint's head-importance figures
DEFAULT_EVERYDAY = Path(__file__).resolve().parent.parent / "checkpoints" / "de-en-everyday"
DEFAULT_CHINESE = Path(__file__).resolve().parent.parent / "checkpoints" / "zh-en"
SITE_ENTRY = "site.js"  # the site's page (ui/static/site.js): it imports the viewer, the picture and the model
SITE_SCRIPTS = page_modules(SITE_ENTRY, dynamic=True)  # every module it needs
SITE_STYLES = [
    "lens.css",
    "spine.css",
    "step.css",
    "heads.css",
    "history.css",
    "copylab.css",
    "lab.css",
    "tour.css",
    "site.css",
]  # the viewer's and the picture's, the views' (ui/assets.py's VIEW_STYLES), then the site's
SITE_FILES = ["kernels.wasm"]
PRECISIONS = {"int8": torch.int8, "fp16": torch.float16, "fp32": torch.float32}  # int8: ui/row_int8.py
EXAMPLE = "Ein Junge mit Kopfhörern sitzt auf den Schultern einer Frau."
SITE_EXAMPLES = ["Ein Mann fährt Fahrrad. Zwei Kinder bauen am Strand eine Sandburg.", "Ich möchte ein Bier."]


def examples(chinese: bool) -> str:
    """The examples row: a few of the app's sentences (and its Chinese ones where the site has the Chinese model), each
    a button that translates it (site.js)."""
    texts = [*SITE_EXAMPLES, *(CHINESE_EXAMPLES if chinese else [])]
    buttons = " ".join(
        f"<button type='button' class='site-example' lang='{'zh' if han_count(t) else 'de'}'>{escape(t)}</button>"
        for t in texts
    )
    return f"<div id='site-examples'>{html('app.translate.examples_label', 'span', 'class=site-label')} {buttons}</div>"


def page(title: str, chinese: bool = False) -> str:
    """index.html: the header, one sentence box, the translation and the viewer; the scripts do the rest. Its texts
    are the catalogue's (ui/locales.py), written in the visitor's language by the page (locale.js)."""
    styles = "\n".join(f'<link rel="stylesheet" href="static/{n}">' for n in SITE_STYLES)
    scripts = f'<script type="module" src="static/{SITE_ENTRY}"></script>'
    greedy = html("app.site.greedy", "span")
    glossary = html("app.header.glossary", "button", "type='button' class='al-glossary-open'")
    walk = f"<button type='button' class='al-tour-start'>{message('app.header.walk')}</button>"  # tour.js names it
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><link rel="icon" href="data:,">
{styles}
</head><body>
<header id="site-header"><h1>Attention Lens</h1> {html("app.site.lead", "span")} {walk} {glossary} {language_switch()}</header>
<main>
{html("app.site.source", "label", 'for="site-source" class="site-label"')}
<textarea id="site-source" rows="2" lang="de">{escape(EXAMPLE)}</textarea>
<div id="site-actions">{html("app.translate.button", "button", 'id="site-translate" type="button" disabled')}
<label><input id="site-greedy" type="checkbox"> {greedy}</label>
<label id="site-compare-choice"><input id="site-compare" type="checkbox"> {html("app.translate.compare", "span")}</label></div>
{examples(chinese)}
{html("app.site.loading", "p", 'id="site-status" aria-live="polite"')}
<div id="site-results"><div id="site-first">{html("app.translate.first_label", "div", 'class="al-model-label" hidden')}
<div id="site-result"></div></div>
<div id="site-second" hidden>{html("app.translate.second_label", "div", 'class="al-model-label"')}
<div id="site-second-result"></div></div></div>
{views()}
</main>
{scripts}
</body></html>
"""


def view(name: str, summary: str, body: str) -> str:
    """One view beside the translation, folded: its modules and files are fetched when it is first opened."""
    return (
        f'<details id="site-{name}" class="site-view"><summary>{html(summary, "span")}</summary>\n{body}\n'
        f'<div id="site-{name}-result"></div></details>'
    )


def views() -> str:
    """The views of the app the static site has, each the app's own module with the page's model behind it."""
    step = f"""{html("app.step.intro", "div")}
<div class="site-view-inputs">{html("app.step.source", "label", 'for="site-step-source" class="site-label"')}
<input id="site-step-source" type="text" lang="de" value="{escape(STEP_EXAMPLES[0])}">
<span class="site-beams">{html("app.step.beams", "label", 'for="site-step-beams"')}
<input id="site-step-beams" type="number" min="1" max="8" value="4"></span>
{html("app.step.go", "button", 'id="site-step-go" type="button" disabled')}</div>"""
    heads = f"""{html("app.headlab.intro", "div")}
<div class="site-view-inputs">{html("app.headlab.source", "label", 'for="site-headlab-source" class="site-label"')}
<input id="site-headlab-source" type="text" lang="de" value="{escape(HEADLAB_EXAMPLE)}"></div>
<div id="site-headlab-controls"></div>
<div class="site-view-inputs">{html("app.headlab.apply", "button", 'id="site-headlab-go" type="button" disabled')}</div>"""
    field = lambda key, name, control: (  # noqa: E731
        f'<span class="site-field">{html(key, "label", f"for=site-copylab-{name}")}{control}</span>'
    )
    options = lambda name, values, chosen: (  # noqa: E731
        f'<select id="site-copylab-{name}">'
        + "".join(f"<option{' selected' if v == chosen else ''}>{v}</option>" for v in values)
        + "</select>"
    )
    copy = f"""{html("app.copylab.intro", "div", seconds=COPYLAB_SECONDS)}
{html("app.site.copylab_note", "p", "class='site-note'", seconds=COPYLAB_SECONDS)}
<div class="site-view-inputs">{field("app.copylab.layers", "layers", options("layers", [1, 2], 2))}
{field("app.copylab.heads", "heads", options("heads", [1, 2, 4], 4))}
{field("app.copylab.width", "width", options("width", [16, 32, 48, 64], 64))}
{field("app.copylab.lr", "lr", '<input id="site-copylab-lr" type="number" min="0.0001" max="0.01" step="0.0001" value="0.003">')}
{field("app.copylab.steps", "steps", '<input id="site-copylab-steps" type="number" min="10" max="600" step="10" value="300">')}
{html("app.copylab.train", "button", 'id="site-copylab-go" type="button" disabled')}</div>"""
    history = f"""{html("app.history.intro", "div")}
<div class="site-view-inputs">{html("app.history.source", "label", 'for="site-history-source" class="site-label"')}
<input id="site-history-source" type="text" lang="de" value="{escape(HISTORY_SENTENCE)}">
{html("app.history.go", "button", 'id="site-history-go" type="button" disabled')}</div>"""
    return "\n".join(
        [
            view("step", "app.site.view_step", step),
            view("headlab", "app.site.view_headlab", heads),
            view("history", "app.site.view_history", history),
            view("copylab", "app.site.view_copylab", copy),
            view("lab", "app.site.view_lab", html("app.lab.intro", "div")),
        ]
    )


def space_readme(title: str) -> str:
    """README.md with the front matter of a static Hugging Face Space."""
    return f"""---
title: {title}
emoji: 🔎
colorFrom: indigo
colorTo: yellow
sdk: static
app_file: index.html
pinned: false
---

# {title}

German → English by a hand-written encoder-decoder Transformer, every attention map drawn, all computed in
the visitor's browser (no server): the tokenizer, the encoder, the decoder with its key/value cache, greedy
and beam search, every map, the picture of the model step by step, the step-through with what-if and the beam
tree, who wrote each word, why-not, patching, the head lab, time travel, the two models compared, and a copy lab
that trains a tiny Transformer in the page. Only the training data's evidence needs the full app.
"""


def checked_precision(precision: str) -> torch.dtype:
    """The dtype of a precision's name; a ValueError naming the choices for any other."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return PRECISIONS[precision]


def weights_of(translator: Translator, precision: str) -> dict:
    """The model's weights as model.safetensors names them (the output layer is the embedding), in `precision`."""
    dtype = checked_precision(precision)
    weights = {
        k: v.detach().cpu().float().contiguous()
        for k, v in translator.model.state_dict().items()
        if v.is_floating_point() and not k.startswith("lm_head.")
    }
    if dtype == torch.int8:
        return int8_weights(weights)
    return {k: v.to(dtype).contiguous() for k, v in weights.items()}


def model_files(
    folder: str | Path,
    translator: Translator,
    confidence_below: float,
    precision: str = "fp16",
    domain: Path | None = None,
    language: Path | None = None,
) -> dict:
    """What the page's model reads (inpage.js, AL.loadInPage): weights.safetensors in `precision`, tokenizer.json,
    config.json, site.json (the decoding rule, the alarm's threshold) and a copy of `domain`, the checkpoint's
    checked domain file (training_data.domain.domain_file), where it has one, written into `folder`; returns site.json's
    content. The app serves these for its "compute in my browser" choice; export_site adds the page."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    weights = weights_of(translator, precision)
    save_file(weights, str(out / "weights.safetensors"))
    translator.tokenizer.save(str(out / "tokenizer.json"))
    (out / "config.json").write_text(json.dumps(translator.config.to_dict(), indent=2) + "\n", encoding="utf-8")
    site = {
        "no_repeat_ngram": translator.no_repeat_ngram,
        "alarm_rule": {"confidence_below": confidence_below},
        "parameters": parameters(weights),
        "precision": precision,
    }
    if domain is not None:
        shutil.copy(domain, out / DOMAIN_FILE)
        site["domain"] = DOMAIN_FILE
    if language is not None:
        shutil.copy(language, out / LANGUAGE_FILE)
        site["language"] = LANGUAGE_FILE
    (out / "site.json").write_text(json.dumps(site, indent=2) + "\n", encoding="utf-8")
    return site


def pair_files(
    folder: str | Path,
    default: Translator,
    default_rule: float,
    everyday: Translator | None,
    everyday_rule: float,
    precision: str = "fp16",
    domain: Path | None = None,
    language: Path | None = None,
) -> dict:
    """model_files of the default model in `folder`, with the router's files (domain, language), and of the everyday
    model in `folder`/everyday/ (fetched by the page when a sentence first goes to it), and the Code view's
    code.json; returns the default's site.json, which names the everyday folder and code.json."""
    site = model_files(folder, default, default_rule, precision, domain, language)
    code = json.dumps(code_map(default.config), ensure_ascii=False)
    (Path(folder) / CODE_FILE).write_text(code, encoding="utf-8")
    site["code"] = CODE_FILE
    if everyday is not None:
        model_files(Path(folder) / EVERYDAY_FOLDER.rstrip("/"), everyday, everyday_rule, precision)
        site["everyday"] = EVERYDAY_FOLDER
    (Path(folder) / "site.json").write_text(json.dumps(site, indent=2) + "\n", encoding="utf-8")
    return site


def chinese_files(folder: Path, model: str | Path, precision: str, snapshots: bool = True) -> None:
    """The Chinese model's files in `folder`/zh-en/ (fetched when a Chinese sentence first goes to it), with its time
    travel snapshots, and the t2s table the router reads Traditional characters with, named in site.json."""
    translator = Translator.from_pretrained(model, device="cpu")
    own = folder / CHINESE_FOLDER.rstrip("/")
    model_files(own, translator, load_familiarity(model).rule.confidence_below, precision)
    if snapshots:
        snapshot_files(own, model, translator, precision)
    (folder / T2S_FILE).write_text(json.dumps(t2s_table(), ensure_ascii=False), encoding="utf-8")
    site = json.loads((folder / "site.json").read_text(encoding="utf-8"))
    site.update(chinese=CHINESE_FOLDER, t2s=T2S_FILE)
    (folder / "site.json").write_text(json.dumps(site, indent=2) + "\n", encoding="utf-8")


def heads_file(folder: Path, model: str | Path, translator: Translator) -> None:
    """The head lab's grid and figures (head_importance.json's share, ui/head_lab_data.importance_payload) as
    heads.json, named in site.json; fetched when the lab is first opened."""
    config = translator.config
    heads = importance_payload(load_importance(str(model), config=config), config)
    (folder / HEADS_FILE).write_text(json.dumps(heads), encoding="utf-8")
    site = json.loads((folder / "site.json").read_text(encoding="utf-8"))
    (folder / "site.json").write_text(json.dumps({**site, "heads": HEADS_FILE}, indent=2) + "\n", encoding="utf-8")


def snapshot_files(folder: Path, model: str | Path, translator: Translator, precision: str) -> int:
    """Time travel's snapshots (translation/snapshots.py's, of `model`) in `precision` under snapshots/, each its
    weights and config, with snapshots/index.json (their steps and val figures), named in site.json; fetched one at
    a time when the view first reads with one. Returns how many; 0 where the checkpoint has none."""
    library = SnapshotLibrary(str(model), max_loaded=1, device="cpu")
    try:
        found = library.snapshots()
    except (OSError, ValueError):
        return 0
    entries, out = [], folder / SNAPSHOTS_FOLDER
    for i, snapshot in enumerate(found):
        reader = library.translator(snapshot)
        if reader.tokenizer.to_str() != translator.tokenizer.to_str():
            raise ValueError(f"snapshot at step {snapshot.step} has another tokenizer than the model's")
        name = f"{i:02d}-step-{snapshot.step}"
        (out / name).mkdir(parents=True, exist_ok=True)
        save_file(weights_of(reader, precision), str(out / name / "weights.safetensors"))
        (out / name / "config.json").write_text(json.dumps(reader.config.to_dict(), indent=2) + "\n", encoding="utf-8")
        entries.append(
            {
                "step": snapshot.step,
                "val_bleu": snapshot.val_bleu,
                "val_loss": snapshot.val_loss,
                "phase": snapshot.phase,
                "path": name + "/",
            }
        )
    if entries:
        (out / "index.json").write_text(json.dumps({"snapshots": entries}, indent=2) + "\n", encoding="utf-8")
        site = json.loads((folder / "site.json").read_text(encoding="utf-8"))
        site["snapshots"] = SNAPSHOTS_FOLDER
        (folder / "site.json").write_text(json.dumps(site, indent=2) + "\n", encoding="utf-8")
    return len(entries)


def export_site(
    folder: str | Path,
    model: str | Path = "checkpoints/de-en",
    precision: str = "int8",
    everyday: str | Path | None = None,
    snapshots: bool = True,
    chinese: str | Path | None = None,
) -> dict:
    """Write the site into `folder`; returns {file: bytes}. A ValueError when it would pass MAX_BYTES. `everyday`
    (a checkpoint) is the second model each sentence of everyday German goes to, as on the app; `chinese` (a
    checkpoint) the model each Chinese sentence goes to."""
    checked_precision(precision)  # before the checkpoint is loaded
    out = Path(folder)
    # the checkpoint's files checked as the app checks them
    translator = Translator.from_pretrained(model, device="cpu")
    second = Translator.from_pretrained(everyday, device="cpu") if everyday is not None else None
    pair_files(
        out,
        translator,
        load_familiarity(model).rule.confidence_below,
        second,
        load_familiarity(everyday).rule.confidence_below if everyday is not None else 0.0,
        precision,
        domain_file(model),
        language_file(model),
    )
    if chinese is not None:
        chinese_files(out, chinese, precision, snapshots)
    heads_file(out, model, translator)
    if snapshots:
        snapshot_files(out, model, translator, precision)
    (out / "static").mkdir(parents=True, exist_ok=True)
    for name in SITE_SCRIPTS + SITE_STYLES + SITE_FILES:  # (SITE_SCRIPTS holds messages/*.json too)
        (out / "static" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(STATIC / name, out / "static" / name)
    (out / "index.html").write_text(page("Attention Lens", chinese is not None), encoding="utf-8")
    (out / "README.md").write_text(space_readme("Attention Lens"), encoding="utf-8")
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*")) if p.is_file()}
    if sum(sizes.values()) > MAX_BYTES:
        raise ValueError(
            f"the site is {sum(sizes.values()) / 2**20:.1f} MB, more than {MAX_BYTES / 2**20:.0f} MB: export it in int8"
        )
    return sizes


def push_site(folder: str | Path, repo_id: str, private: bool = False) -> str:
    """Create the static Space `repo_id` (SDK static) if it is not there, and commit `folder` to it as one commit
    (a file already in the Space that `folder` lacks stays: a second push updates); returns the Space's URL."""
    from huggingface_hub import HfApi

    api = HfApi()
    url = api.create_repo(repo_id, repo_type="space", space_sdk="static", exist_ok=True, private=private)
    api.upload_folder(
        folder_path=str(folder), repo_id=repo_id, repo_type="space", commit_message="Attention Lens: the static site"
    )
    return str(url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--model", default="checkpoints/de-en", help="a checkpoint folder or Hub repo id")
    parser.add_argument("--precision", default="int8", choices=sorted(PRECISIONS))
    parser.add_argument(
        "--everyday",
        default=str(DEFAULT_EVERYDAY),
        help="the everyday checkpoint each sentence of everyday German goes to ('none': one model)",
    )
    parser.add_argument(
        "--chinese",
        default=str(DEFAULT_CHINESE) if (DEFAULT_CHINESE / "model.safetensors").is_file() else "none",
        help="the Chinese checkpoint each Chinese sentence goes to ('none': no Chinese model)",
    )
    parser.add_argument(
        "--no-snapshots", action="store_true", help="leave time travel's snapshots out (a site 44 MB smaller)"
    )
    parser.add_argument("--push-to-hub", metavar="USER/NAME", help="then create or update this static Space with it")
    args = parser.parse_args(argv)
    everyday = None if args.everyday.lower() == "none" else args.everyday
    try:
        if args.push_to_hub:  # a name the Hub would refuse is said before the export's minute
            from huggingface_hub.utils import validate_repo_id

            validate_repo_id(args.push_to_hub)
        chinese = None if args.chinese.lower() == "none" else args.chinese
        sizes = export_site(
            args.folder, args.model, args.precision, everyday, snapshots=not args.no_snapshots, chinese=chinese
        )
    except (ValueError, OSError) as err:
        print(f"export_site: {err}", file=sys.stderr)
        return 1
    print(
        f"{args.folder}: {len(sizes)} files, {sum(sizes.values()) / 2**20:.1f} MB "
        f"(weights {sizes['weights.safetensors'] / 2**20:.1f} MB, {args.precision})"
    )
    if args.push_to_hub:
        return pushed(args.folder, args.push_to_hub)
    return 0


def pushed(folder: str, repo_id: str) -> int:
    """push_site, its URL printed, or why it could not (no token, no network, a name the Hub refuses), exit 1."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        print(f"pushed to {push_site(folder, repo_id)}")
    except (HfHubHTTPError, OSError, ValueError) as err:
        print(f"export_site: the push to {repo_id} failed: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
