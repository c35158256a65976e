// @ts-check
/* Attention Lens, numbers drawn: a vector as a colour strip (its values on hover), a matrix as a table of
   coloured cells, and a vector's numbers as a table, each with a text alternative a screen reader reads and the
   arrow keys walk. The picture's steps (steps.js) draw with these; they keep no state. */
import { colour, diverging } from "./core.js";
import { el } from "./draw.js";
import { fixed, t } from "./i18n.js";

/** A label that names pieces of the sentence (or a formula): content, not the page's words; no translator turns it. */
export function piece(node) {
  node.setAttribute("translate", "no");
  return node;
}

/** The mean and the spread (population) of finite numbers; null where there are none. */
export function stats(values) {
  let n = 0, sum = 0;
  for (const v of values) if (Number.isFinite(v)) { n++; sum += v; }
  if (!n) return { mean: null, std: null };
  const mean = sum / n;
  let square = 0;
  for (const v of values) if (Number.isFinite(v)) square += (v - mean) ** 2;
  return { mean, std: Math.sqrt(square / n) };
}

const largest = (values) => values.reduce((m, v) => (Number.isFinite(v) ? Math.max(m, Math.abs(v)) : m), 1e-9);

/** A vector as a strip of coloured cells (blue positive, red negative, as large as `scale`, else its own largest);
    hovering says which entry holds which value. */
export function strip(values, label, scale) {
  const canvas = /** @type {HTMLCanvasElement} */ (el("canvas", "al-strip"));
  const n = values.length, big = scale || largest(values), s = stats(values);
  canvas.width = n; canvas.height = 1;
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  for (let i = 0; i < n; i++) { ctx.fillStyle = diverging(values[i] / big); ctx.fillRect(i, 0, 1, 1); }
  const said = t("numbers.strip", { label, n, mean: fixed(s.mean ?? 0, 3), std: fixed(s.std ?? 0, 3) });
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", said);
  canvas.title = said;
  canvas.addEventListener("mousemove", (e) => {
    const i = Math.min(n - 1, Math.max(0, Math.floor((e.offsetX / canvas.clientWidth) * n)));
    canvas.title = t("numbers.entry", { label, i: i + 1, value: fixed(values[i], 4) });
  });
  return canvas;
}

/** A labelled strip: the label, the strip, its shape. */
export function stripRow(label, values, scale, note) {
  const row = el("div", "al-strip-row");
  row.append(piece(el("span", "al-strip-label", label)), strip(values, label, scale), el("span", "al-strip-note", note || String(values.length)));
  return row;
}

/** Arrow keys move between the cells of a table (the first cell takes Tab). */
function arrowKeys(table) {
  const cells = () => [...table.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")]);
  table.addEventListener("keydown", (e) => {
    const grid = cells(), at = /** @type {HTMLElement} */ (e.target);
    const r = grid.findIndex((row) => row.includes(at)), c = r < 0 ? -1 : grid[r].indexOf(at);
    const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (!move || r < 0) return;
    const next = grid[r + move[0]] && grid[r + move[0]][c + move[1]];
    if (next) { e.preventDefault(); at.tabIndex = -1; next.tabIndex = 0; next.focus(); }
  });
  const first = table.querySelector("tbody td");
  if (first) /** @type {HTMLElement} */ (first).tabIndex = 0;
}

/** A matrix (rows × cols, row-major) as a table: one cell a number, coloured by `paint(v)` (the 0–1 scale of the
    maps by default); masked cells say −∞. `caption` names it for screen readers. */
export function matrixTable(values, rows, cols, rowLabels, colLabels, caption, opts = {}) {
  const table = el("table", "al-step-matrix"), digits = opts.digits ?? 2;
  table.append(el("caption", null, caption));
  const head = el("tr");
  head.append(el("th"), ...colLabels.map((label) => { const th = piece(el("th", null, label)); th.scope = "col"; return th; }));
  if (opts.sums) head.append(el("th", "al-step-sum", t("numbers.sum")));
  const body = el("tbody");
  for (let r = 0; r < rows; r++) {
    const tr = el("tr"), th = piece(el("th", null, rowLabels[r]));
    th.scope = "row";
    tr.dataset.piece = String(r); // a hovered piece is traced through the step (concepts.js)
    tr.append(th);
    let sum = 0;
    for (let c = 0; c < cols; c++) {
      const v = values[r * cols + c], masked = opts.masked && opts.masked(r, c), td = el("td");
      td.tabIndex = -1;
      if (masked) { td.textContent = "\u2212\u221e"; td.className = "al-masked"; } else {
        td.textContent = fixed(v, digits);
        const fill = opaque((opts.paint || colour)(v));
        td.style.background = fill;
        td.style.color = inkOn(fill);
        sum += v;
      }
      tr.append(td);
    }
    if (opts.sums) tr.append(el("td", "al-step-sum", fixed(sum, 3)));
    body.append(tr);
  }
  table.append(el("thead"), body);
  /** @type {HTMLElement} */ (table.querySelector("thead")).append(head);
  arrowKeys(table);
  return table;
}

/** Vectors' numbers as a table: each row its label, its first `n` values, its mean and spread. */
export function numbersTable(caption, rows, n = 6) {
  const table = el("table", "al-step-numbers"), head = el("tr");
  table.append(el("caption", null, caption));
  head.append(el("th", null, ""), ...[...Array(n).keys()].map((i) => el("th", null, `[${i}]`)),
    el("th", null, t("numbers.mean")), el("th", null, t("numbers.std")));
  const body = el("tbody");
  for (const [label, values] of rows) {
    const s = stats(values), tr = el("tr"), th = piece(el("th", null, label));
    th.scope = "row";
    tr.append(th, ...Array.from(values.slice(0, n), (v) => { const td = el("td", null, fixed(Number(v), 4)); td.tabIndex = -1; return td; }),
      el("td", null, fixed(s.mean ?? 0, 4)), el("td", null, fixed(s.std ?? 0, 4)));
    body.append(tr);
  }
  const thead = el("thead");
  thead.append(head);
  table.append(thead, body);
  arrowKeys(table);
  return table;
}

/** A table behind "The numbers", closed: the drawing's text alternative. */
export function theNumbers(table) {
  const box = el("details", "al-step-table");
  box.append(el("summary", null, t("numbers.show")), table);
  return box;
}

/** Signed values' colour on the strips' scale, as large as `big`. */
export const signed = (big) => (v) => diverging(v / big);

/** A colour made opaque over white ("rgba(r, g, b, a)" -> "rgb(...)"): a cell's background is then the same on any page. */
export function opaque(css) {
  const m = css.match(/rgba?\(([^)]+)\)/);
  if (!m) return css;
  const [r, g, b, a = 1] = m[1].split(",").map(Number);
  const over = (c) => Math.round(c * a + 255 * (1 - a));
  return `rgb(${over(r)}, ${over(g)}, ${over(b)})`;
}

/** The relative luminance of an "rgb(r, g, b)" colour (WCAG 2). */
function luminance(css) {
  const [r, g, b] = (css.match(/\d+(\.\d+)?/g) || ["0", "0", "0"]).slice(0, 3).map((c) => {
    const x = Number(c) / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The text colour that reads best on a background: near-black or white, whichever contrasts more. */
export function inkOn(background) {
  const L = luminance(background), dark = (L + 0.05) / (0.0116 + 0.05), light = 1.05 / (L + 0.05);
  return dark >= light ? "#111" : "#fff";
}
