"""Hub integration with real huggingface_hub code paths: folders, an offline cache, and pushes to a
local HTTP server standing in for the Hub (the network is the only piece replaced)."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from huggingface_hub import ModelCard

from model import CheckpointError, Transformer, TransformerConfig
from tests.corpus import DATA_DIR, needs_corpus
from translation import Translator

from .fake_hub import FakeHub

ROOT = Path(__file__).resolve().parent.parent
FILES = {"config.json", "model.safetensors", "tokenizer.json", "README.md"}
SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee."]
CARD_INFO = {
    "results": {
        "val": {"bleu": 40.1, "chrf": 61.0, "bleu_lowercase": 42.0},
        "test": {
            "bleu": 39.2,
            "chrf": 60.5,
            "bleu_lowercase": 41.3,
            "bleu_signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
            "chrf_signature": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
        },
        "decoding": {"num_beams": 5, "length_penalty": 1.0},
    },
    "training": {
        "command": "train.py --data-dir data --output checkpoints/de-en",
        "hardware": "2 CPU cores",
        "steps": 100,
        "epochs": 1.0,
        "wall_time_s": 3600,
        "tokens_per_s": 2000,
    },
}


def python(code: str, env: dict, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_folder_round_trip_gives_identical_translations_and_logits(tiny_checkpoint, tmp_path):
    first = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    first.save_pretrained(tmp_path / "again")
    assert {p.name for p in (tmp_path / "again").iterdir()} == FILES
    second = Translator.from_pretrained(tmp_path / "again", device="cpu")
    assert second.translate(SENTENCES, num_beams=3) == first.translate(SENTENCES, num_beams=3)
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    assert torch.equal(first.model(src, tgt), second.model(src, tgt))
    assert (tmp_path / "again" / "README.md").read_text() == (tiny_checkpoint / "README.md").read_text()


def test_model_card_parses_back_and_carries_the_metrics(tiny_checkpoint, tmp_path):
    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    translator.save_pretrained(tmp_path, card_info=CARD_INFO)
    card = ModelCard.load(tmp_path / "README.md")
    data = card.data
    assert data.language == ["de", "en"] and data.pipeline_tag == "translation" and data.license == "mit"
    assert data.library_name == "pytorch" and "translation" in data.tags and data.datasets
    results = {r.metric_type: r for r in data.eval_results}
    assert results["bleu"].metric_value == 39.2 and results["chrf"].metric_value == 60.5
    assert results["bleu"].metric_config.startswith("nrefs:1|case:mixed")
    assert results["bleu"].dataset_name == "Multi30k test_2016_flickr"
    body = card.text
    for needle in ("Translator.from_pretrained", "train.py --data-dir", "2 CPU cores", "39.20", "Limits"):
        assert needle in body


def test_the_card_names_every_corpus_a_run_read_with_its_license(tiny_checkpoint, tmp_path):
    from training.settings import TrainSettings

    info = {
        **CARD_INFO,
        "settings": TrainSettings().validate().recorded(),
        "data": {
            "train_pairs": 300091,
            "everyday": {"package": "trans-de-en 1.9-6", "repeat": 6},
            "more_corpora": {"backtranslated": 2, "games": 2},
        },
    }
    Translator.from_pretrained(tiny_checkpoint, device="cpu").save_pretrained(tmp_path, card_info=info)
    line = next(x for x in ModelCard.load(tmp_path / "README.md").text.splitlines() if x.startswith("- Data:"))
    assert "each pair 6x an epoch" in line and "300,091 pairs" in line
    assert "WordNet 3.0 license" in line and "tagged <BT> 2x" in line and "(GPL-2.0-or-later) 2x" in line


def write_cache(hf_home: Path, repo_id: str, revisions: dict[str, Path], refs: dict[str, str]) -> None:
    """The layout huggingface_hub writes: blobs by hash, snapshots/<commit>/ linking to them, refs/<branch>."""
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    for commit, folder in revisions.items():
        for file in folder.iterdir():
            content = file.read_bytes()
            blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(content)
            link = repo / "snapshots" / commit / file.name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
    for ref, commit in refs.items():
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)


def other_checkpoint(tiny_checkpoint: Path, folder: Path) -> Path:
    """Same tokenizer, other weights: a second revision that translates differently."""
    base = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    torch.manual_seed(99)
    Translator(Transformer(base.config), base.tokenizer).save_pretrained(folder)
    return folder


def test_offline_cache_loads_by_repo_id_and_by_revision(tiny_checkpoint, tmp_path):
    second = other_checkpoint(tiny_checkpoint, tmp_path / "second")
    main_sha, v2_sha = "a" * 40, "b" * 40
    write_cache(
        tmp_path / "hf",
        "user/attention-lens",
        {main_sha: tiny_checkpoint, v2_sha: second},
        {"main": main_sha, "v2": v2_sha},
    )
    expected = {
        "main": Translator.from_pretrained(tiny_checkpoint, device="cpu").translate(SENTENCES, num_beams=2),
        "v2": Translator.from_pretrained(second, device="cpu").translate(SENTENCES, num_beams=2),
    }
    assert expected["main"] != expected["v2"]
    code = f"""
import json
from model import CheckpointError
from translation import Translator
out = {{}}
for name, revision in [("main", None), ("v2", "v2"), ("v2_sha", "{v2_sha}")]:
    t = Translator.from_pretrained("user/attention-lens", revision=revision, device="cpu")
    out[name] = t.translate({SENTENCES!r}, num_beams=2)
try:
    Translator.from_pretrained("user/not-cached")
except CheckpointError as err:
    out["error"] = str(err)
print(json.dumps(out))
"""
    result = python(code, {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["main"] == expected["main"]
    assert out["v2"] == expected["v2"] and out["v2_sha"] == expected["v2"]
    assert "not in the local Hugging Face cache" in out["error"] and "HF_HUB_OFFLINE=1" in out["error"]


def closed_port() -> int:
    """A local port nobody listens on: connecting is refused at once, as with no network."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_without_network_hub_names_fail_fast_and_mistyped_folders_say_so(tiny_checkpoint, tmp_path):
    write_cache(tmp_path / "hf", "user/attention-lens", {"a" * 40: tiny_checkpoint}, {"main": "a" * 40})
    code = """
import json, time, warnings
from model import CheckpointError
from translation import Translator
out = {}
for name in ["user/not-cached", "user/attention-lens", "checkpoint/de-en", "checkpoints/de-enn", "./nowhere", "de-en"]:
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            translator = Translator.from_pretrained(name, device="cpu")
            out[name] = {"seconds": time.perf_counter() - start, "translation": translator.translate("Ein Hund.")}
        except CheckpointError as err:
            out[name] = {"seconds": time.perf_counter() - start, "error": str(err)}
    out[name]["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out))
"""
    result = python(
        code,
        {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # Retrying would take 23 s; refusals take milliseconds, loading from the cache a few seconds on a busy machine.
    assert all(case["seconds"] < (3.0 if "error" in case else 15.0) for case in out.values()), out
    missing = out["user/not-cached"]["error"]
    assert "not in the local Hugging Face cache" in missing and "cannot be reached" in missing
    assert "HF_HUB_OFFLINE=1" in missing
    cached = out["user/attention-lens"]
    assert cached["translation"] == Translator.from_pretrained(tiny_checkpoint).translate("Ein Hund.")
    assert any("from the local cache" in w for w in cached["warnings"])
    assert out["checkpoint/de-en"]["error"].startswith(
        "no such folder: checkpoint/de-en (did you mean checkpoints/de-en?)"
    )
    assert out["checkpoints/de-enn"]["error"].startswith(
        "no such folder: checkpoints/de-enn (did you mean checkpoints/de-en?)"
    )
    assert out["./nowhere"]["error"].startswith("no such folder: ./nowhere;")
    assert out["de-en"]["error"].startswith("no such folder: de-en;")


def test_missing_or_corrupt_files_name_the_file(tiny_checkpoint, tmp_path):
    import shutil

    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, folder)
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(CheckpointError, match="tokenizer.json"):
        Translator.from_pretrained(folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match="tokenizer.json is missing"):
        Translator.from_pretrained(folder)
    with pytest.raises(CheckpointError, match="no such folder: .*does.not.exist"):
        Translator.from_pretrained(tmp_path / "does" / "not" / "exist")


def test_push_to_hub_makes_one_commit_with_exactly_the_four_files(tiny_checkpoint):
    with FakeHub() as hub:
        code = f"""
from translation import Translator
t = Translator.from_pretrained({str(tiny_checkpoint)!r}, device="cpu")
print(t.push_to_hub("user/attention-lens", commit_message="First upload", card_info={CARD_INFO!r}))
print(t.push_to_hub("user/attention-lens", branch="step-100", commit_message="Checkpoint at step 100"))
"""
        result = python(code, {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token", "HF_HUB_DISABLE_TELEMETRY": "1"})
        assert result.returncode == 0, result.stderr[-3000:]
    assert [c["revision"] for c in hub.commits] == ["main", "step-100"]
    assert hub.validated == 2
    first = hub.commits[0]
    assert set(first["files"]) == FILES and first["summary"] == "First upload"
    config = json.loads(first["files"]["config.json"])
    assert TransformerConfig.from_dict(config) == Translator.from_pretrained(tiny_checkpoint).config
    assert first["files"]["model.safetensors"] == (tiny_checkpoint / "model.safetensors").read_bytes()
    card = first["files"]["README.md"].decode()
    assert "39.2" in card and "pipeline_tag: translation" in card
    assert ("POST", "/api/models/user/attention-lens/branch/step-100") in hub.requests
    assert set(hub.commits[1]["files"]) == FILES


@needs_corpus
@pytest.mark.slow
def test_train_pushes_intermediate_and_final_checkpoints(tmp_path):
    """Snapshots go to branches step-NNNNN as fp16 checkpoints; main gets the final model, whose card
    lists the revisions with their val figures, and the snapshot index."""
    from safetensors.torch import load as load_safetensors

    args = [
        "train.py",
        "--data-dir",
        str(DATA_DIR),
        "--output",
        str(tmp_path / "out"),
        "--work-dir",
        str(tmp_path / "work"),
        "--max-train-pairs",
        "200",
        "--max-steps",
        "4",
        "--eval-every",
        "4",
        "--max-eval-sentences",
        "10",
        "--vocab-size",
        "500",
        "--d-model",
        "32",
        "--n-heads",
        "2",
        "--n-layers",
        "1",
        "--d-ff",
        "64",
        "--batch-tokens",
        "1024",
        "--num-beams",
        "2",
        "--length-penalties",
        "1.0",
        "--threads",
        "1",
        "--push-to-hub",
        "user/attention-lens",
        "--snapshot-steps",
        "0,2,4",
    ]
    with FakeHub() as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token"}
        result = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
    assert [c["revision"] for c in hub.commits] == ["step-00000", "step-00002", "step-00004", "main"]
    for commit in hub.commits[:3]:
        assert set(commit["files"]) == FILES
        weights = load_safetensors(commit["files"]["model.safetensors"])
        assert {w.dtype for w in weights.values()} == {torch.float16}
    main = hub.commits[-1]["files"]
    assert FILES | {"results.json", "snapshots/index.json", "test_hypotheses.txt", "evidence.json.gz"} <= set(main)
    assert not any(name.startswith("snapshots/step-") for name in main)  # snapshot weights live on branches
    index = json.loads(main["snapshots/index.json"])["snapshots"]
    assert [e["step"] for e in index] == [0, 2, 4] and all(e["val_bleu"] is not None for e in index)
    final_card = main["README.md"].decode()
    assert "--push-to-hub user/attention-lens" in final_card and "`step-00002`" in final_card
    assert "model-index" not in final_card  # scored on a 10-sentence slice: no benchmark claim


@pytest.mark.skipif(
    not (Path(__file__).resolve().parents[1] / "checkpoints" / "zh-en" / "model.safetensors").is_file(),
    reason="no checkpoints/zh-en",
)
def test_the_chinese_checkpoint_pushes_to_its_own_repo_with_its_own_card():
    """The same push as the German models' (Translator.push_to_hub), tested at the HTTP boundary (a local Hub)."""
    folder = Path(__file__).resolve().parents[1] / "checkpoints" / "zh-en"
    with FakeHub() as hub:
        code = f"""
from translation import Translator
t = Translator.from_pretrained({str(folder)!r}, device="cpu")
print(t.push_to_hub("attention-lens/transformer-zh-en", commit_message="The Chinese model"))
"""
        result = python(code, {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token", "HF_HUB_DISABLE_TELEMETRY": "1"})
        assert result.returncode == 0, result.stderr[-3000:]
    files = hub.commits[0]["files"]
    assert set(files) == FILES and files["model.safetensors"] == (folder / "model.safetensors").read_bytes()
    card = files["README.md"].decode()
    assert "Chinese → English" in card and "Tatoeba" in card and "CC-BY 2.0 FR" in card and "Multi30k" not in card
