// @ts-check
/* Attention Lens, drawing side of the client viewer: a map as a matrix (canvas, and the same as
   SVG for download), as lines between two token columns (the head view), and the layer x head
   overview. Each function takes a map from core.js and plain options; none keeps state. */
import { LUT, colour, describeCell, diverging } from "./core.js";
import { fixed, number, t } from "./i18n.js";

const FONT = "12px ui-sans-serif, system-ui, sans-serif";
const ANGLE = Math.PI / 3; // column labels rise at 60 degrees: long words need no extra width

/** A DOM element with a class and text; every view builds its nodes with these two. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
/** A message's text as nodes, each `span in backticks` a <code> (code keeps its own language on any page). */
export function withCode(text) {
  return String(text).split(/`([^`]+)`/).map((part, i) => (i % 2 ? el("code", null, part) : part)).filter((x) => x !== "");
}
/** A panel's explanation as a reader meets it: `lead` (one or two sentences) shown, the rest behind "more". */
export function explainer(cls, lead, rest) {
  const box = el("div", "al-explainer " + cls, lead);
  if (rest) {
    const more = el("details", "al-more");
    more.append(el("summary", null, t("draw.more")), el("span", null, rest));
    box.append(" ", more);
  }
  return box;
}
/** An SVG element with its attributes and text. */
export function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}
export const HEAD_COLOURS = ["#e6550d", "#3182bd", "#31a354", "#b13fbd", "#d6a600", "#17becf", "#e377c2", "#8c564b"];

let measurer = null;
function textWidth(text) {
  measurer = measurer || document.createElement("canvas").getContext("2d");
  measurer.font = FONT;
  return measurer.measureText(text).width;
}

/** A label as drawn: at most 24 characters (an untrained model can write one endless "word");
    the hover text keeps it whole. */
const LABEL_MAX = 24;
export function shortLabel(label) {
  return label.length > LABEL_MAX ? label.slice(0, LABEL_MAX - 1) + "\u2026" : label;
}

/** Where everything goes: label bands from the longest labels, then the cells. */
export function matrixLayout(map, cell) {
  const rowW = Math.ceil(Math.max(20, ...map.rowLabels.map((l) => textWidth(shortLabel(l))))) + 10;
  const colW = Math.max(20, ...map.colLabels.map((l) => textWidth(shortLabel(l))));
  const top = Math.ceil(colW * Math.sin(ANGLE) + 14);
  const right = Math.ceil(colW * Math.cos(ANGLE)) + 8;
  return { cell: cell, left: rowW, top: top, width: rowW + map.cols * cell + right, height: top + map.rows * cell + 6 };
}

/** The weight shown by a cell's colour: per map (brightest = the map's maximum) or fixed 0-1. */
export function shade(map, v, scale) {
  return scale === "fixed" ? v : v / map.max;
}

function rowMaxima(map) {
  const best = [];
  for (let r = 0; r < map.rows; r++) {
    let k = -1, top = -1;
    for (let c = 0; c < map.cols; c++) {
      const i = r * map.cols + c;
      if (!map.masked[i] && map.values[i] > top) { top = map.values[i]; k = c; }
    }
    best.push(k);
  }
  return best;
}

function hatch(ctx, theme) {
  const tile = document.createElement("canvas");
  tile.width = tile.height = 6;
  const t = tile.getContext("2d");
  t.fillStyle = theme.masked; t.fillRect(0, 0, 6, 6);
  t.strokeStyle = theme.hatch; t.lineWidth = 1;
  t.beginPath(); t.moveTo(0, 6); t.lineTo(6, 0); t.stroke();
  return ctx.createPattern(tile, "repeat");
}

/** Draw the matrix on a canvas; returns its layout for hit testing. opts: cell, scale, theme,
    focusRow (highlighted row or -1), hover ([r, c] or null). */
export function drawMatrix(canvas, map, opts) {
  const lay = matrixLayout(map, opts.cell), dpr = window.devicePixelRatio || 1, theme = opts.theme;
  canvas.width = Math.round(lay.width * dpr); canvas.height = Math.round(lay.height * dpr);
  canvas.style.width = lay.width + "px"; canvas.style.height = lay.height + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = theme.bg; ctx.fillRect(0, 0, lay.width, lay.height);
  const pattern = hatch(ctx, theme), n = lay.cell;
  for (let r = 0; r < map.rows; r++) {
    for (let c = 0; c < map.cols; c++) {
      const i = r * map.cols + c;
      ctx.fillStyle = map.masked[i] ? pattern : colour(shade(map, map.values[i], opts.scale));
      ctx.fillRect(lay.left + c * n, lay.top + r * n, n, n);
    }
  }
  if (n >= 10) { // the strongest link of each row, outlined: the word it leans on most
    ctx.strokeStyle = theme.bg; ctx.lineWidth = 1.5;
    rowMaxima(map).forEach((c, r) => c >= 0 && ctx.strokeRect(lay.left + c * n + 1.5, lay.top + r * n + 1.5, n - 3, n - 3));
  }
  ctx.font = FONT; ctx.fillStyle = theme.text; ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  map.rowLabels.forEach((label, r) => {
    ctx.font = r === opts.focusRow ? "bold " + FONT : FONT;
    ctx.fillText(shortLabel(label), lay.left - 6, lay.top + r * n + n / 2);
  });
  ctx.textAlign = "left"; ctx.font = FONT;
  map.colLabels.forEach((label, c) => {
    ctx.save();
    ctx.translate(lay.left + c * n + n / 2, lay.top - 6);
    ctx.rotate(-ANGLE);
    ctx.fillText(shortLabel(label), 0, 0);
    ctx.restore();
  });
  if (opts.focusRow >= 0 && opts.focusRow < map.rows) {
    ctx.strokeStyle = theme.accent; ctx.lineWidth = 2;
    ctx.strokeRect(lay.left - 1, lay.top + opts.focusRow * n, map.cols * n + 2, n);
  }
  if (opts.hover) {
    ctx.strokeStyle = theme.text; ctx.lineWidth = 2;
    ctx.strokeRect(lay.left + opts.hover[1] * n, lay.top + opts.hover[0] * n, n, n);
  }
  return lay;
}

/** The cell under a point of the canvas (CSS pixels), or null; a row label gives [r, -1]. */
export function hitMatrix(lay, map, x, y) {
  const r = Math.floor((y - lay.top) / lay.cell), c = Math.floor((x - lay.left) / lay.cell);
  if (r < 0 || r >= map.rows) return null;
  if (x < lay.left) return [r, -1];
  if (c < 0 || c >= map.cols) return null;
  return [r, c];
}

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The same matrix as an SVG document (vector text, for papers and slides). */
export function matrixSVG(map, opts) {
  const lay = matrixLayout(map, opts.cell), n = lay.cell, theme = opts.theme, titleH = 22;
  const width = Math.max(lay.width, Math.ceil(textWidth(opts.title)) + 12); // the title whole
  const out = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + (lay.height + titleH) +
    '" font-family="sans-serif" font-size="12">',
    '<defs><pattern id="masked" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="' +
    theme.masked + '"/><path d="M0 6L6 0" stroke="' + theme.hatch + '"/></pattern></defs>',
    '<rect width="100%" height="100%" fill="' + theme.bg + '"/>',
    '<text x="6" y="15" fill="' + theme.text + '">' + esc(opts.title) + "</text>",
    '<g transform="translate(0,' + titleH + ')">'];
  for (let r = 0; r < map.rows; r++) {
    for (let c = 0; c < map.cols; c++) {
      const i = r * map.cols + c;
      const fill = map.masked[i] ? "url(#masked)" : colour(shade(map, map.values[i], opts.scale));
      out.push('<rect x="' + (lay.left + c * n) + '" y="' + (lay.top + r * n) + '" width="' + n + '" height="' + n +
        '" fill="' + fill + '"><title>' + esc(describeCell(map, r, c)) + "</title></rect>");
    }
  }
  if (n >= 10) { // as on the screen: the strongest link of each row, outlined
    rowMaxima(map).forEach((c, r) => c >= 0 && out.push('<rect x="' + (lay.left + c * n + 1.5) + '" y="' +
      (lay.top + r * n + 1.5) + '" width="' + (n - 3) + '" height="' + (n - 3) + '" fill="none" stroke="' + theme.bg +
      '" stroke-width="1.5"/>'));
  }
  map.rowLabels.forEach((label, r) => out.push('<text x="' + (lay.left - 6) + '" y="' + (lay.top + r * n + n / 2) +
    '" text-anchor="end" dominant-baseline="middle" fill="' + theme.text + '">' + esc(shortLabel(label)) + "</text>"));
  map.colLabels.forEach((label, c) => out.push('<text transform="translate(' + (lay.left + c * n + n / 2) + "," +
    (lay.top - 6) + ') rotate(-60)" fill="' + theme.text + '">' + esc(shortLabel(label)) + "</text>"));
  out.push("</g></svg>");
  return out.join("\n");
}

/** The head view: rows on the left, columns on the right, a line per pair weighted by attention,
    one colour per head. heads: the maps of the heads to draw ([{head, map}]); focusRow filters. */
export function drawHeadView(canvas, heads, opts) {
  const map = heads[0].map, theme = opts.theme, dpr = window.devicePixelRatio || 1, rowH = 20;
  const leftW = Math.max(textWidth(opts.leftTitle), ...map.rowLabels.map((l) => textWidth(shortLabel(l)))) + 12;
  const rightW = Math.max(textWidth(opts.rightTitle), ...map.colLabels.map((l) => textWidth(shortLabel(l)))) + 12;
  const gap = Math.max(120, Math.min(320, opts.width - leftW - rightW - 20));
  const width = leftW + gap + rightW + 20, top = 28;
  const height = top + Math.max(map.rows, map.cols) * rowH + 8;
  canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
  canvas.style.width = width + "px"; canvas.style.height = height + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = theme.bg; ctx.fillRect(0, 0, width, height);
  const x1 = 10 + leftW, x2 = x1 + gap, yOf = (i) => top + i * rowH + rowH / 2;
  ctx.lineWidth = 2;
  for (const { head, map: m } of heads) {
    ctx.strokeStyle = head === null ? theme.text : HEAD_COLOURS[head % HEAD_COLOURS.length];
    for (let r = 0; r < m.rows; r++) {
      if (opts.focusRow >= 0 && r !== opts.focusRow) continue;
      for (let c = 0; c < m.cols; c++) {
        const v = m.values[r * m.cols + c];
        if (m.masked[r * m.cols + c] || v < 0.02) continue;
        ctx.globalAlpha = Math.min(1, shade(m, v, opts.scale)) * (opts.focusRow >= 0 ? 1 : 0.7);
        ctx.beginPath(); ctx.moveTo(x1 + 4, yOf(r)); ctx.lineTo(x2 - 4, yOf(c)); ctx.stroke();
      }
    }
  }
  ctx.globalAlpha = 1; ctx.font = FONT; ctx.fillStyle = theme.text; ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  map.rowLabels.forEach((l, r) => {
    ctx.font = r === opts.focusRow ? "bold " + FONT : FONT;
    ctx.fillText(shortLabel(l), x1 - 4, yOf(r));
  });
  ctx.textAlign = "left"; ctx.font = FONT;
  map.colLabels.forEach((l, c) => ctx.fillText(shortLabel(l), x2 + 4, yOf(c)));
  ctx.fillStyle = theme.muted;
  ctx.textAlign = "right"; ctx.fillText(opts.leftTitle, x1 - 4, 10);
  ctx.textAlign = "left"; ctx.fillText(opts.rightTitle, x2 + 4, 10);
  return { top: top, rowH: rowH, x1: x1, x2: x2, width: width, rows: map.rows };
}

/** The colour legend under a map: the scale from 0 to the brightest cell (or to 1), and, where a map
    has masked cells, what the hatching means. update(map, kind, scale) after each draw. */
export function legend() {
  const node = el("div", "al-legend"), bar = el("span", "al-legend-bar"), low = el("span", "al-legend-end", number(0));
  const high = el("span", "al-legend-end"), masked = el("span", "al-legend-masked");
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => colour(t) + " " + t * 100 + "%");
  bar.style.background = "linear-gradient(to right, " + stops.join(", ") + ")";
  masked.append(el("span", "al-legend-hatch"), el("span", "", t("draw.masked")));
  node.append(el("span", "al-legend-label", t("draw.colour")), low, bar, high, masked);
  node.setAttribute("aria-label", t("draw.colour_legend"));
  return {
    node: node,
    update(map, kind, scale) {
      high.textContent = scale === "fixed" ? t("draw.scale_fixed_top") : t("draw.scale_map_top", { max: fixed(map.max, 2) });
      masked.hidden = !map.masked.some((m) => m);
    },
  };
}

/** The legend of a table shaded by the maps' own scale (who wrote each word): `low` at 0, `high` at the top. */
export function amountLegend(low, high) {
  const node = el("div", "al-legend al-legend-amount"), bar = el("span", "al-legend-bar");
  bar.style.background = "linear-gradient(to right, " + [0, 0.25, 0.5, 0.75, 1].map((t) => colour(t) + " " + t * 100 + "%").join(", ") + ")";
  node.append(el("span", "al-legend-label", t("draw.colour")), el("span", "al-legend-end", low), bar, el("span", "al-legend-end", high));
  node.setAttribute("aria-label", t("draw.colour_legend"));
  return node;
}

/** The legend of the one diverging scale (diverging): red for what `negative` names, blue for `positive`. */
export function signedLegend(negative, positive) {
  const node = el("div", "al-legend al-legend-signed"), bar = el("span", "al-legend-bar");
  bar.style.background = "linear-gradient(to right, " + diverging(-1) + ", " + diverging(0) + ", " + diverging(1) + ")";
  node.append(el("span", "al-legend-label", t("draw.colour")), el("span", "al-legend-end", negative), bar,
    el("span", "al-legend-end", positive));
  node.setAttribute("aria-label", t("draw.colour_legend"));
  return node;
}

/** The head view (Lines) as an SVG document: what drawHeadView draws, in vector lines and text. */
export function headViewSVG(heads, opts) {
  const map = heads[0].map, theme = opts.theme, rowH = 20, titleH = 22;
  const leftW = Math.max(textWidth(opts.leftTitle), ...map.rowLabels.map((l) => textWidth(shortLabel(l)))) + 12;
  const rightW = Math.max(textWidth(opts.rightTitle), ...map.colLabels.map((l) => textWidth(shortLabel(l)))) + 12;
  const gap = Math.max(120, Math.min(320, opts.width - leftW - rightW - 20)), top = 28 + titleH;
  const width = Math.max(leftW + gap + rightW + 20, Math.ceil(textWidth(opts.title)) + 12);
  const height = top + Math.max(map.rows, map.cols) * rowH + 8, x1 = 10 + leftW, x2 = x1 + gap;
  const yOf = (i) => top + i * rowH + rowH / 2;
  const out = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + height +
    '" font-family="sans-serif" font-size="12">', '<rect width="100%" height="100%" fill="' + theme.bg + '"/>',
    '<text x="6" y="15" fill="' + theme.text + '">' + esc(opts.title) + "</text>"];
  for (const { head, map: m } of heads) {
    const colour = head === null ? theme.text : HEAD_COLOURS[head % HEAD_COLOURS.length];
    for (let r = 0; r < m.rows; r++) {
      if (opts.focusRow >= 0 && r !== opts.focusRow) continue;
      for (let c = 0; c < m.cols; c++) {
        const v = m.values[r * m.cols + c];
        if (m.masked[r * m.cols + c] || v < 0.02) continue;
        const alpha = Math.min(1, shade(m, v, opts.scale)) * (opts.focusRow >= 0 ? 1 : 0.7);
        out.push('<line x1="' + (x1 + 4) + '" y1="' + yOf(r) + '" x2="' + (x2 - 4) + '" y2="' + yOf(c) + '" stroke="' +
          colour + '" stroke-width="2" stroke-opacity="' + alpha.toFixed(3) + '"><title>' +
          esc(describeCell(m, r, c)) + "</title></line>");
      }
    }
  }
  map.rowLabels.forEach((l, r) => out.push('<text x="' + (x1 - 4) + '" y="' + yOf(r) + '" text-anchor="end" ' +
    'dominant-baseline="middle" fill="' + theme.text + '">' + esc(shortLabel(l)) + "</text>"));
  map.colLabels.forEach((l, c) => out.push('<text x="' + (x2 + 4) + '" y="' + yOf(c) + '" dominant-baseline="middle" ' +
    'fill="' + theme.text + '">' + esc(shortLabel(l)) + "</text>"));
  out.push('<text x="' + (x1 - 4) + '" y="' + (titleH + 10) + '" text-anchor="end" fill="' + theme.muted + '">' +
    esc(opts.leftTitle) + "</text>", '<text x="' + (x2 + 4) + '" y="' + (titleH + 10) + '" fill="' + theme.muted + '">' +
    esc(opts.rightTitle) + "</text>", "</svg>");
  return out.join("\n");
}

/** The layer x head overview: one thumbnail per head and the mean of each layer. Returns the
    hit boxes [{layer, head, x, y, size}]. */
export function drawOverview(canvas, maps, layers, heads, selected, opts) {
  const size = opts.size, gap = 6, labelW = 22, labelH = 16, dpr = window.devicePixelRatio || 1, theme = opts.theme;
  const width = labelW + (heads + 1) * (size + gap), height = labelH + layers * (size + gap);
  canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
  canvas.style.width = width + "px"; canvas.style.height = height + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = theme.bg; ctx.fillRect(0, 0, width, height);
  ctx.font = "11px ui-sans-serif, system-ui, sans-serif"; ctx.fillStyle = theme.muted; ctx.textBaseline = "middle";
  ctx.textAlign = "center";
  for (let h = 0; h <= heads; h++) {
    ctx.fillText(h < heads ? t("draw.overview_head", { n: h + 1 }) : t("draw.overview_mean"), labelW + h * (size + gap) + size / 2, 8);
  }
  const boxes = [];
  for (let l = 0; l < layers; l++) {
    ctx.textAlign = "left"; ctx.fillStyle = theme.muted;
    ctx.fillText(t("draw.overview_layer", { n: l + 1 }), 0, labelH + l * (size + gap) + size / 2);
    for (let h = 0; h <= heads; h++) {
      const head = h < heads ? h : null, m = maps(l, head), x = labelW + h * (size + gap), y = labelH + l * (size + gap);
      const image = ctx.createImageData(m.cols, m.rows);
      for (let i = 0; i < m.rows * m.cols; i++) {
        const rgb = m.masked[i] ? [128, 128, 128] : LUT[Math.round(255 * Math.min(1, shade(m, m.values[i], opts.scale)))];
        image.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * i);
      }
      const tile = document.createElement("canvas");
      tile.width = m.cols; tile.height = m.rows;
      tile.getContext("2d").putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(tile, x, y, size, size);
      if (l === selected.layer && head === selected.head) {
        ctx.strokeStyle = theme.accent; ctx.lineWidth = 3; ctx.strokeRect(x - 2, y - 2, size + 4, size + 4);
      }
      boxes.push({ layer: l, head: head, x: x, y: y, size: size });
    }
  }
  return boxes;
}
