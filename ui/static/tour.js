// @ts-check
/* Attention Lens, the guided walk: stops that follow the picture of the model, from the German's pieces through
   each step of the computation (concepts.js, opened with the sentence's numbers) to the English, then the views of
   the whole model, each pointing at the part of the page it speaks of and opening it; many ask for a guess first.
   Leave it at any stop (Esc, or Close): the page returns to what the visitor had. */
import { closeStep, openStep } from "./concepts.js";
import { el } from "./draw.js";
import { SPECIAL, selectMap } from "./core.js";
import { publish } from "./door.js";
import { t } from "./i18n.js";
import { stepTitle } from "./steps.js";
import { act, view } from "./store.js";

/** The walk on screen (null: none), and where the last one was left (null: finished or never started), kept in
    this tab's storage so that the header's button can resume it. */
let tour = null, left = null;
try { left = JSON.parse(sessionStorage.getItem("al-walk") || "null"); } catch (e) { left = null; }
// The static site's names for the parts of the page the stops point at (ui/export_site.py writes them).
const ON_SITE = { "#result": "#site-result", "#source": "#site-source", "#view-step": "#site-step",
  "#view-headlab": "#site-headlab", "#view-history": "#site-history", "#view-copylab": "#site-copylab", "#view-lab": "#site-lab",
  "#page-header": "#site-header" };
const onSite = () => !!document.querySelector("#site-result");
// The copy lab's time limit: training/lab.py's MAX_TIME_S on the app; on the site copytrain.js's TIME_LIMIT_S.
const COPYLAB_SECONDS = 20, TIME_LIMIT_S = 60;
const here = (selector) => (onSite() ? selector.replace(/#[\w-]+/g, (id) => ON_SITE[id] || id) : selector);
const $ = (s) => document.querySelector(here(s));

function viewer() {
  const result = view("translate");
  return result ? result.viewer : null;
}
const show = (kind, level) => () => { const v = viewer(); if (v) { v.choose("kind", kind); v.choose("level", level || "words"); } };
const open = (name) => () => act("open", name); // walk.js on the app, siteviews.js on the static site
const panel = (opener) => () => {
  const b = /** @type {HTMLElement | null} */ ($(`#result .al-inside [data-view="${opener}"]`));
  if (b && b.getAttribute("aria-pressed") !== "true") b.click();
};
const both = (...fs) => () => fs.forEach((f) => f());

/** The explanation shown and its sentence, or null before a translation. */
function shownNow() {
  const v = viewer(), x = v && v.explanation;
  if (!x || !x.sentences || !x.sentences.length) return null;
  return { x, sentence: x.sentences[v.state.sentence] || x.sentences[0] };
}

/** A map of the sentence shown (the last layer's mean of heads in words, unless told), or null before a translation. */
function mapNow(kind, layer = null, head = null, level = "words") {
  const s = shownNow();
  if (!s) return null;
  const { x, sentence } = s;
  return { map: selectMap(x, sentence, kind, layer ?? x.layers[kind] - 1, head, level), sentence: sentence };
}
const real = (w) => !SPECIAL[w] && /\p{L}/u.test(w);

/** A guess about a row of a map: where does the row's word look most? Its choices: the columns' words. `at`: the
    map's layer, head and level (else the last layer's mean of heads, in words). */
function lookGuess(kind, pickRow, question, at = {}) {
  return () => {
    const m = mapNow(kind, at.layer, at.head, at.level);
    if (!m) return null;
    const { map } = m, rows = [...Array(map.rows).keys()].filter((r) => real(map.rowLabels[r]));
    const r = pickRow(rows, map);
    if (r == null) return null;
    // the encoder's row itself is no choice; the decoder's column r is the piece it was given there (the word
    // before the one it writes, often where it looks most), a choice like any other
    const cols = [...Array(map.cols).keys()].filter((c) => real(map.colLabels[c]) && !map.masked[r * map.cols + c] &&
      !(kind === "encoder" && c === r));
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
  const bands = [t("tour.sure_under_half"), t("tour.sure_middle"), t("tour.sure_over_ninety")];
  return { question: t("tour.sure_guess", { word }), choices: bands, answer: bands[p < 0.5 ? 0 : p < 0.9 ? 1 : 2] };
}

/** A guess whose answer does not depend on the sentence: `choices` with the right one first (shown in this order
    shuffled by a fixed turn, so that the right one is not always first). */
const fixedGuess = (question, choices, turn = 1) => () => {
  const shown = choices.map((_, i) => choices[(i + turn) % choices.length]);
  return { question: question(), choices: shown, answer: choices[0] };
};

/** How many numbers enter layer 1: pieces × d_model, against the other ways to combine them. */
function shapeGuess() {
  const s = shownNow();
  if (!s || !s.x.d_model) return null;
  const S = s.sentence.tokens.src.length, D = s.x.d_model;
  const right = `${S} × ${D} = ${S * D}`;
  return { question: t("tour.pe.guess"), choices: [String(S), String(D), right, `${S} + ${D} = ${S + D}`], answer: right };
}

/** How many numbers after the heads are concatenated: h × d_k = d_model. */
function concatGuess() {
  const s = shownNow();
  if (!s || !s.x.d_model) return null;
  const H = s.x.heads, D = s.x.d_model;
  return { question: t("tour.heads.guess"), choices: [String(D / H), String(H), String(D), String(D * H)], answer: String(D) };
}

/** Time travel at snapshot `at` (0 the first, -1 the last), once the view has its snapshots (a minute at most). */
const travel = (at) => () => {
  const since = Date.now();
  const go = () => {
    const h = /** @type {any} */ (view("history")), snaps = h && h.data && h.data.text ? h.data.snapshots : null;
    if (snaps && snaps.length) h.pick(at < 0 ? snaps.length - 1 : at);
    else if (Date.now() - since < 60000) setTimeout(go, 200);
  };
  go();
};

/** A stop that opens a step of the picture (concepts.js) at `place`, pointing at it. */
function stepStop(concept, place, text, guess) {
  return { at: `#result [data-concept="${concept}"]`, view: "translate", concept, guess,
    before: () => { openStep(concept, place).catch(() => {}); },
    get title() { return stepTitle(concept); }, get text() { return text(); } };
}
const encoder1 = { kind: "encoder", layer: 0, head: 0, row: 1 };

// The walk follows the picture of the model (spine.js): the sentence from its pieces to the English, then the
// views of the whole model. `view` names the view each stop shows; its words are read when it is shown.
const STOPS = [
  { at: "#source", view: "translate", get title() { return t("tour.translate.title"); },
    get text() { return t("tour.translate.text"); } },
  stepStop("tokens", encoder1, () => t("tour.tokens.text")),
  stepStop("embedding", encoder1, () => t("tour.embedding.text")),
  stepStop("positional-encoding", encoder1, () => t("tour.pe.text"), shapeGuess),
  stepStop("qkv-projection", encoder1, () => t("tour.qkv_step.text")),
  stepStop("scores", encoder1, () => t("tour.scores.text"),
    fixedGuess(() => t("tour.scores.guess"), [t("tour.scores.peakier"), t("tour.scores.flatter"), t("tour.scores.same")])),
  stepStop("mask", { kind: "decoder", layer: 0, head: 0 }, () => t("tour.mask.text"),
    fixedGuess(() => t("tour.mask.guess"), [t("tour.mask.before"), t("tour.mask.all"), t("tour.mask.itself")], 2)),
  stepStop("softmax", encoder1, () => t("tour.softmax.text"),
    lookGuess("encoder", contentRow, (piece) => t("tour.softmax.guess", { piece }), { layer: 0, head: 0, level: "pieces" })),
  stepStop("heads-concat", encoder1, () => t("tour.heads.text"), concatGuess),
  stepStop("residual-layernorm", encoder1, () => t("tour.residual.text")),
  { at: "#result .al-stage", view: "encoder", before: both(closeStep, show("encoder")), get title() { return t("tour.encoder.title"); },
    guess: lookGuess("encoder", contentRow, (word) => t("tour.encoder.guess", { word })),
    get text() { return t("tour.encoder.text"); } },
  stepStop("feed-forward", encoder1, () => t("tour.ff.text")),
  { at: "#result .al-stage", view: "decoder", before: both(closeStep, show("decoder")), get title() { return t("tour.decoder.title"); },
    guess: lookGuess("decoder", laterRow, (word) => t("tour.decoder.guess", { word })),
    get text() { return t("tour.decoder.text"); } },
  { at: "#result .al-stage", view: "cross", before: both(closeStep, show("cross")), get title() { return t("tour.cross.title"); },
    guess: lookGuess("cross", contentRow, (word) => t("tour.cross.guess", { word })),
    get text() { return t("tour.cross.text"); } },
  stepStop("cross-attention", { kind: "cross", layer: 2, head: 0 }, () => t("tour.cross_step.text")),
  { at: "#result .al-ladder-panel", view: "who", before: both(closeStep, show("cross"), panel("openContributions")),
    get title() { return t("tour.who.title"); },
    get text() { return t("tour.who.text"); } },
  { at: "#result .al-ladder-panel", view: "ladder", before: panel("openLadder"), get title() { return t("tour.ladder.title"); },
    get text() { return t("tour.ladder.text"); } },
  stepStop("logits-softmax", { kind: "decoder", layer: 0, head: 0, row: 1 }, () => t("tour.logits.text"),
    fixedGuess(() => t("tour.logits.guess"), [t("tour.logits.flatter"), t("tour.logits.peakier")])),
  { at: "#result .al-english", view: "output", before: closeStep, get title() { return t("tour.output.title"); }, guess: sureGuess,
    get text() { return t("tour.output.text"); } },
  { at: "#result .al-ladder-panel", view: "code", before: panel("openCode"), get title() { return t("tour.code.title"); },
    get text() { return t("tour.code.text"); } },
  { at: "#view-step", view: "step", before: open("step"), get title() { return t("tour.step.title"); },
    get text() { return t("tour.step.text"); } },
  { at: "#view-step", view: "why", before: open("step"), get title() { return t("tour.why.title"); },
    get text() { return t("tour.why.text"); } },
  { at: "#view-headlab", view: "headlab", before: open("headlab"), get title() { return t("tour.headlab.title"); },
    get text() { return t("tour.headlab.text"); } },
  { at: "#result .al-ladder-panel", view: "patching", before: panel("openPatch"), get title() { return t("tour.patching.title"); },
    get text() { return t("tour.patching.text"); } },
  { at: "#result .al-evidence", view: "evidence", app: true, get title() { return t("tour.evidence.title"); },
    get text() { return t("tour.evidence.text"); } },
  { at: "#view-history", view: "history", before: both(open("history"), travel(0)), get title() { return t("tour.history.title"); },
    get text() { return t("tour.history.text"); } },
  { at: "#view-history", view: "history", before: both(open("history"), travel(-1)),
    get title() { return t("tour.history_after.title"); }, get text() { return t("tour.history_after.text"); } },
  { at: "#view-copylab", view: "copylab", before: open("copylab"), get title() { return t("tour.copylab.title"); },
    get text() { return t("tour.copylab.text", { seconds: onSite() ? TIME_LIMIT_S : COPYLAB_SECONDS }); } },
  { at: "#view-lab", view: "lab", before: open("lab"), get title() { return t("tour.lab.title"); },
    get text() { return t("tour.lab.text"); } },
];
// The static site has no training data to show evidence from: its walk leaves that stop out.
const ALL_STOPS = STOPS.splice(0, STOPS.length);
STOPS.push(...ALL_STOPS.filter((s) => !(/** @type {any} */ (s).app && onSite())));
export const walk = () => STOPS.map((s) => ({ title: s.title, view: s.view, guess: !!s.guess,
  concept: /** @type {any} */ (s).concept || null }));

class Tour {
  constructor() {
    this.box = el("div", "al-tour");
    this.box.setAttribute("role", "dialog");
    this.box.setAttribute("aria-label", t("tour.label"));
    this.title = this.box.appendChild(el("h3", "al-tour-title"));
    this.guess = this.box.appendChild(el("div", "al-tour-guess"));
    this.text = this.box.appendChild(el("p", "al-tour-text"));
    this.score = { right: 0, asked: 0 };
    const nav = this.box.appendChild(el("div", "al-tour-nav"));
    this.prev = nav.appendChild(el("button", "al-tour-button", t("tour.back")));
    this.next = nav.appendChild(el("button", "al-tour-button al-tour-next", t("tour.next")));
    this.close = nav.appendChild(el("button", "al-tour-button", t("tour.close")));
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
    this.box.tabIndex = -1; // the card takes the focus: a screen reader reads it, Tab reaches its buttons first
    this.box.focus({ preventScroll: true });
  }

  go(i) {
    this.i = i = Math.max(0, Math.min(STOPS.length - 1, i));
    const stop = STOPS[i];
    if (stop.before) stop.before();
    document.querySelectorAll(".al-tour-spot").forEach((n) => n.classList.remove("al-tour-spot"));
    const target = $(stop.at);
    // on a phone the part goes to the top of the screen, clear of the card at the bottom (tour.css)
    const phone = typeof matchMedia === "function" && matchMedia("(max-width: 480px)").matches;
    this.box.classList.toggle("al-tour-phone", phone);
    if (target) { target.classList.add("al-tour-spot"); target.scrollIntoView({ block: phone ? "start" : "center" }); }
    this.title.textContent = t("tour.numbered", { n: i + 1, title: stop.title });
    this.text.textContent = stop.text;
    this.ask(stop);
    this.prev.disabled = i === 0;
    this.next.textContent = i === STOPS.length - 1 ? t("tour.done") : t("tour.next");
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
        const score = this.score;
        this.guess.append(el("div", "al-tour-score", right ? t("tour.guess_right", { right: score.right, asked: score.asked })
          : t("tour.guess_wrong", { answer: g.answer, right: score.right, asked: score.asked })));
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
    if (b) b.textContent = stop == null ? t("tour.take", { stops: STOPS.length }) :
      t("tour.resume", { stop: stop + 1, stops: STOPS.length });
  }

  /** `finished`: the last stop's Done, not Esc or Close. */
  end(finished) {
    document.querySelectorAll(".al-tour-hidden").forEach((n) => n.classList.remove("al-tour-hidden"));
    closeStep(); // a step the walk opened closes again
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
  const b = /** @type {HTMLElement | null} */ ($("#page-header .al-tour-start"));
  if (b && !b.dataset.bound) {
    b.dataset.bound = "true";
    b.addEventListener("click", () => startTour());
    b.textContent = left ? t("tour.resume", { stop: left.stop + 1, stops: STOPS.length })
      : t("tour.take", { stops: STOPS.length });
  } else if (!b && Date.now() - since < 60000) setTimeout(() => bind(since), 100);
})(Date.now());
