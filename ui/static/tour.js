// @ts-check
/* Attention Lens, the guided walk: sixteen stops that follow the picture of the model, from the German's pieces
   to the English and then the views of the whole model, each pointing at the part of the page it speaks of and
   opening it. Leave it at any stop (Esc, or Close): the page returns to what the visitor had. */
import { el } from "./draw.js";
import { SPECIAL, selectMap } from "./core.js";
import { publish } from "./door.js";
import { openView } from "./walk.js";
import { view } from "./store.js";

/** The walk on screen (null: none), and where the last one was left (null: finished or never started), kept in
    this tab's storage so that the header's button can resume it. */
let tour = null, left = null;
try { left = JSON.parse(sessionStorage.getItem("al-walk") || "null"); } catch (e) { left = null; }
const $ = (s) => document.querySelector(s);

function viewer() {
  const result = view("translate");
  return result ? result.viewer : null;
}
const show = (kind, level) => () => { const v = viewer(); if (v) { v.choose("kind", kind); v.choose("level", level || "words"); } };
const open = (name) => () => openView(name);
const panel = (opener) => () => {
  const b = /** @type {HTMLElement | null} */ ($(`#result .al-inside [data-view="${opener}"]`));
  if (b && b.getAttribute("aria-pressed") !== "true") b.click();
};
const both = (...fs) => () => fs.forEach((f) => f());

/** The map of the sentence shown, (kind, last layer, mean of heads, words), or null before a translation. */
function mapNow(kind) {
  const v = viewer(), x = v && v.explanation;
  if (!x || !x.sentences || !x.sentences.length) return null;
  const sentence = x.sentences[v.state.sentence] || x.sentences[0];
  return { map: selectMap(x, sentence, kind, x.layers[kind] - 1, null, "words"), sentence: sentence };
}
const real = (w) => !SPECIAL[w] && /\p{L}/u.test(w);

/** A guess about a row of a map: where does the row's word look most? Its choices: the columns' words. */
function lookGuess(kind, pickRow, question) {
  return () => {
    const m = mapNow(kind);
    if (!m) return null;
    const { map } = m, rows = [...Array(map.rows).keys()].filter((r) => real(map.rowLabels[r]));
    const r = pickRow(rows, map);
    if (r == null) return null;
    const cols = [...Array(map.cols).keys()].filter((c) => real(map.colLabels[c]) && !map.masked[r * map.cols + c] &&
      !(kind !== "cross" && c === r));
    if (cols.length < 2) return null;
    const best = cols.reduce((a, c) => (map.values[r * map.cols + c] > map.values[r * map.cols + a] ? c : a), cols[0]);
    return { question: question(map.rowLabels[r]), choices: cols.slice(0, 8).map((c) => map.colLabels[c]),
      answer: map.colLabels[best] };
  };
}
const contentRow = (rows, map) => rows.find((r) => map.rowLabels[r].length > 3) ?? rows[0];
const laterRow = (rows) => rows.length > 2 ? rows[Math.min(rows.length - 1, 3)] : null;

/** How sure was the model of a word? Three bands, from the word's probability. */
function sureGuess() {
  const m = mapNow("cross");
  if (!m) return null;
  const words = m.sentence.words.tgt.filter(([w]) => real(w));
  if (!words.length) return null;
  const [word, pieces] = words.find(([w]) => w.length > 3) || words[0];
  const p = pieces.reduce((acc, k) => acc * (m.sentence.probs[k] ?? 1), 1);
  const bands = ["under 50%", "50\u201390%", "over 90%"];
  return { question: `Guess first: how sure was the model of \u2018${word}\u2019?`, choices: bands,
    answer: bands[p < 0.5 ? 0 : p < 0.9 ? 1 : 2] };
}

// The walk follows the picture of the model (spine.js): the sentence from its pieces to the English, then the
// views of the whole model. `view` names the view each stop shows.
const STOPS = [
  { at: "#source", view: "translate", title: "1 · The German goes in",
    text: "Everything starts here: one German sentence (or a few). The model never sees letters: the text is first cut into pieces from a vocabulary of 8,000 that German and English share." },
  { at: "#result .al-spine .al-spine-encoder .al-b-embed", view: "pieces", before: show("encoder", "pieces"),
    title: "2 · Pieces and their positions",
    text: "Each piece becomes a vector of 256 numbers, plus a wave pattern that says where it stands in the sentence: attention itself does not know order. The map now shows pieces, not words." },
  { at: "#result .al-stage", view: "encoder", before: show("encoder"), title: "3 · The encoder reads the German",
    guess: lookGuess("encoder", contentRow, (w) => `Guess first: in the encoder's last layer, which other German word does \u2018${w}\u2019 look at most?`),
    text: "Encoder self-attention: every German word looks at every other German word (rows look at columns). In three layers the words gather context: a verb finds its subject, an article its noun." },
  { at: "#result .al-side", view: "qkv", before: show("encoder"), title: "4 · How one row is computed: Q, K, V",
    text: "Click a row of the map, then “How was this row computed?”: the row's query meets every key, the scores are scaled and softmaxed, and the weights mix the values. That is the whole of attention." },
  { at: "#result .al-stage", view: "decoder", before: show("decoder"), title: "5 · The decoder looks back at its own English",
    guess: lookGuess("decoder", laterRow, (w) => `Guess first: while writing \u2018${w}\u2019, which word it has already read does the decoder look at most?`),
    text: "Decoder self-attention is masked: while writing a word, the model may look only at the English words before it (the empty upper triangle). It cannot peek at what it has not written yet." },
  { at: "#result .al-stage", view: "cross", before: show("cross"), title: "6 · Cross-attention links the languages",
    guess: lookGuess("cross", contentRow, (w) => `Guess first: which German word does \u2018${w}\u2019 look at most in the last layer?`),
    text: "Each English word (row) looks at the German (columns). A bright cell often marks the word being translated: this is where the two languages meet. The picture shows, on each cross-attention block, where the word looks most." },
  { at: "#result .al-ladder-panel", view: "who", before: both(show("cross"), panel("openContributions")),
    title: "7 · Who wrote each word?",
    text: "Attention is not the whole story: each English word is a mix of what came from the German and what came from the English before it, measured through every block with its residual and LayerNorm." },
  { at: "#result .al-ladder-panel", view: "ladder", before: panel("openLadder"), title: "8 · When was each word decided?",
    text: "The decoder's state after every sublayer, read out as if it were the last: a word the model already favours early was easy; one decided in the last layer was hard." },
  { at: "#result .al-english", view: "output", title: "9 · A probability for every word", guess: sureGuess,
    text: "After the last layer, the model scores all 8,000 pieces and turns the scores into probabilities. Paler words were less certain." },
  { at: "#view-step", view: "step", before: open("step"), title: "10 · One word at a time, and the beam",
    text: "The translation is written piece by piece. Beam search keeps the 4 likeliest partial sentences at every step and picks the best finished one. Try Guess first: predict where it looks before it shows you." },
  { at: "#view-step", view: "why", before: open("step"), title: "11 · Why this word and not that one?",
    text: "At any step, ask why the model wrote its word and not another: the answer splits the difference of their scores over the German words." },
  { at: "#view-headlab", view: "headlab", before: open("headlab"), title: "12 · Take it apart: the head lab",
    text: "Switch heads off and watch the translation change, or compare attention with attribution: attention shows where the model looked, attribution which German words the choice rested on." },
  { at: "#result .al-ladder-panel", view: "patching", before: panel("openPatch"), title: "13 · Which heads carry a word?",
    text: "Swap one German word and copy each head's output back from the first sentence: the heads that bring the word back are the ones that carry it." },
  { at: "#result .al-evidence", view: "evidence", title: "14 · What the model learned from",
    text: "Click a German word: how often the model saw it in training, and where. A rare or unseen word is where a translation goes wrong, and the page warns of it." },
  { at: "#view-history", view: "history", before: open("history"), title: "15 · Time travel: attention being learned",
    text: "The same sentence through the snapshots of training: from random weights at step 0 to the sharp maps of the finished model." },
  { at: "#view-copylab", view: "copylab", before: open("copylab"), title: "16 · Train one yourself",
    text: "A tiny Transformer learns to copy a sequence while you watch, in a minute on this machine: its cross-attention turns into a diagonal." },
];
export const walk = () => STOPS.map((s) => ({ title: s.title.replace(/^\d+ · /, ""), view: s.view, guess: !!s.guess }));

class Tour {
  constructor() {
    this.box = el("div", "al-tour");
    this.box.setAttribute("role", "dialog");
    this.box.setAttribute("aria-label", "Guided walk through the page");
    this.title = this.box.appendChild(el("h3", "al-tour-title"));
    this.guess = this.box.appendChild(el("div", "al-tour-guess"));
    this.text = this.box.appendChild(el("p", "al-tour-text"));
    this.score = { right: 0, asked: 0 };
    const nav = this.box.appendChild(el("div", "al-tour-nav"));
    this.prev = nav.appendChild(el("button", "al-tour-button", "\u2190 Back"));
    this.next = nav.appendChild(el("button", "al-tour-button al-tour-next", "Next \u2192"));
    this.close = nav.appendChild(el("button", "al-tour-button", "Close"));
    for (const b of [this.prev, this.next, this.close]) b.type = "button";
    this.prev.addEventListener("click", () => this.go(this.i - 1));
    this.next.addEventListener("click", () => (this.i === STOPS.length - 1 ? this.end(true) : this.go(this.i + 1)));
    this.close.addEventListener("click", () => this.end());
    this.keys = (e) => { if (e.key === "Escape") this.end(); };
  }

  /** Start at stop `from` (counted from 0) with the score of an earlier, unfinished walk. */
  start(from, score) {
    const v = viewer(); // what the visitor had, restored when the walk is left (Esc, Close)
    const pressed = /** @type {HTMLElement | null} */ ($("#result .al-inside [aria-pressed='true']"));
    this.had = { state: v ? { ...v.state } : null, open: [...document.querySelectorAll(".al-view:not(.al-closed)")].map((n) => n.id),
      y: window.scrollY, panel: pressed ? pressed.dataset.view : null };
    if (score) this.score = { ...score };
    document.body.appendChild(this.box);
    document.addEventListener("keydown", this.keys);
    this.go(from || 0);
  }

  go(i) {
    this.i = i = Math.max(0, Math.min(STOPS.length - 1, i));
    const stop = STOPS[i];
    if (stop.before) stop.before();
    document.querySelectorAll(".al-tour-spot").forEach((n) => n.classList.remove("al-tour-spot"));
    const target = $(stop.at);
    if (target) { target.classList.add("al-tour-spot"); target.scrollIntoView({ block: "center" }); }
    this.title.textContent = stop.title;
    this.text.textContent = stop.text;
    this.ask(stop);
    this.prev.disabled = i === 0;
    this.next.textContent = i === STOPS.length - 1 ? "Done" : "Next \u2192";
    this.box.dataset.stop = String(i + 1);
  }

  /** A stop with a guess asks it first: the map and the text wait until the visitor has answered (or skips on). */
  ask(stop) {
    const g = stop.guess ? stop.guess() : null;
    this.guess.replaceChildren();
    this.guess.hidden = !g;
    this.text.hidden = !!g;
    const spot = /** @type {HTMLElement | null} */ ($(".al-tour-spot"));
    if (!g) { if (spot) spot.classList.remove("al-tour-hidden"); return; }
    if (spot) spot.classList.add("al-tour-hidden");
    const choices = el("div", "al-tour-choices");
    for (const c of g.choices) {
      const b = el("button", "al-tour-button al-tour-choice", c);
      b.type = "button";
      b.addEventListener("click", () => {
        const right = c === g.answer;
        this.score.asked += 1; this.score.right += right ? 1 : 0;
        choices.querySelectorAll("button").forEach((n) => {
          n.disabled = true;
          n.classList.toggle("al-tour-right", n.textContent === g.answer);
        });
        if (!right) b.classList.add("al-tour-wrong");
        this.guess.append(el("div", "al-tour-score", (right ? "Right! " : `It was \u2018${g.answer}\u2019. `) +
          `Your guesses: ${this.score.right} of ${this.score.asked} right.`));
        this.text.hidden = false;
        if (spot) spot.classList.remove("al-tour-hidden");
      });
      choices.append(b);
    }
    this.guess.append(el("div", "al-tour-question", g.question), choices);
  }

  /** Where the walk was left (null: finished), for the header's button to resume it, in this tab's storage. */
  remember(stop) {
    const b = $("#page-header .al-tour-start");
    left = stop == null ? null : { stop: stop, score: { ...this.score } };
    try { sessionStorage.setItem("al-walk", JSON.stringify(left)); } catch (e) { /* storage off: this page only */ }
    if (b) b.textContent = stop == null ? `Take the guided walk (${STOPS.length} stops)` :
      `Resume the guided walk (stop ${stop + 1} of ${STOPS.length})`;
  }

  /** `finished`: the last stop's Done, not Esc or Close. */
  end(finished) {
    document.querySelectorAll(".al-tour-hidden").forEach((n) => n.classList.remove("al-tour-hidden"));
    const v = viewer(), had = this.had;
    if (v && had && had.state) for (const k of ["kind", "level", "view", "sentence"]) v.choose(k, had.state[k]);
    if (v && had && had.state) { v.state.layer = had.state.layer; v.state.head = had.state.head; v.draw(); }
    if (had) {
      document.querySelectorAll(".al-view").forEach((n) => n.classList.toggle("al-closed", !had.open.includes(n.id)));
      const pressed = /** @type {HTMLElement | null} */ ($("#result .al-inside [aria-pressed='true']"));
      if (pressed && pressed.dataset.view !== had.panel) { // a panel the walk opened closes again
        pressed.removeAttribute("aria-pressed");
        const box = $("#result .al-ladder-panel");
        if (box) box.replaceChildren();
      }
      window.scrollTo(0, had.y);
    }
    this.remember(this.i < STOPS.length - 1 || !finished ? this.i : null);
    document.querySelectorAll(".al-tour-spot").forEach((n) => n.classList.remove("al-tour-spot"));
    document.removeEventListener("keydown", this.keys);
    this.box.remove();
    tour = null;
  }
}

export const TOUR_STOPS = STOPS.length;
/** Start the walk, or resume it where it was left, unless `fresh`. */
export function startTour(fresh) {
  if (tour) tour.end();
  tour = new Tour();
  const from = fresh ? null : left;
  tour.start(from ? from.stop : 0, from ? from.score : null);
  return tour;
}

/** Open stop `i` of the walk (counted from 0), starting the walk where none is on screen. */
export function walkTo(i) {
  if (!tour) startTour(true);
  tour.go(i);
  return walk()[tour.i];
}
publish({ walk, walkTo });

// The page header's button starts the walk (app.py writes it, so nothing moves when this script arrives).
(function bind(since) {
  const b = /** @type {HTMLElement | null} */ (document.querySelector("#page-header .al-tour-start"));
  if (b && !b.dataset.bound) {
    b.dataset.bound = "true";
    b.addEventListener("click", () => startTour());
    if (left) b.textContent = `Resume the guided walk (stop ${left.stop + 1} of ${STOPS.length})`;
  } else if (!b && Date.now() - since < 60000) setTimeout(() => bind(since), 100);
})(Date.now());
