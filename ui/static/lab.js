// @ts-check
/* Attention Lens, the lab: the paper's Transformer built differently on purpose. An experiment (experiments.json,
   one for each question learners ask most) trains two tiny models side by side from the same weights on the same
   batches, A as the paper has it and B with one thing changed, each in a worker (labworker.js, trainer.js) so that
   the page stays responsive. The card asks for a prediction first; then both runs draw live (the loss overlaid, the
   gradient norm, the accuracy with the teacher's pieces and with the model's own); at the end both models' outputs
   and cross-attention, what the runs showed against the prediction, the explanation, and the one line of model code
   B changes. experiments() (the door's attentionLens.experiments) runs them from a script. */
import { el, svg, withCode } from "./draw.js";
import { fixed, percent, t } from "./i18n.js";
import { register } from "./store.js";
import { DEFAULTS, labSettings, train } from "./trainer.js";

const TABLE_URL = new URL("./experiments.json", import.meta.url);
const WORKER_URL = new URL("./labworker.js", import.meta.url);
const COLORS = { a: "#4338ca", b: "#d97706" };
let table = null;

/** The experiments' table (experiments.json), read once. */
export async function experimentTable() {
  if (!table) table = fetch(TABLE_URL).then((r) => { if (!r.ok) throw new Error(`experiments.json: HTTP ${r.status}`); return r.json(); });
  return table;
}

/** A's and B's settings of an experiment's pair (lab/experiments.Experiment.settings), with `overrides` on both. */
export function pairSettings(experiment, pairId, overrides = {}) {
  const pair = experiment.pairs.find((p) => p.id === pairId) || experiment.pairs[0];
  const common = { ...experiment.base, ...overrides };
  return { pair: pair.id, a: labSettings({ ...common, ...pair.a }), b: labSettings({ ...common, ...pair.b }) };
}

/** Which run ended better on `metric` (lab/experiments.better): a lower loss, a higher accuracy. */
export function better(metric, a, b) {
  if (a === b) return "neither";
  return metric === "loss" || metric === "early" ? (a < b ? "a" : "b") : a > b ? "a" : "b";
}

/** Each experiment's words, every key written out (tests/js/messages.test.js reads them): its title, the question it
    answers, the prediction it asks for, the explanation, and what B changes in each pair. */
const WORDS = {
  "layernorm": () => ({ title: t("lab.layernorm.title"), question: t("lab.layernorm.question"), predict: t("lab.layernorm.predict"),
    explain: t("lab.layernorm.explain"), pairs: { "pre": t("lab.layernorm.pair.pre"), "none": t("lab.layernorm.pair.none"), "pre-warmup": t("lab.layernorm.pair.pre_warmup") } }),
  "causal-mask": () => ({ title: t("lab.causal_mask.title"), question: t("lab.causal_mask.question"), predict: t("lab.causal_mask.predict"),
    explain: t("lab.causal_mask.explain"), pairs: { "no-mask": t("lab.causal_mask.pair.no_mask") } }),
  "scale": () => ({ title: t("lab.scale.title"), question: t("lab.scale.question"), predict: t("lab.scale.predict"),
    explain: t("lab.scale.explain"), pairs: { "dk64": t("lab.scale.pair.dk64"), "dk8": t("lab.scale.pair.dk8") } }),
  "positions": () => ({ title: t("lab.positions.title"), question: t("lab.positions.question"), predict: t("lab.positions.predict"),
    explain: t("lab.positions.explain"), pairs: { "none-reverse": t("lab.positions.pair.none_reverse"), "learned-reverse": t("lab.positions.pair.learned_reverse"), "none-copy": t("lab.positions.pair.none_copy") } }),
  "embedding-scale": () => ({ title: t("lab.embedding_scale.title"), question: t("lab.embedding_scale.question"), predict: t("lab.embedding_scale.predict"),
    explain: t("lab.embedding_scale.explain"), pairs: { "no-scale": t("lab.embedding_scale.pair.no_scale"), "untied": t("lab.embedding_scale.pair.untied") } }),
  "heads": () => ({ title: t("lab.heads.title"), question: t("lab.heads.question"), predict: t("lab.heads.predict"),
    explain: t("lab.heads.explain"), pairs: { "view": t("lab.heads.pair.view"), "one-head": t("lab.heads.pair.one_head"), "two-heads": t("lab.heads.pair.two_heads"), "eight-heads": t("lab.heads.pair.eight_heads") } }),
  "residual": () => ({ title: t("lab.residual.title"), question: t("lab.residual.question"), predict: t("lab.residual.predict"),
    explain: t("lab.residual.explain"), pairs: { "two-layers": t("lab.residual.pair.two_layers"), "six-layers": t("lab.residual.pair.six_layers") } }),
  "cross-attention-wiring": () => ({ title: t("lab.cross_attention_wiring.title"), question: t("lab.cross_attention_wiring.question"), predict: t("lab.cross_attention_wiring.predict"),
    explain: t("lab.cross_attention_wiring.explain"), pairs: { "swapped": t("lab.cross_attention_wiring.pair.swapped") } }),
  "label-smoothing": () => ({ title: t("lab.label_smoothing.title"), question: t("lab.label_smoothing.question"), predict: t("lab.label_smoothing.predict"),
    explain: t("lab.label_smoothing.explain"), pairs: { "none": t("lab.label_smoothing.pair.none") } }),
  "learning-rate": () => ({ title: t("lab.learning_rate.title"), question: t("lab.learning_rate.question"), predict: t("lab.learning_rate.predict"),
    explain: t("lab.learning_rate.explain"), pairs: { "constant-high": t("lab.learning_rate.pair.constant_high") } }),
};
const GUESSES = { a: () => t("lab.guess_a"), b: () => t("lab.guess_b"), neither: () => t("lab.guess_neither") };
const METRICS = { loss: () => t("lab.metric_loss"), early: () => t("lab.metric_early"), forced: () => t("lab.metric_forced"),
  greedy: () => t("lab.metric_greedy") };
/** The words of experiment `id` (its pairs' by their ids). */
export const words = (id) => WORDS[id]();
const plain = (text) => text.replace(/`/g, ""); // a message's code marks, where only text can go (an option)
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

/** The final figures of a run's last report (lab/train.LabRun.final): the mean of its last three losses, the mean
    loss of the first third of the run (how fast it fell), the last accuracies. */
export function finalOf(report) {
  const last = report.accuracy[report.accuracy.length - 1] || [0, 0, 0], third = Math.floor(report.total / 3);
  if (report.diverged_at) return { loss: Infinity, early: Infinity, forced: last[1], greedy: last[2] }; // diverged: worst
  return { loss: mean(report.losses.slice(-3).map((x) => x[1])), early: mean(report.losses.filter((x) => x[0] <= third).map((x) => x[1])),
    forced: last[1], greedy: last[2] };
}

/** The direction the text states for a pair: its own where it has one, else the experiment's. */
export const expected = (experiment, pairId) => (experiment.pairs.find((p) => p.id === pairId) || {}).expect || experiment.expect;

/** One run in a worker (in the page itself where workers are missing); `onReport` sees every report; resolves to
    the last. `signal.stopped` set true ends it. */
function runOne(settings, onReport, signal) {
  if (typeof Worker === "undefined") return train(settings, onReport, () => signal.stopped);
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { type: "module" });
    signal.stops.push(() => { worker.terminate(); resolve(null); });
    worker.onmessage = (e) => {
      if (e.data.report) onReport(e.data.report);
      if (e.data.done) { worker.terminate(); resolve(e.data.done); }
      if (e.data.error) { worker.terminate(); reject(new Error(e.data.error)); }
    };
    worker.onerror = (e) => { worker.terminate(); reject(new Error(e.message || "the worker failed")); };
    worker.postMessage({ settings });
  });
}

/** A and B of `experiment`'s pair side by side; `onReport(which, report)` as they go. Resolves to {a, b} (the
    last reports) or null when stopped. */
export async function runPair(experiment, pairId, overrides, onReport, signal = { stopped: false, stops: [] }) {
  const { a, b } = pairSettings(experiment, pairId, overrides);
  const [ra, rb] = await Promise.all([runOne(a, (r) => onReport("a", r), signal), runOne(b, (r) => onReport("b", r), signal)]);
  return ra && rb ? { a: ra, b: rb } : null;
}

/** Curves of A and B against the step (`key`: "losses" or "norms"), the planned last step as the x range; `floor`
    a dashed line (the loss a label-smoothed run cannot go below). */
function chart(title, runs, key, total, floor = 0) {
  const W = 340, H = 168, L = 36, R = 18, T = 30, B = 26, series = ["a", "b"].filter((k) => runs[k]);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "al-lab-chart", role: "img", "aria-label": title });
  const values = series.flatMap((k) => runs[k][key].map((p) => p[1])).filter(Number.isFinite);
  const hi = Math.max(floor, ...values, 1e-9) * 1.05;
  const x = (s) => L + (s / Math.max(1, total)) * (W - L - R), y = (v) => T + (1 - Math.min(v, hi) / hi) * (H - T - B);
  root.append(svg("text", { x: 4, y: 13, class: "al-h-title" }, title));
  for (const v of [0, hi / 2, hi]) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "al-h-grid" }));
    root.append(svg("text", { x: L - 4, y: y(v) + 3, class: "al-h-tick", "text-anchor": "end" }, fixed(v, hi < 3 ? 2 : 1)));
  }
  for (const s of [0, total]) root.append(svg("text", { x: x(s), y: H - B + 13, class: "al-h-tick", "text-anchor": "middle" }, String(s)));
  if (floor > 0) root.append(svg("line", { x1: L, x2: W - R, y1: y(floor), y2: y(floor), stroke: "currentColor", "stroke-dasharray": "4 3", class: "al-lab-floor" }));
  for (const k of series) {
    const points = runs[k][key].filter((p) => Number.isFinite(p[1])).map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    root.append(svg("polyline", { points, fill: "none", stroke: COLORS[k], "stroke-width": 1.8, "stroke-dasharray": k === "b" ? "5 2" : "none", "data-run": k }));
  }
  return root;
}

/** The lowest loss label smoothing ε allows over V symbols: the entropy of its target (copylab.js's lossFloor). */
export function lossFloor(smoothing, vocab) {
  if (!(smoothing > 0)) return 0;
  const right = 1 - smoothing + smoothing / vocab, other = smoothing / vocab;
  return -right * Math.log(right) - (vocab - 1) * other * Math.log(other);
}

/** The two runs' accuracy so far: with the teacher's pieces and with the model's own. */
function accuracyTable(runs) {
  const table = el("table", "al-lab-accuracy"), head = el("tr");
  for (const h of ["", t("lab.forced"), t("lab.greedy"), t("lab.final_loss")]) head.append(el("th", null, h));
  table.append(head);
  for (const k of ["a", "b"]) {
    if (!runs[k]) continue;
    const f = finalOf(runs[k]), row = el("tr");
    row.append(el("th", `al-lab-run-${k}`, k.toUpperCase()), el("td", null, percent(f.forced)), el("td", null, percent(f.greedy)), el("td", null, fixed(f.loss, 3)));
    table.append(row);
  }
  return table;
}

/** Input, expected, and what A and B wrote on the shown sequences; a wrong letter is marked. */
function outputsTable(runs) {
  const table = el("table", "al-lab-outputs"), head = el("tr");
  for (const h of [t("lab.input"), t("lab.expected"), t("lab.wrote", { run: "A" }), t("lab.wrote", { run: "B" })]) head.append(el("th", null, h));
  table.append(head);
  runs.a.last.examples.forEach(([input, expected], i) => {
    const row = el("tr");
    row.append(el("td", "al-lab-seq", input), el("td", "al-lab-seq", expected));
    for (const k of ["a", "b"]) {
      const cell = el("td", "al-lab-seq"), want = expected.split(" "), got = runs[k].last.examples[i][2].split(" ").filter(Boolean);
      got.forEach((letter, j) => cell.append(el("span", letter === want[j] ? "" : "al-lab-wrong", letter), " "));
      if (!got.length) cell.append(el("span", "al-lab-wrong", t("lab.nothing")));
      row.append(cell);
    }
    table.append(row);
  });
  return table;
}

/** One run's cross-attention on the first shown sequence, the last decoder layer, heads averaged: rows are the
    pieces written, columns the source's (a row that looks at its own position draws the diagonal of a copy; of a
    reversal, the other diagonal). */
function crossMap(look, which) {
  const w = look.cross[look.cross.length - 1], H = look.heads, T = look.tgt.length, M = w.length / (H * T);
  const cell = 14, left = 34, top = 30, root = svg("svg", { viewBox: `0 0 ${left + M * cell + 4} ${top + T * cell + 4}`,
    class: "al-lab-map", role: "img", "aria-label": t("lab.map_label", { run: which.toUpperCase() }) });
  root.append(svg("text", { x: 2, y: 12, class: "al-h-title" }, which.toUpperCase()));
  // the paper: a row for each piece written, a column for each source piece; swapped: a row for each of the first T
  // source pieces (the queries), a column for each piece of the decoder's input (the keys)
  const paper = look.wiring === "paper", rows = paper ? look.tgt : look.src.slice(0, T), cols = paper ? look.src : look.tgtIn;
  cols.forEach((c, j) => root.append(svg("text", { x: left + j * cell + cell / 2, y: top - 4, class: "al-h-tick", "text-anchor": "middle" }, c.replace(/<\/?s>/, "·"))));
  rows.forEach((r, i) => {
    root.append(svg("text", { x: left - 4, y: top + i * cell + cell - 3, class: "al-h-tick", "text-anchor": "end" }, r.replace(/<\/?s>/, "·")));
    for (let j = 0; j < M; j++) {
      let v = 0;
      for (let h = 0; h < H; h++) v += w[(h * T + i) * M + j] / H;
      root.append(svg("rect", { x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1, fill: COLORS[which], "fill-opacity": v.toFixed(3) }));
    }
  });
  return root;
}

/** The code line B changes, as the Code view shows a line: the file and line, the paper's line, B's line. */
function codeDiff(code, line) {
  const box = el("div", "al-lab-code");
  box.append(el("p", "al-lab-code-where", t("lab.code_where", { file: code.file, line: line ?? "?" })));
  const pre = el("pre", "al-lab-diff");
  pre.append(el("span", "al-lab-del", "- " + code.paper), "\n", el("span", "al-lab-add", "+ " + code.changed));
  box.append(pre);
  return box;
}

/** The view: the picker, the card (question, A and B, a prediction), then the runs live and the verdict. */
export class Lab {
  constructor(root) {
    this.root = root;
    this.id = null; this.pair = null; this.guess = null; this.runs = {}; this.result = null; this.signal = null; this.table = null;
    root.classList.add("al-lab");
    this.picker = el("div", "al-lab-picker");
    this.card = el("div", "al-lab-card");
    this.live = el("div", "al-lab-live");
    this.end = el("div", "al-lab-end");
    root.replaceChildren(el("p", "al-view-intro", t("lab.lead")), this.picker, this.card, this.live, this.end);
  }

  async start(id = null) {
    try {
      this.table = await experimentTable();
    } catch (err) {
      table = null; // the next start asks again
      this.card.replaceChildren(el("p", "al-lab-status", t("lab.error", { error: String((err && err.message) || err) })));
      return;
    }
    const select = el("select", "al-lab-experiment");
    select.setAttribute("aria-label", t("lab.pick"));
    for (const name of Object.keys(this.table)) {
      const o = /** @type {HTMLOptionElement} */ (el("option", null, words(name).title));
      o.value = name;
      select.append(o);
    }
    select.addEventListener("change", () => this.choose(select.value));
    this.picker.replaceChildren(el("label", "al-lab-label", t("lab.pick")), select);
    this.select = select;
    this.choose(id && this.table[id] ? id : Object.keys(this.table)[0]);
  }

  /** Show experiment `id`'s card (and `pair`, the first when null); any run going on stops. */
  choose(id, pair = null) {
    if (!this.table[id]) throw new Error(`no experiment named ${id}: one of ${Object.keys(this.table).join(", ")}`);
    this.stop();
    const e = this.table[id];
    this.id = id; this.pair = pair && e.pairs.some((p) => p.id === pair) ? pair : e.pairs[0].id; this.guess = null;
    this.runs = {}; this.result = null;
    /** @type {HTMLSelectElement} */ (this.select).value = id;
    this.live.replaceChildren(); this.end.replaceChildren();
    this.drawCard();
  }

  drawCard() {
    const e = this.table[this.id], card = this.card;
    card.replaceChildren(el("h3", "al-lab-question", words(this.id).question));
    const pairs = el("select", "al-lab-pair");
    pairs.setAttribute("aria-label", t("lab.pair"));
    for (const p of e.pairs) {
      const o = /** @type {HTMLOptionElement} */ (el("option", null, plain(words(this.id).pairs[p.id])));
      o.value = p.id;
      pairs.append(o);
    }
    pairs.value = this.pair;
    pairs.addEventListener("change", () => this.choose(this.id, pairs.value));
    const runs = el("div", "al-lab-ab");
    const b = el("p", "al-lab-run-b");
    b.append(...withCode(t("lab.b", { change: words(this.id).pairs[this.pair] })));
    runs.append(el("p", "al-lab-run-a", t("lab.a")), b);
    card.append(el("label", "al-lab-label", t("lab.pair")), pairs, runs, el("p", "al-lab-predict", words(this.id).predict));
    const guesses = el("div", "al-lab-guesses");
    for (const g of ["a", "b", "neither"]) {
      const b = /** @type {HTMLButtonElement} */ (el("button", "al-lab-guess", GUESSES[g]()));
      b.type = "button"; b.dataset.guess = g;
      b.addEventListener("click", () => this.predict(g));
      guesses.append(b);
    }
    this.go = /** @type {HTMLButtonElement} */ (el("button", "al-lab-go", t("lab.train")));
    this.go.type = "button"; this.go.disabled = true;
    this.go.addEventListener("click", () => this.run({ steps: Number(this.steps.value) }).catch((err) => this.fail(err)));
    this.halt = /** @type {HTMLButtonElement} */ (el("button", "al-lab-stop", t("lab.stop")));
    this.halt.type = "button"; this.halt.hidden = true;
    this.halt.addEventListener("click", () => this.stop());
    this.steps = /** @type {HTMLInputElement} */ (el("input", "al-lab-steps"));
    Object.assign(this.steps, { type: "number", min: "10", max: "1000", step: "10", value: String({ ...DEFAULTS, ...e.base }.steps) });
    const steps = el("label", "al-lab-label", t("lab.steps") + " ");
    steps.append(this.steps);
    card.append(guesses, el("div", "al-lab-actions"));
    /** @type {HTMLElement} */ (card.lastChild).append(steps, this.go, this.halt, el("span", "al-lab-status", t("lab.predict_first")));
  }

  /** The learner's prediction: marked, and the Train button opens. */
  predict(guess) {
    this.guess = guess;
    for (const b of this.card.querySelectorAll(".al-lab-guess")) b.setAttribute("aria-pressed", String(/** @type {HTMLElement} */ (b).dataset.guess === guess));
    this.go.disabled = false;
    this.status(t("lab.ready"));
  }

  status(text) { const s = this.card.querySelector(".al-lab-status"); if (s) s.textContent = text; }

  stop() {
    if (this.signal) { this.signal.stopped = true; this.signal.stops.forEach((f) => f()); this.signal = null; }
    if (this.halt) this.halt.hidden = true;
    if (this.go) this.go.disabled = !this.guess;
  }

  fail(err) {
    this.stop();
    this.status(t("lab.error", { error: String((err && err.message) || err).slice(0, 300) }));
  }

  /** Train A and B side by side (overrides: settings for both, e.g. fewer steps); resolves to {a, b} or null. */
  async run(overrides = {}) {
    this.stop();
    const e = this.table[this.id], signal = { stopped: false, stops: [] }, total = { ...DEFAULTS, ...e.base, ...overrides }.steps;
    this.signal = signal; this.runs = {}; this.result = null; this.end.replaceChildren();
    this.go.disabled = true; this.halt.hidden = false;
    this.status(t("lab.starting"));
    const started = performance.now();
    const result = await runPair(e, this.pair, overrides, (which, report) => {
      if (signal !== this.signal) return;
      this.runs[which] = report;
      this.drawLive(total, e);
      const step = Math.min(...["a", "b"].map((k) => (this.runs[k] ? this.runs[k].step : 0)));
      this.status(t("lab.progress", { step, total, elapsed: fixed((performance.now() - started) / 1000, 1) }));
    }, signal);
    if (signal !== this.signal || !result) return null;
    this.signal = null; this.halt.hidden = true; this.go.disabled = false;
    this.result = result;
    this.drawEnd(e, result, (performance.now() - started) / 1000);
    return result;
  }

  drawLive(total, e) {
    const floor = lossFloor({ ...DEFAULTS, ...e.base }.smoothing, 24);
    const legend = el("p", "al-lab-legend");
    legend.append(el("span", "al-lab-run-a", "A ― " + t("lab.a_short")), " ", el("span", "al-lab-run-b", "B - - " + plain(words(this.id).pairs[this.pair])));
    const charts = el("div", "al-lab-charts");
    charts.append(chart(t("lab.loss_chart"), this.runs, "losses", total, floor), chart(t("lab.norm_chart"), this.runs, "norms", total));
    const notes = ["a", "b"].filter((k) => this.runs[k] && this.runs[k].diverged_at).map((k) => el("p", "al-lab-diverged", t("lab.diverged", { run: k.toUpperCase(), step: this.runs[k].diverged_at })));
    this.live.replaceChildren(legend, charts, accuracyTable(this.runs), ...notes);
  }

  /** What the runs showed, against the prediction; the outputs and maps; the explanation; the line of code. */
  drawEnd(e, result, seconds) {
    const x = expected(e, this.pair), a = finalOf(result.a), b = finalOf(result.b), shown = better(x.metric, a[x.metric], b[x.metric]);
    const metric = METRICS[x.metric](), time = fixed(seconds, 1);
    const verdict = el("p", "al-lab-verdict", shown === "neither" ? t("lab.verdict_same", { metric, seconds: time })
      : t("lab.verdict", { winner: shown.toUpperCase(), metric, seconds: time }));
    const guess = { guess: GUESSES[this.guess || "neither"]() };
    const guessed = el("p", "al-lab-guessed", this.guess === shown ? t("lab.guess_right", guess) : t("lab.guess_wrong", guess));
    const maps = el("div", "al-lab-maps");
    if (result.a.last && result.b.last) maps.append(crossMap(result.a.last, "a"), crossMap(result.b.last, "b"));
    const explain = el("div", "al-lab-explain");
    explain.append(el("h4", null, t("lab.why")), el("p", null, ""));
    /** @type {HTMLElement} */ (explain.lastChild).append(...withCode(words(this.id).explain));
    this.end.replaceChildren(verdict, guessed, el("h4", null, t("lab.outputs")), outputsTable(result),
      el("h4", null, t("lab.maps")), maps, explain, el("h4", null, t("lab.code")), codeDiff(e.code, e.code.line));
    this.status(t("lab.done"));
  }

  /** The view's state for the door: the experiment, the pair, the prediction and, once run, both final figures. */
  state() {
    return { experiment: this.id, pair: this.pair, guess: this.guess, running: !!this.signal,
      result: this.result ? { a: finalOf(this.result.a), b: finalOf(this.result.b) } : null };
  }
}

/** Build the lab in `root` and show experiment `id` (the first when null); the store knows it as "lab". */
export async function mountLab(root, id = null) {
  const lab = new Lab(root);
  register("lab", lab);
  await lab.start(id);
  return lab;
}

/** The app's mount (page.js): the lab in its gr.HTML's element. */
export function mountLabView(element) {
  return mountLab(element.querySelector(".al-mount") || element);
}

/** The door's list (attentionLens.experiments()): {id, title, confusion, variants, run({pair, steps, seed})}, where
    run() trains A and B of that pair in workers and resolves to {pair, a, b}: each run's final figures, curves and
    outputs. Independent of the view. */
export async function experiments() {
  const all = await experimentTable();
  return Object.entries(all).map(([id, e]) => ({
    id, title: words(id).title, confusion: words(id).question, variants: e.pairs.map((p) => p.id),
    expect: Object.fromEntries(e.pairs.map((p) => [p.id, expected(e, p.id)])),
    run: async ({ pair = e.pairs[0].id, ...overrides } = {}) => {
      const r = await runPair(e, pair, overrides, () => {});
      return r && { pair, a: { ...finalOf(r.a), losses: r.a.losses, accuracy: r.a.accuracy, examples: r.a.last.examples },
        b: { ...finalOf(r.b), losses: r.b.losses, accuracy: r.b.accuracy, examples: r.b.last.examples } };
    },
  }));
}
