// The text the panels under the translation write: pieces, percentages, the swaps proposed, the notices.
import test from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.js";

const AL = await load("core.js", "draw.js", "viewer.js", "result.js", "qkv.js", "who.js", "patchlab.js");

test("pieceText drops a word-start mark (▁ or Ġ)", () => {
  assert.equal(AL.pieceText("▁Hund"), "Hund");
  assert.equal(AL.pieceText("\u0120dog"), "dog");
  assert.equal(AL.pieceText("rad"), "rad");
});

test("proposedSwaps: whole words only, the first swap of an overlapping pair wins", () => {
  assert.deepEqual(AL.proposedSwaps("Ein Mann fährt Fahrrad."), [
    ["Ein Mann", "Eine Frau", "Eine Frau fährt Fahrrad."],
    ["Fahrrad", "Pferd", "Ein Mann fährt Pferd."],
  ]);
  assert.deepEqual(AL.proposedSwaps("Die Hundehütte ist leer."), [], "Hund inside a word is no swap");
  assert.deepEqual(AL.proposedSwaps("Zwei Hunde und ein Hund."), [["Hund", "Pferd", "Zwei Hunde und ein Pferd."],
    ["Zwei", "Drei", "Drei Hunde und ein Hund."]]);
});

test("patchSentence tells which head carries the word, and when none does alone", () => {
  const p = { step: 2, clean_piece: "▁man", corrupted_piece: "▁woman", all: 0.97, none: 0.02,
    top_heads: [{ kind: "cross", layer: 3, head: 2, restored: 0.61 }, { kind: "cross", layer: 2, head: 1, restored: 0.2 }] };
  assert.equal(AL.patchSentence(p), "At step 2 the clean German writes \u2018man\u2019 and the other \u2018woman\u2019. " +
    "Copying cross-attention layer 3 head 2 alone from the clean run brings back 61% of that choice. " +
    "Every head copied: 97%; none: 2%.");
  p.top_heads[0].restored = 0.3;
  assert.match(AL.patchSentence(p), /No single head carries it: several share the work, all of them in cross-attention\./);
});

test("unfamiliarText gives the alarm's reasons in one sentence, of this sentence or of sentence n", () => {
  assert.equal(AL.unfamiliarText(null, ["3 words never seen", "low confidence"]),
    "\u26a0\ufe0f This sentence is unlike what this model learned from, so expect a rough translation: " +
    "3 words never seen; low confidence.");
  assert.match(AL.unfamiliarText(1, ["low confidence"]), /^\u26a0\ufe0f Sentence 2 is unlike what /);
});
