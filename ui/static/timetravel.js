// @ts-check
/* Attention Lens, the time-travel view: a slider over the snapshots of a training run. Each
   snapshot's explanation of the user's sentence arrives from the server (streamed, one snapshot
   at a time), or on the static site from the page's model when the slider first shows it; moving the slider shows another one at once with the shared Viewer, and marks
   it on the val BLEU curve and on the sharpness chart (mean entropy of cross-attention rows). */
import { el, svg } from "./draw.js";
import { answerText, fixed, t } from "./i18n.js";
import { unfamiliarNotice } from "./result.js";
import { Viewer, themeOf } from "./viewer.js";
import { register } from "./store.js";

const WORD_PIECES = 6; // a "word" of more pieces than this is no word: the snapshot's English is pieces strung on

const LAYER_COLOURS = ["#2563eb", "#e4580b", "#16a34a", "#9333ea", "#db2777", "#0891b2"];

/** A small line chart over the snapshots (evenly spaced: steps are log-spaced). Lines are
    [{name, colour, values (null = unknown), dashed}]; a click on a column picks that snapshot. */
function lineChart(box, opts) {
  const W = 320, H = 160, L = 40, R = 10, T = 34, B = 30, n = opts.steps.length;
  const root = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "al-h-chart", role: "img", "aria-label": opts.title });
  const all = opts.lines.flatMap((l) => l.values).filter((v) => v !== null && v !== undefined);
  const lo = opts.min !== undefined ? opts.min : Math.min(...all, 0);
  const hi = Math.max(...all, lo + 1e-6) * 1.05;
  const x = (i) => L + (n > 1 ? (i / (n - 1)) * (W - L - R) : (W - L - R) / 2);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  root.append(svg("text", { x: 4, y: 13, class: "al-h-title" }, opts.title));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "al-h-grid" }));
    root.append(svg("text", { x: L - 4, y: y(v) + 3, class: "al-h-tick", "text-anchor": "end" }, fixed(v, opts.digits)));
  }
  const every = Math.max(1, Math.ceil(n / 6));
  opts.steps.forEach((s, i) => {
    if (i % every === 0 || i === n - 1) root.append(svg("text", { x: x(i), y: H - B + 13, class: "al-h-tick",
      "text-anchor": i === n - 1 && n > 1 ? "end" : "middle" }, String(s)));  // the last stays inside
  });
  root.append(svg("text", { x: (L + W - R) / 2, y: H - 3, class: "al-h-tick", "text-anchor": "middle" }, t("timetravel.training_step")));
  root.append(svg("line", { x1: x(opts.current), x2: x(opts.current), y1: T - 4, y2: H - B, class: "al-h-now" }));
  for (const line of opts.lines) {
    const pts = line.values.map((v, i) => (v === null || v === undefined ? null : [x(i), y(v)])).filter(Boolean);
    if (pts.length > 1) root.append(svg("polyline", { points: pts.map((p) => p.join(",")).join(" "), fill: "none",
      stroke: line.colour, "stroke-width": 2, "stroke-dasharray": line.dashed ? "4 3" : "" }));
    line.values.forEach((v, i) => {
      if (v === null || v === undefined || line.dashed) return;
      root.append(svg("circle", { cx: x(i), cy: y(v), r: i === opts.current ? 5 : 3, fill: line.colour,
        class: i === opts.current ? "al-h-dot al-h-dot-now" : "al-h-dot" }));
    });
  }
  opts.lines.filter((l) => l.name).forEach((line, k) => {
    const lx = L + 6 + k * 62;
    root.append(svg("line", { x1: lx, x2: lx + 12, y1: T - 13, y2: T - 13, stroke: line.colour, "stroke-width": 2,
      "stroke-dasharray": line.dashed ? "4 3" : "" }));
    root.append(svg("text", { x: lx + 15, y: T - 10, class: "al-h-tick" }, line.name));
  });
  // Clicking anywhere in a snapshot's column picks it.
  opts.steps.forEach((s, i) => {
    const half = n > 1 ? (W - L - R) / (n - 1) / 2 : W / 2;
    const hit = svg("rect", { x: x(i) - half, y: T - 4, width: 2 * half, height: H - B - T + 4, class: "al-h-hit" });
    hit.append(svg("title", {}, t("timetravel.pick_step", { step: s })));
    hit.addEventListener("click", () => opts.onPick(i));
    root.append(hit);
  });
  box.replaceChildren(root);
}

export class History {
  constructor(element) {
    this.root = el("div", "al-history al-empty");
    element.appendChild(this.root);
    this.message = el("div", "al-h-message");
    this.bar = el("div", "al-h-bar");
    this.slider = el("input", "al-h-slider");
    Object.assign(this.slider, { type: "range", min: 0, max: 0, step: 1, value: 0 });
    this.slider.setAttribute("aria-label", t("timetravel.slider"));
    this.slider.addEventListener("input", () => this.pick(+this.slider.value));
    this.label = el("div", "al-h-label");
    this.bar.append(el("span", "al-group-label", t("timetravel.snapshot")), this.slider, this.label);
    this.english = el("div", "al-h-english");
    this.english.setAttribute("aria-label", t("timetravel.english_label"));
    this.charts = el("div", "al-h-charts");
    this.bleuBox = el("div", "al-h-chartbox");
    this.sharpBox = el("div", "al-h-chartbox");
    this.sharpNote = el("div", "al-h-note");
    this.charts.append(this.bleuBox, this.sharpBox, this.sharpNote);
    this.viewerBox = el("div", "al-h-viewer");
    this.notice = el("div", "al-notice al-h-notice"); // the trained model's view of the sentence (result.js)
    this.notice.hidden = true;
    this.piecesNote = el("div", "al-h-note al-h-pieces", t("timetravel.pieces_note"));
    this.piecesNote.hidden = true;
    this.root.append(this.message, this.notice, this.bar, this.english, this.charts, this.piecesNote, this.viewerBox);
    this.viewer = null; // built with the first snapshot read: until then the page holds one viewer
    this.data = null;
    this.current = 0;
    /** @type {((i: number) => void) | null} asked for snapshot i when the slider lands on one not read yet (the
        static site reads each when first shown: travel.js); the app's server streams them all */
    this.want = null;
  }

  show(x) {
    this.root.dataset.shown = x && x.id ? x.id : "";
    const snaps = (x && x.snapshots) || [];
    const fresh = !this.data || !x.text || this.data.text !== x.text || this.data.snapshots.length !== snaps.length;
    this.data = x;
    this.message.textContent = answerText(x) || answerText(x, "message") || answerText(x, "note") || "";
    this.message.classList.toggle("al-h-error", !!x.error);
    unfamiliarNotice(this.notice, x.done ? x : null);
    this.root.classList.toggle("al-h-none", !snaps.length);
    if (!snaps.length) { this.root.classList.add("al-empty"); return; }
    this.slider.max = String(snaps.length - 1);
    if (fresh && this.current >= snaps.length) this.current = snaps.length - 1;
    if (!x.text && !this.touched) this.current = snaps.length - 1; // before any sentence: the trained model
    this.pick(this.current);
  }

  /** Show snapshot i: slider, label, translation, charts and maps. Nothing waits for the server. */
  pick(i) {
    const t0 = performance.now(), x = this.data, snaps = x.snapshots, s = snaps[i];
    this.current = i; this.touched = this.touched || !!x.text;
    this.slider.value = i;
    let label = t("timetravel.step", { step: s.step, index: i + 1, count: snaps.length });
    // a run that continued another says which part
    if (s.phase) label = t("timetravel.and", { before: label, after: t("timetravel.phase", { phase: s.phase }) });
    if (s.val_bleu !== null && s.val_bleu !== undefined) {
      label = t("timetravel.and", { before: label, after: t("timetravel.bleu", { bleu: fixed(s.val_bleu, 1) }) });
    }
    this.label.textContent = label;
    const ready = !!s.explanation;
    this.root.classList.toggle("al-empty", !ready);
    this.root.classList.toggle("al-h-waiting", !!x.text && !ready && !x.error);
    if (!ready && x.text && !x.error && this.want) this.want(i);
    this.english.textContent = ready ? (s.translation || t("timetravel.wrote_nothing"))
      : x.text && !x.error ? t("timetravel.reading") : t("timetravel.press_travel");
    this.drawCharts();
    if (ready) {
      this.viewerBox.classList.remove("al-empty");
      if (!this.viewer) {
        this.viewer = new Viewer(this.viewerBox, { sentencePicker: true });
        // One colour scale for every snapshot: an even spread stays dark, a sharp focus turns bright.
        this.viewer.state.scale = "fixed";
      }
      this.viewer.show(s.explanation);
      this.levelFor(s.explanation);
    } else {
      this.viewerBox.classList.add("al-empty");
    }
    this.root.dataset.step = s.step;
    this.root.dataset.ready = String(ready);
    this.lastPickMs = performance.now() - t0;
  }

  /** A snapshot that writes no real words (one endless "word" of pieces, early in training) is drawn piece by
      piece: the whole near-even matrix, not one merged row; the words come back with a snapshot that writes them. */
  levelFor(explanation) {
    const v = /** @type {any} */ (this.viewer), sentence = explanation.sentences[v.state.sentence] || explanation.sentences[0];
    const endless = !!sentence && sentence.words.tgt.some(([, pieces]) => pieces.length > WORD_PIECES);
    if (endless && v.state.level === "words") { v.choose("level", "pieces"); this.autoPieces = true; }
    else if (!endless && this.autoPieces && v.state.level === "pieces") { v.choose("level", "words"); this.autoPieces = false; }
    this.piecesNote.hidden = !endless;
  }

  drawCharts() {
    const snaps = this.data.snapshots, steps = snaps.map((s) => s.step), pick = (i) => this.pick(i);
    const theme = themeOf(this.root);
    lineChart(this.bleuBox, { title: t("timetravel.bleu_chart"), steps: steps, current: this.current, digits: 0,
      min: 0, onPick: pick, lines: [{ colour: theme.accent, values: snaps.map((s) => s.val_bleu) }] });
    const layers = Math.max(0, ...snaps.map((s) => (s.sharpness || []).length));
    if (!layers) {
      this.sharpBox.replaceChildren(el("div", "al-h-note", t("timetravel.sharpness_waits")));
      this.sharpNote.textContent = "";
      return;
    }
    /** @type {{name: string, colour: string, values: (number | null)[], dashed?: boolean}[]} */
    const lines = [...Array(layers).keys()].map((l) => ({ name: t("timetravel.layer", { n: l + 1 }), colour: LAYER_COLOURS[l % 6],
      values: snaps.map((s) => (s.sharpness ? s.sharpness[l] : null)) }));
    lines.push({ name: t("timetravel.even"), colour: theme.muted, dashed: true,
      values: snaps.map((s) => (s.sharpness ? s.uniform : null)) });
    lineChart(this.sharpBox, { title: t("timetravel.spread_chart"), steps: steps, current: this.current,
      digits: 1, min: 0, onPick: pick, lines: lines });
    const s = snaps[this.current];
    this.sharpNote.textContent = s.sharpness ? t("timetravel.spread", { step: s.step,
      pieces: s.sharpness.map((b) => fixed(Math.pow(2, b), 1)).join(" / "), layers: s.sharpness.map((_, l) => l + 1).join(" / "),
      even: fixed(Math.pow(2, s.uniform), 1) }) : "";
  }
}

/** js_on_load of the time-travel view's gr.HTML; `server.want(i)`, where given, reads snapshot i when first shown. */
export function mountHistory(element, props, watch, server) {
  const view = new History(element.querySelector(".al-mount") || element);
  if (server && server.want) view.want = (i) => server.want(i);
  register("history", view); // tests and benchmarks find it: attentionLens.view("history")
  if (props.value) view.show(props.value);
  watch("value", () => props.value && view.show(props.value));
  new MutationObserver(() => view.data && view.data.snapshots && view.pick(view.current))
    .observe(document.body, { attributes: true, attributeFilter: ["class"] });
}
