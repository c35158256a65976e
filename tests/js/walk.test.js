// walk.js: the page's state in its link (writeLink, readLink), and the public API it publishes.
import test from "node:test";
import assert from "node:assert/strict";
import { load, page as window } from "./load.js";

const AL = await load("core.js", "walk.js", "views.js", "door.js");

/** A first visit's state with `changes`. */
const state = (changes) => Object.assign({ sentence: "", view: "translate", kind: "cross", layer: null, head: null,
  display: "matrix", level: "words", step: null, views: {} }, changes);

test("writeLink keeps only what differs from a first visit", () => {
  assert.equal(AL.writeLink(state({}), false), "");
  assert.equal(AL.writeLink(state({ sentence: "Zwei Hunde spielen im Schnee.", kind: "encoder", layer: 2, head: 3 }), true),
    "s=Zwei+Hunde+spielen+im+Schnee.&kind=encoder&layer=2&head=3"); // docs/page.md's example
  assert.equal(AL.writeLink(state({ view: "step", display: "lines", level: "pieces", step: 4 }), false),
    "view=step&display=lines&level=pieces&step=4");
});

test("writeLink: the layer only once chosen, the step from the second on", () => {
  assert.equal(AL.writeLink(state({ sentence: "Ein Hund.", layer: 3 }), false), "s=Ein+Hund.");
  assert.equal(AL.writeLink(state({ sentence: "Ein Hund.", layer: 3 }), true), "s=Ein+Hund.&layer=3");
  assert.equal(AL.writeLink(state({ step: 1 }), false), "");
  assert.equal(AL.writeLink(state({ step: 2 }), false), "step=2");
  assert.equal(AL.writeLink(state({ compare: true }), false), "compare=1");
  assert.deepEqual(AL.readLink("#s=Ein+Hund.&compare=1"), { sentence: "Ein Hund.", compare: true });
});

test("the open inside panel and the whole-model views live in the link", () => {
  assert.equal(AL.writeLink(state({ panel: "who", whole: true }), false), "panel=who&whole=1");
  assert.deepEqual(AL.readLink("#s=Ein+Hund.&panel=qkv&whole=1"), { sentence: "Ein Hund.", panel: "qkv", whole: true });
  assert.deepEqual(AL.readLink("#panel=&whole=0"), {}, "nothing open");
});

test("readLink reads a fragment back, numbers as numbers, with or without '#'", () => {
  const expected = { sentence: "Zwei Hunde spielen im Schnee.", kind: "encoder", layer: 2, head: 3 };
  assert.deepEqual(AL.readLink("#s=Zwei+Hunde+spielen+im+Schnee.&kind=encoder&layer=2&head=3"), expected);
  assert.deepEqual(AL.readLink("s=Zwei%20Hunde%20spielen%20im%20Schnee.&kind=encoder&layer=2&head=3"), expected);
  assert.deepEqual(AL.readLink(""), {});
  assert.deepEqual(AL.readLink("#layer=&kind="), {}, "empty values are absent");
});

test("a link read back gives the state it was written from", () => {
  const st = state({ sentence: "Ein Mann & eine Frau = 2?", view: "headlab", kind: "decoder", layer: 1, head: 4,
    display: "lines", level: "pieces", step: 7, model: "everyday" });
  assert.deepEqual(AL.readLink(AL.writeLink(st, true)), { sentence: st.sentence, view: "headlab", kind: "decoder",
    layer: 1, head: 4, display: "lines", level: "pieces", step: 7, model: "everyday" });
  assert.equal(AL.writeLink(state({ model: "auto" }), false), ""); // the router's choice: nothing to keep
});

test("window.attentionLens is the page's door (door.js), with state() and openView()", () => {
  assert.equal(window.attentionLens, AL.offered());
  assert.equal(typeof window.attentionLens.openView, "function");
  assert.equal(typeof window.attentionLens.state, "function");
  const st = window.attentionLens.state(); // nothing on the page: a first visit's state
  assert.deepEqual(Object.keys(st), ["sentence", "view", "kind", "layer", "head", "display", "level", "step", "compare", "model", "panel", "whole",
    "views"]);
  assert.deepEqual(st.views, { translate: null, step: null, headlab: null, history: null });
  assert.equal(AL.writeLink(st, false), "");
});

test("openView takes every view's name and refuses an unknown one", async () => {
  assert.deepEqual(window.attentionLens.viewNames(), ["translate", "step", "headlab", "who", "patch", "why", "qkv", "ladder",
    "history", "compare", "copylab", "lab", "code", "glossary"]);
  await assert.rejects(window.attentionLens.openView("nope"), /unknown view 'nope'/);
  await assert.rejects(window.attentionLens.openView("who"), /needs a translation first/); // nothing on the page yet
});
