"""python -m ui.export_site DIR --push-to-hub USER/NAME against a local HTTP server standing in for the Hub
(tests/fake_hub.py: only the network is replaced; huggingface_hub's own create_repo and upload_folder run): a
static Space is created and the whole site committed to it, a second push updates it, and a name the Hub would
refuse is said before anything is exported."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .fake_hub import FakeHub

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / "checkpoints" / "de-en" / "model.safetensors").is_file(), reason="no checkpoint"),
]


def hub_env(hub: FakeHub) -> dict:
    return {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token", "HF_HUB_DISABLE_TELEMETRY": "1"}


def export(folder: Path, repo: str, hub: FakeHub, model: Path) -> subprocess.CompletedProcess:
    env = hub_env(hub)
    command = [sys.executable, "-m", "ui.export_site", str(folder), "--model", str(model), "--everyday", "none"]
    command += ["--no-snapshots", "--push-to-hub", repo]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_site_is_pushed_as_a_static_space_and_pushed_again_updates_it(tmp_path, tiny_checkpoint):
    with FakeHub() as hub:  # a tiny model: the push is what is tested, not the model
        first = export(tmp_path / "site", "user/lens-static", hub, tiny_checkpoint)
        assert first.returncode == 0, first.stderr[-3000:]
        again = f"from ui.export_site import pushed; raise SystemExit(pushed({str(tmp_path / 'site')!r}, 'user/lens-static'))"
        second = subprocess.run(
            [sys.executable, "-c", again], cwd=ROOT, env=hub_env(hub), capture_output=True, text=True
        )
        assert second.returncode == 0, second.stderr[-3000:]  # the same folder pushed again: an update
    space = hub.repos["user/lens-static"]
    assert space["type"] == "space" and space["sdk"] == "static"
    assert [c["repo"] for c in hub.commits] == ["user/lens-static"] * 2  # created once, committed twice
    files = hub.commits[0]["files"]
    on_disk = {str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert set(files) == on_disk and {"index.html", "code.json", "weights.safetensors", "static/site.js"} <= on_disk
    assert files["weights.safetensors"] == (tmp_path / "site" / "weights.safetensors").read_bytes()
    assert "sdk: static" in files["README.md"].decode() and "pushed to" in first.stdout


def test_a_name_the_hub_refuses_is_said_before_the_export(tmp_path, tiny_checkpoint):
    with FakeHub() as hub:
        result = export(tmp_path / "site", "not a name/with spaces", hub, tiny_checkpoint)
    assert result.returncode == 1 and "export_site:" in result.stderr and "Repo id" in result.stderr
    assert not (tmp_path / "site").exists() and hub.commits == []
