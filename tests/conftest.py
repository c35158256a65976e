import os

import pytest
import torch

from tests.corpus import DATA_DIR, HAS_CORPUS

# The project root is on sys.path through pyproject.toml's pytest `pythonpath`.
torch.set_num_threads(1)  # tests are tiny; one thread leaves the other core to parallel workers


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """What a test compiles without naming a cache (the native search, the packaged step) goes to one folder of the
    session, not to ~/.cache; a cache set in the environment is kept."""
    if "ATTENTION_LENS_COMPILE_CACHE" not in os.environ:
        os.environ["ATTENTION_LENS_COMPILE_CACHE"] = str(tmp_path_factory.mktemp("compile-cache"))
    yield


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A real checkpoint folder (config.json, model.safetensors, tokenizer.json, README.md) with a
    tiny untrained model and a BPE tokenizer learned from 2,000 Multi30k pairs."""
    if not HAS_CORPUS:
        pytest.skip(f"Multi30k not found in {DATA_DIR}: set MULTI30K_DIR")
    import data
    from model import Transformer, TransformerConfig
    from tokenizer import train_tokenizer
    from translation import Translator

    train = data.load_split(DATA_DIR, "train")
    tokenizer = train_tokenizer(train.src[:2000] + train.tgt[:2000], vocab_size=600)
    torch.manual_seed(0)
    config = TransformerConfig(
        vocab_size=tokenizer.get_vocab_size(),
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        max_len=64,
    )
    folder = tmp_path_factory.mktemp("checkpoint") / "de-en"
    Translator(Transformer(config), tokenizer, device="cpu").save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_translator(tiny_checkpoint):
    """The tiny checkpoint loaded as a Translator on the CPU."""
    from translation import Translator

    return Translator.from_pretrained(tiny_checkpoint, device="cpu")


@pytest.fixture(scope="session")
def shipped_app(tmp_path_factory):
    """app.py serving the shipped checkpoint (and the everyday one to compare with), started once for every
    module that drives the page or its endpoints (tests/test_ui_page.py's `server`)."""
    from pathlib import Path

    from ui.app_process import running_app

    root = Path(__file__).resolve().parent.parent
    checkpoint, second = root / "checkpoints" / "de-en", root / "checkpoints" / "de-en-everyday"
    with running_app(
        tmp_path_factory.mktemp("page") / "app.log",
        MODEL_ID=str(checkpoint),
        EVERYDAY_MODEL_ID=str(second if second.is_dir() else checkpoint),
    ) as url:
        yield url


@pytest.fixture(scope="session")
def public_app(tiny_checkpoint, tmp_path_factory):
    """app.py on the tiny checkpoint as a Space runs it, started once (tests/test_public.py's `server`)."""
    from ui.app_process import launch_app

    proc, url = launch_app(
        tmp_path_factory.mktemp("public") / "app.log", listen_local=False, MODEL_ID=str(tiny_checkpoint)
    )
    yield url
    proc.terminate()
    proc.wait(timeout=30)


BROWSER_FIXTURES = {"browser", "desk"}  # the fixtures that start Debian's chromium


def pytest_collection_modifyitems(items):
    """A test that uses a browser fixture is marked `browser` (pyproject.toml lists the markers)."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="module", params=[False, True], ids=["post-ln", "pre-ln"])
def both_norms(request, tiny_checkpoint):
    """The tiny checkpoint (Post-LN, the paper's), then an untrained Pre-LN model of its shape and tokenizer."""
    from model import Transformer, TransformerConfig
    from translation import Translator

    shipped = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    if not request.param:
        return shipped
    config = TransformerConfig(**{**shipped.config.to_dict(), "norm_first": True})
    torch.manual_seed(1)
    return Translator(Transformer(config).eval(), shipped.tokenizer, device="cpu")


@pytest.fixture(scope="session")
def shipped_pair():
    """The page's translator on the shipped checkpoints (ui/pair.py): both models and the router, loaded once."""
    from pathlib import Path

    from training_data.alarm import load_familiarity
    from translation import Translator
    from ui.pair import Pair, Served
    from ui.routed import Router

    root = Path(__file__).resolve().parent.parent / "checkpoints"
    default, everyday = root / "de-en", root / "de-en-everyday"
    return Pair(
        Served("default", Translator.from_pretrained(default, device="cpu"), load_familiarity(default)),
        Served("everyday", Translator.from_pretrained(everyday, device="cpu"), load_familiarity(everyday)),
        Router.of_checkpoint(default),
    )


@pytest.fixture(scope="session")
def site_folder(tmp_path_factory):
    """The static site of the shipped checkpoints as python -m ui.export_site writes it by default (the default model,
    the everyday model each sentence of everyday German goes to, the Chinese model, time travel's snapshots), one for
    the session: its folder and its files' sizes."""
    from tests.test_site import CHECKPOINT, EVERYDAY_CHECKPOINT
    from ui.export_site import export_site

    folder = tmp_path_factory.mktemp("site")
    chinese = CHECKPOINT.parent / "zh-en"
    return folder, export_site(
        folder,
        CHECKPOINT,
        everyday=EVERYDAY_CHECKPOINT,
        chinese=chinese if (chinese / "model.safetensors").is_file() else None,
    )


@pytest.fixture(scope="session")
def site(site_folder):
    """site_folder served on loopback: its URL and its files' sizes. The site's tests, its steps' and its
    accessibility's share it."""
    import functools
    import http.server
    import threading

    from tests.test_site import Quiet

    folder, sizes = site_folder
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/", sizes
    server.shutdown()
