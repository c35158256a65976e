// @ts-check
/* Attention Lens, the copy-task lab: draws the progress reports of a tiny Transformer learning to
   copy (streamed by ui/copylab.py): the loss curve, the predictions against the expected output,
   and the cross-attention of one example with the shared map drawing (selectMap, drawMatrix,
   drawOverview). */
import { headName, selectMap, shownLayer } from "./core.js";
import { drawMatrix, drawOverview, el, matrixLayout, svg } from "./draw.js";
import { answerText, fixed, t } from "./i18n.js";
import { themeOf } from "./viewer.js";
import { register } from "./store.js";

/** The lowest loss a label-smoothed cross-entropy can reach: the entropy of its target, 1 − ε + ε/V on the right
    symbol and ε/V on each of the V − 1 others (a model exactly as unsure as the smoothing asks). */
export function lossFloor(smoothing, vocab) {
  if (!(smoothing > 0) || !(vocab > 1)) return 0;
  const right = 1 - smoothing + smoothing / vocab, other = smoothing / vocab;
  return -right * Math.log(right) - (vocab - 1) * other * Math.log(other);
}

/** The training loss against the step, with the planned last step as the x range, and the floor as a dashed line. */
function lossChart(box, losses, total, theme, floor = 0) {
  const W = 340, H = 170, L = 36, R = 10, T = 20, B = 28;
  const root = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "al-h-chart al-c-loss", role: "img",
    "aria-label": t("copylab.loss_label") });
  const hi = Math.max(1, ...losses.map((p) => p[1])) * 1.05;
  const x = (s) => L + (s / Math.max(1, total)) * (W - L - R), y = (v) => T + (1 - v / hi) * (H - T - B);
  root.append(svg("text", { x: 4, y: 13, class: "al-h-title" }, t("copylab.loss_chart")));
  for (const v of [0, hi / 2, hi]) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "al-h-grid" }));
    root.append(svg("text", { x: L - 4, y: y(v) + 3, class: "al-h-tick", "text-anchor": "end" }, fixed(v, 1)));
  }
  for (const s of [0, Math.round(total / 2), total]) {
    root.append(svg("text", { x: x(s), y: H - B + 13, class: "al-h-tick", "text-anchor": "middle" }, String(s)));
  }
  root.append(svg("text", { x: (L + W - R) / 2, y: H - 3, class: "al-h-tick", "text-anchor": "middle" }, t("copylab.step_axis")));
  if (losses.length) {
    root.append(svg("polyline", { points: losses.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "),
      fill: "none", stroke: theme.accent, "stroke-width": 1.6 }));
  }
  if (floor > 0) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(floor), y2: y(floor), class: "al-c-floor", stroke: theme.text,
      "stroke-dasharray": "4 3", "stroke-width": 1 }));
    root.append(svg("text", { x: W - R, y: y(floor) - 3, class: "al-h-tick", "text-anchor": "end" },
      t("copylab.floor_tick", { floor: fixed(floor, 2) })));
  }
  box.replaceChildren(root);
}

/** Input, expected and predicted letters; a wrong or missing letter is marked. */
function examplesTable(box, examples) {
  const table = el("table", "al-c-examples");
  const head = el("tr");
  for (const name of [t("copylab.input"), t("copylab.expected"), t("copylab.wrote")]) head.appendChild(el("th", "", name));
  table.appendChild(head);
  for (const [input, expected, predicted] of examples) {
    const row = el("tr");
    row.append(el("td", "al-c-seq", input), el("td", "al-c-seq", expected));
    const cell = el("td", "al-c-seq");
    const want = expected.split(" "), got = predicted ? predicted.split(" ") : [];
    got.forEach((letter, i) => {
      cell.append(el("span", letter === want[i] ? "al-c-ok" : "al-c-bad", letter), " ");
    });
    if (!got.length) cell.append(el("span", "al-c-bad", t("copylab.nothing")));
    row.classList.toggle("al-c-right", predicted === expected);
    row.appendChild(cell);
    table.appendChild(row);
  }
  box.replaceChildren(table);
}

export class CopyLab {
  constructor(element) {
    this.root = el("div", "al-copylab al-empty");
    element.appendChild(this.root);
    this.status = el("div", "al-c-status", t("copylab.start"));
    this.status.setAttribute("aria-live", "polite");
    this.body = el("div", "al-c-body");
    this.lossBox = el("div", "al-h-chartbox");
    this.examplesBox = el("div", "al-c-examplebox");
    this.mapBox = el("div", "al-c-mapbox");
    this.mapTitle = el("div", "al-c-title");
    this.canvas = el("canvas", "al-c-map");
    this.overview = el("canvas", "al-c-overview");
    this.overview.addEventListener("click", (e) => this.pickHead(e));
    this.mapBox.append(this.mapTitle, this.canvas, el("div", "al-c-title", t("copylab.overview")), this.overview);
    this.floorNote = el("p", "al-c-floor-note"); // why the loss stops where it stops, and the accuracy beside it
    const lossColumn = el("div", "al-c-losscolumn");
    lossColumn.append(this.lossBox, this.floorNote);
    this.body.append(lossColumn, this.examplesBox, this.mapBox);
    this.root.append(this.status, this.body);
    this.layer = null; this.head = null; // last layer, mean of heads until the user picks
    this.updates = 0; this.data = null;
  }

  waiting() {
    this.root.classList.add("al-c-waiting");
    this.status.textContent = t("copylab.waiting");
  }

  show(x) {
    this.root.dataset.shown = x.id || "";
    this.root.classList.remove("al-c-waiting");
    if (x.error) { this.status.textContent = answerText(x); this.status.classList.add("al-c-error"); return; }
    this.status.classList.remove("al-c-error");
    if (x.starting) {
      this.updates = 0; this.data = null;
      this.status.textContent = t("copylab.starting", { total: x.total, limit: x.limit });
      return;
    }
    this.updates += 1; this.data = x;
    this.root.classList.remove("al-empty");
    this.root.dataset.updates = String(this.updates);
    this.root.dataset.done = String(!!x.done);
    const first = x.losses[0][1], last = x.losses[x.losses.length - 1][1];
    this.root.dataset.firstLoss = first; this.root.dataset.lastLoss = last;
    const right = Math.round(x.accuracy * x.examples.length);
    const progress = { step: x.step, total: x.total, elapsed: fixed(x.elapsed, 1), limit: x.limit, first: fixed(first, 2),
      last: fixed(last, 2), right, examples: x.examples.length };
    this.status.textContent = !x.done ? t("copylab.progress", progress)
      : x.stopped_by_time ? t("copylab.progress_stopped", progress) : t("copylab.progress_done", progress);
    this.draw();
  }

  draw() {
    const x = this.data, theme = themeOf(this.root);
    if (!x) return;
    const floor = lossFloor(x.label_smoothing, x.vocab_size);
    lossChart(this.lossBox, x.losses, x.total, theme, floor);
    const right = Math.round(x.accuracy * x.examples.length);
    this.floorNote.textContent = floor > 0 ? t("copylab.floor", { floor: fixed(floor, 2), smoothing: x.label_smoothing,
      vocab: x.vocab_size, right, examples: x.examples.length }) : "";
    examplesTable(this.examplesBox, x.examples);
    const m = x.map, layers = m.layers.cross, sentence = m.sentences[0];
    const layer = shownLayer(this.layer, layers);
    const head = this.head === null ? null : Math.min(this.head, m.heads - 1);
    const map = selectMap(m, sentence, "cross", layer, head, "words");
    this.mapTitle.textContent = t("copylab.map_title", { layer: layer + 1, head: headName(head) });
    const width = Math.max(200, this.mapBox.clientWidth - 10);
    const probe = matrixLayout(map, 1);
    const cell = Math.max(14, Math.min(30, Math.floor((width - probe.width) / map.cols)));
    drawMatrix(this.canvas, map, { cell: cell, scale: "fixed", theme: theme, focusRow: -1, hover: null });
    this.boxes = drawOverview(this.overview, (l, h) => selectMap(m, sentence, "cross", l, h, "words"), layers,
      m.heads, { layer: layer, head: head }, { size: 34, scale: "fixed", theme: theme });
  }

  pickHead(event) {
    const box = this.overview.getBoundingClientRect(), px = event.clientX - box.left, py = event.clientY - box.top;
    const hit = (this.boxes || []).find((b) => px >= b.x && px <= b.x + b.size && py >= b.y && py <= b.y + b.size);
    if (hit) { this.layer = hit.layer; this.head = hit.head; this.draw(); }
  }
}

/** js_on_load of the lab's gr.HTML. */
export function mountCopyLab(element, props, watch) {
  const lab = new CopyLab(element.querySelector(".al-mount") || element);
  register("copylab", lab); // tests and benchmarks find it: attentionLens.view("copylab")
  if (props.value) lab.show(props.value);
  watch("value", () => props.value && lab.show(props.value));
  new MutationObserver(() => lab.draw()).observe(document.body, { attributes: true, attributeFilter: ["class"] });
}
