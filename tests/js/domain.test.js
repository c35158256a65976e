// domain.js: training_data/domain.py's guess in the page. The expected reports are lens.domain.guess_from's on the same
// table (python -c "from lens.domain import guess_from; ..."); tests/test_site.py compares the shipped table.
import test from "node:test";
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { load } from "./load.js";

const AL = await load("domain.js");
const TABLE = { format: 1, kinds: ["captions", "everyday"], sentences: [3, 3], smoothing: 0.5, threshold: 0,
  counts: { Wo: [0, 3], Ein: [4, 0], "?": [1, 3], Hund: [2, 1], "<first>Wo": [0, 2] } };

test("features split as Python's \\w+|[^\\w\\s] does, with the first and last token marked", () => {
  assert.deepEqual(AL.domainFeatures("don't I'll"), ["don", "'", "t", "I", "'", "ll", "<first>don", "<last>ll"]);
  assert.deepEqual(AL.domainFeatures("Zahl\u0661\u0662\u0663 a_b"), ["Zahl\u0661\u0662\u0663", "a_b", "<first>Zahl\u0661\u0662\u0663", "<last>a_b"]);
  // U+001F is whitespace to Python, U+FEFF is not (JS's \s has them the other way round)
  assert.deepEqual(AL.domainFeatures("\u001fx\ufeffBOM"), ["x", "\ufeff", "BOM", "<first>x", "<last>BOM"]);
  assert.deepEqual(AL.domainFeatures("Emoji \u{1F600} ok"), ["Emoji", "\u{1F600}", "ok", "<first>Emoji", "<last>ok"]);
  assert.deepEqual(AL.domainFeatures("  "), []);
});

test("the report is the server's: log-odds to two places, the words that pulled towards the guess", () => {
  const guess = AL.domainGuess(TABLE);
  assert.deepEqual(guess.report("Wo ist der Hund?"), { everyday: true, log_odds: 2.62, words: ["Wo", "?"] });
  assert.deepEqual(guess.report("Ein Hund."), { everyday: false, log_odds: -3.62, words: ["Ein", "Hund"] });
  assert.deepEqual(guess.report("Hund Hund Wo Ein ? ! _x"), { everyday: false, log_odds: -2.07, words: ["Ein", "Hund", "!"] });
  assert.deepEqual(guess.report(""), { everyday: false, log_odds: 0, words: [] });
  assert.ok(Math.abs(guess.logOdds("Wo ist der Hund?") - 2.6155694005529457) < 1e-12);
});

test("readDomain unzips the checkpoint's file, and is null for bytes that are not one", async () => {
  const guess = await AL.readDomain(zlib.gzipSync(JSON.stringify(TABLE)));
  assert.equal(guess.report("Wo ist der Hund?").log_odds, 2.62);
  assert.equal(await AL.readDomain(Buffer.from("not gzip")), null);
  assert.equal(await AL.readDomain(zlib.gzipSync(JSON.stringify({ ...TABLE, format: 2 }))), null);
});
