"""ui/batching.py: calls that arrive while the model is busy are joined into one batch, each caller
gets its own results, options never mix, and a bad call fails alone."""

import threading
import time

import pytest

from ui.batching import Batcher

pytestmark = [pytest.mark.server]


class Model:
    """A model call that records each batch and can be held busy until released."""

    def __init__(self):
        self.batches: list[tuple[list, object]] = []
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()

    def __call__(self, items, key):
        self.batches.append((list(items), key))
        self.started.set()
        self.release.wait(timeout=10)
        if any(item == "bad" for item in items):
            raise ValueError("bad input")
        return [f"{item}:{key}" for item in items]


def call_in_thread(batcher, items, key, results, name):
    def target():
        try:
            results[name] = batcher(items, key)
        except Exception as err:  # noqa: BLE001
            results[name] = err

    thread = threading.Thread(target=target)
    thread.start()
    return thread


def busy_then(batcher, model, calls):
    """Hold the model busy with a first call, queue `calls` (name -> (items, key)), release; results."""
    results = {}
    model.release.clear()
    first = call_in_thread(batcher, ["first"], "k", results, "first")
    assert model.started.wait(5)
    threads = [call_in_thread(batcher, items, key, results, name) for name, (items, key) in calls.items()]
    deadline = time.time() + 5
    while len(batcher._waiting) < len(calls) and time.time() < deadline:
        time.sleep(0.01)
    model.release.set()
    for thread in [first, *threads]:
        thread.join(10)
    return results


def test_a_call_alone_runs_at_once_as_its_own_batch():
    model = Model()
    batcher = Batcher(model)
    assert batcher(["a", "b"], "k") == ["a:k", "b:k"]
    assert model.batches == [(["a", "b"], "k")]
    assert batcher([], "k") == [] and len(model.batches) == 1


def test_calls_waiting_for_the_model_share_one_batch_and_get_their_own_results():
    model = Model()
    batcher = Batcher(model)
    calls = {f"c{i}": ([f"s{i}a", f"s{i}b"], "k") for i in range(5)}
    results = busy_then(batcher, model, calls)
    assert results["first"] == ["first:k"]
    for name, (items, key) in calls.items():
        assert results[name] == [f"{item}:{key}" for item in items]
    assert len(model.batches) == 2  # the first call, then all five waiting ones together
    assert sorted(model.batches[1][0]) == sorted(item for items, _ in calls.values() for item in items)
    assert (batcher.batches, batcher.calls) == (2, 6)


def test_different_options_never_share_a_batch():
    model = Model()
    batcher = Batcher(model)
    calls = {"x1": (["a"], "x"), "y1": (["b"], "y"), "x2": (["c"], "x")}
    results = busy_then(batcher, model, calls)
    assert results["x1"] == ["a:x"] and results["y1"] == ["b:y"] and results["x2"] == ["c:x"]
    for items, key in model.batches:
        assert {f"{i}:{key}" for i in items} <= {"first:k", "a:x", "b:y", "c:x"}
    assert sorted(sorted(items) for items, _ in model.batches[1:]) == [["a", "c"], ["b"]]


def test_a_batch_holds_at_most_max_items():
    model = Model()
    batcher = Batcher(model, max_items=4)
    calls = {f"c{i}": ([f"s{i}a", f"s{i}b", f"s{i}c"], "k") for i in range(3)}
    results = busy_then(batcher, model, calls)
    assert all(len(items) <= 4 for items, _ in model.batches)
    for name, (items, key) in calls.items():
        assert results[name] == [f"{item}:{key}" for item in items]


def test_a_bad_call_fails_alone_and_the_others_get_their_results():
    model = Model()
    batcher = Batcher(model)
    calls = {"good1": (["a"], "k"), "bad": (["b", "bad"], "k"), "good2": (["c"], "k")}
    results = busy_then(batcher, model, calls)
    assert isinstance(results["bad"], ValueError)
    assert results["good1"] == ["a:k"] and results["good2"] == ["c:k"]


def test_a_model_call_returning_too_few_results_is_an_error_not_a_shifted_answer():
    batcher = Batcher(lambda items, key: items[:-1])
    with pytest.raises(RuntimeError, match="returned 1 results for 2 items"):
        batcher(["a", "b"], "k")


def test_two_workers_run_two_batches_at_once():
    inside, peak, lock = [0], [0], threading.Lock()

    def run(items, key):
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        time.sleep(0.2)
        with lock:
            inside[0] -= 1
        return items

    batcher = Batcher(run, workers=2)
    results = {}
    threads = [call_in_thread(batcher, [i], f"key{i}", results, i) for i in range(4)]
    for thread in threads:
        thread.join(10)
    assert peak[0] == 2 and results == {i: [i] for i in range(4)}
    with pytest.raises(ValueError, match="at least 1"):
        Batcher(run, workers=0)


@pytest.fixture(scope="module")
def app(tiny_checkpoint):
    """app.py imported in this process with the tiny checkpoint, launched on a free port."""
    from ui.app_process import in_process_app

    with in_process_app(tiny_checkpoint) as module:
        yield module


def hold_batches_until_all_arrived(batcher: Batcher, calls: int):
    """Hold the model calls until `calls` callers have come in, so the test does not race the model."""
    run, base = batcher.run, batcher.calls

    def held(items, key):
        deadline = time.time() + 20
        while batcher.calls - base + len(batcher._waiting) < calls and time.time() < deadline:
            time.sleep(0.01)
        return run(items, key)

    batcher.run = held
    return run


@pytest.mark.parametrize("endpoint", ["/translate", "/explain"])
def test_concurrent_calls_through_the_server_share_batches_and_each_gets_its_own(app, endpoint):
    from concurrent.futures import ThreadPoolExecutor

    from gradio_client import Client

    from lens.explain import sentences_of
    from ui.shared_calls import batched_calls

    texts = [
        "Ein Mann fährt Fahrrad.",
        "Zwei Hunde spielen im Schnee.",
        "Eine Frau liest ein Buch.",
        "Kinder spielen Fußball.",
        "Ein Mädchen trinkt Wasser. Ein Junge lacht.",
        "Der Hund schläft.",
    ]
    expected = [
        " ".join(o for o in app.translator.translate(sentences_of(t)[0], num_beams=2, max_new_tokens=20) if o)
        for t in texts
    ]  # each text alone
    batcher = getattr(batched_calls(app.translator), endpoint.strip("/"))
    before = (batcher.batches, batcher.calls)
    run = hold_batches_until_all_arrived(batcher, len(texts))
    clients = [Client(app.demo.local_url, verbose=False) for _ in texts]

    def call(i):
        out = clients[i].predict(texts[i], "beam search", 2, 1.0, 20, api_name=endpoint)
        return out if endpoint == "/translate" else out["translation"]

    try:
        with ThreadPoolExecutor(len(texts)) as pool:
            assert list(pool.map(call, range(len(texts)))) == expected
    finally:
        batcher.run = run
    batches, calls = batcher.batches - before[0], batcher.calls - before[1]
    # the first call of each worker alone, then all the others together
    assert calls == len(texts) and batches == batcher.workers + 1, (batches, calls)


def test_on_zerogpu_every_call_runs_alone_as_before(tiny_checkpoint, monkeypatch):
    import ui.shared_calls
    from lens.explain import DecodingOptions
    from translation import Translator
    from ui.public import BATCH_SENTENCES, CONCURRENCY

    translator = Translator.from_pretrained(tiny_checkpoint, device="cpu")
    calls = ui.shared_calls._build(translator)
    assert (calls.translate.max_items, calls.explain.max_items) == (BATCH_SENTENCES, BATCH_SENTENCES)
    monkeypatch.setattr(ui.shared_calls, "on_zero_gpu", lambda: True)
    calls = ui.shared_calls._build(translator)  # each visitor's GPU time is billed to that visitor
    assert (calls.translate.max_items, calls.translate.workers) == (1, CONCURRENCY)
    assert calls.explain.max_items == 1
    options = DecodingOptions(num_beams=2, max_new_tokens=12)
    assert calls.translate(["Ein Hund.", "Eine Katze."], (options, None)) == translator.translate(
        ["Ein Hund.", "Eine Katze."], **options.to_dict()
    )  # a call of many sentences still runs whole
