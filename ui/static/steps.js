// @ts-check
/* Attention Lens, the twelve steps of "Attention Is All You Need" drawn with the visitor's numbers: each step
   names the taps it draws (model/taps.py's names, for one stack, layer and attention) and draws them from one
   /taps answer (lens/tap_values.py on the server, taps.js in the page: the same fields). concepts.js opens them
   in the picture. `place`: {kind: "encoder" | "decoder" | "cross", layer, head, row} (from 0).

   Shape legend: S German pieces, T English pieces read so far, L rows and M columns of one attention, D the model
   width, H heads, dk = D / H, F the feed-forward width. Taps are batch 1, row-major. */
import { pieceLabels } from "./core.js";
import { el } from "./draw.js";
import { fixed, number, percent, plural, t } from "./i18n.js";
import { matrixTable, numbersTable, piece, signed, stats, strip, stripRow, theNumbers } from "./numbers.js";

/** The stack a place is in: the cross-attention is the decoder's. */
export const stackOf = (place) => (place.kind === "encoder" ? "encoder" : "decoder");
/** The attention a place names, as the taps name it: "decoder.1.cross_attn". */
export const attentionOf = (place) => `${stackOf(place)}.${place.layer}.${place.kind === "cross" ? "cross" : "self"}_attn`;

/** The stream entering the place's attention: the embedding, the last layer's output, or (cross) the self-attention's. */
function streamInto(place) {
  if (place.kind === "cross") return `decoder.${place.layer}.self_attn.resid`;
  return place.layer === 0 ? `${stackOf(place)}.embed` : `${stackOf(place)}.${place.layer - 1}.ff.resid`;
}
/** The stream entering the feed-forward network: after the layer's last attention. */
const intoFeedForward = (place) => (stackOf(place) === "encoder" ? `encoder.${place.layer}.self_attn.resid`
  : `decoder.${place.layer}.cross_attn.resid`);

/** Row `r` of a (1, L, W) tap. */
function row(tap, r) {
  const W = tap.shape[tap.shape.length - 1];
  return Array.from(tap.data.slice(r * W, (r + 1) * W), Number);
}
/** Row `r` of head `h` of a (1, H, L, W) tap. */
function headRow(tap, h, r) {
  const [, , L, W] = tap.shape, at = (h * L + r) * W;
  return Array.from(tap.data.slice(at, at + W), Number);
}
/** Head `h` of a (1, H, L, M) tap as {values, rows, cols}. */
function headMatrix(tap, h) {
  const [, , L, M] = tap.shape;
  return { values: Array.from(tap.data.slice(h * L * M, (h + 1) * L * M), Number), rows: L, cols: M };
}

/** The pieces along a place's rows and columns. */
function labels(ctx) {
  // One rule with the maps: a decoder row is named by the piece written there; a decoder column (and the stack's
  // input) by the piece the decoder was given there, <s> first. The row writing "want" sees <s> and "I".
  const src = pieceLabels(ctx.sentence, "src"), given = pieceLabels(ctx.sentence, "in"), k = ctx.place.kind;
  const written = ctx.sentence.tokens.tgt ? pieceLabels(ctx.sentence, "tgt") : given;
  return { rows: k === "encoder" ? src : written, cols: k === "decoder" ? given : src, stack: k === "encoder" ? src : given };
}

const lead = (text) => el("p", "al-step-lead", text);
/** A node marked as piece `i`'s: hovering any of a piece's nodes traces it through the step (concepts.js). */
const traced = (node, i) => { node.dataset.piece = String(i); return node; };
const shapeOf = (tap) => tap.shape.join("\u00d7");
const pick = (ctx, name) => ctx.answer.taps[name];

/** tokens: the pieces and their ids, each id a row of the embedding table. */
function tokens(ctx) {
  const pieces = labels(ctx).stack, ids = stackOf(ctx.place) === "encoder" ? ctx.answer.source_ids : ctx.answer.input_ids;
  const table = pick(ctx, `${stackOf(ctx.place)}.tokens`);
  const chips = el("div", "al-step-chips");
  pieces.forEach((p, i) => {
    const chip = piece(el("span", "al-step-chip"));
    chip.dataset.piece = String(i);
    chip.append(el("b", null, p), el("small", null, `#${ids[i]}`));
    chips.append(chip);
  });
  return [lead(plural("steps.tokens.lead", pieces.length, { D: ctx.config.D })), chips,
    theNumbers(numbersTable(t("steps.tokens.table"), pieces.map((p, i) => [`${p} #${ids[i]}`, row(table, i)])))];
}

/** embedding: each piece's row × √D, as a colour strip. */
function embedding(ctx) {
  const pieces = labels(ctx).stack, tap = pick(ctx, `${stackOf(ctx.place)}.tokens`), root = Math.sqrt(ctx.config.D);
  const rows = pieces.map((p, i) => [p, row(tap, i).map((v) => v * root)]);
  const big = Math.max(...rows.map(([, v]) => Math.max(...v.map(Math.abs))));
  return [lead(t("steps.embedding.lead", { D: ctx.config.D, root: fixed(root, 0) })),
    ...rows.map(([p, v], i) => traced(stripRow(p, v, big), i)),
    theNumbers(numbersTable(t("steps.embedding.table", { root: fixed(root, 0) }), rows))];
}

/** positional-encoding: the sinusoids of each position added to the scaled embedding; the sum's shape. */
function positions(ctx) {
  const s = stackOf(ctx.place), pieces = labels(ctx).stack, root = Math.sqrt(ctx.config.D);
  const tok = pick(ctx, `${s}.tokens`), sum = pick(ctx, `${s}.embed`), box = el("div", "al-step-grid al-step-pe");
  const table = [];
  box.append(el("span"), el("b", null, t("steps.pe.scaled")), el("b", null, t("steps.pe.wave")), el("b", null, t("steps.pe.sum")));
  pieces.forEach((p, i) => {
    const x = row(tok, i).map((v) => v * root), total = row(sum, i), pe = total.map((v, k) => v - x[k]);
    box.append(...[piece(el("span", "al-strip-label", `${i + 1} ${p}`)), strip(x, p, 3), strip(pe, p, 3), strip(total, p, 3)]
      .map((node) => traced(node, i)));
    table.push([t("steps.pe.row_wave", { piece: p, position: i }), pe], [t("steps.pe.row_sum", { piece: p }), total]);
  });
  const shape = el("p", "al-step-shape", t("steps.pe.shape", { L: pieces.length, D: ctx.config.D, shape: shapeOf(sum) }));
  const formula = el("p", "al-step-formula");
  formula.append(el("code", null, "PE(pos, 2i) = sin(pos / 10000^(2i / d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))"));
  return [lead(t("steps.pe.lead")), formula, box, shape, theNumbers(numbersTable(t("steps.pe.table"), table))];
}

/** qkv-projection: X W_Q, X W_K, X W_V, split into heads: one head's q, k and v of each piece. */
function qkv(ctx) {
  const a = attentionOf(ctx.place), h = ctx.place.head, names = labels(ctx);
  const q = pick(ctx, `${a}.q`), k = pick(ctx, `${a}.k`), v = pick(ctx, `${a}.v`);
  const box = el("div", "al-step-grid al-step-qkv"), table = [];
  box.append(el("span"), el("b", null, "Q"), el("b", null, "K"), el("b", null, "V"));
  const L = q.shape[2], M = k.shape[2];
  for (let r = 0; r < Math.max(L, M); r++) {
    const qr = r < L ? headRow(q, h, r) : null, kr = r < M ? headRow(k, h, r) : null, vr = r < M ? headRow(v, h, r) : null;
    const label = ctx.place.kind === "cross" ? `${names.rows[r] || ""} | ${names.cols[r] || ""}` : names.rows[r];
    box.append(...[piece(el("span", "al-strip-label", label)), qr ? strip(qr, `Q ${label}`) : el("span"),
      kr ? strip(kr, `K ${label}`) : el("span"), vr ? strip(vr, `V ${label}`) : el("span")].map((node) => traced(node, r)));
    if (qr) table.push([`Q ${names.rows[r]}`, qr]);
    if (kr && vr) table.push([`K ${names.cols[r]}`, kr], [`V ${names.cols[r]}`, vr]);
  }
  const { D, dk, H } = ctx.config, head = h + 1, shape = shapeOf(q);
  return [lead(ctx.place.kind === "cross" ? t("steps.qkv.lead_cross", { head, dk, H, q: shape })
    : t("steps.qkv.lead", { head, D, dk, H, q: shape })), el("p", "al-step-analogy", t("steps.qkv.analogy")), box,
  theNumbers(numbersTable(t("steps.qkv.table", { head: h + 1 }), table))];
}

/** The softmax of a row of numbers. */
function softmax(values) {
  const top = Math.max(...values.filter(Number.isFinite)), e = values.map((v) => (Number.isFinite(v) ? Math.exp(v - top) : 0));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** The decoder's own rows see the pieces up to theirs; the others see every key of one sentence. */
const maskOf = (ctx) => (ctx.place.kind === "decoder" ? (r, c) => c > r : null);

/** scores: Q·Kᵀ / √dk of one head, and (the toggle) the softmax with and without the division. */
function scores(ctx) {
  const a = attentionOf(ctx.place), h = ctx.place.head, names = labels(ctx), m = headMatrix(pick(ctx, `${a}.scores`), h);
  const root = Math.sqrt(ctx.config.dk), big = Math.max(...m.values.map(Math.abs)), mask = maskOf(ctx);
  const matrix = matrixTable(m.values, m.rows, m.cols, names.rows, names.cols, t("steps.scores.caption", { head: h + 1 }),
    { paint: signed(big), digits: 2 });
  const rows = (scale) => [...Array(m.rows).keys()].flatMap((r) => softmax(m.values.slice(r * m.cols, (r + 1) * m.cols)
    .map((v, c) => (mask && mask(r, c) ? -Infinity : v * scale))));
  const peak = (w) => Math.max(...[...Array(m.rows).keys()].map((r) => Math.max(...w.slice(r * m.cols, (r + 1) * m.cols))));
  const scaled = rows(1), raw = rows(root), toggle = el("button", "al-choice al-step-toggle", t("steps.scores.without"));
  toggle.type = "button";
  toggle.setAttribute("aria-pressed", "false");
  const holder = el("div", "al-step-compare");
  const show = (without) => {
    toggle.setAttribute("aria-pressed", String(without));
    const w = without ? raw : scaled;
    const said = { peak: percent(peak(w)), root: fixed(root, 0) }, head = { head: h + 1 };
    holder.replaceChildren(el("p", "al-step-note", without ? t("steps.scores.saturates", said) : t("steps.scores.scaled", said)),
      matrixTable(w, m.rows, m.cols, names.rows, names.cols, without ? t("steps.scores.caption_raw", head)
        : t("steps.scores.caption_weights", head), { masked: mask || undefined }));
  };
  toggle.addEventListener("click", () => show(toggle.getAttribute("aria-pressed") !== "true"));
  show(false);
  return [lead(t("steps.scores.lead", { dk: ctx.config.dk, root: fixed(root, 0), L: m.rows, M: m.cols })), matrix, toggle, holder];
}

/** mask: what a row may not see, −∞ before the softmax. */
function mask(ctx) {
  const a = attentionOf(ctx.place), h = ctx.place.head, names = labels(ctx), m = headMatrix(pick(ctx, `${a}.scores`), h);
  const masked = maskOf(ctx), big = Math.max(...m.values.map(Math.abs));
  const text = masked ? t("steps.mask.causal") : t("steps.mask.padding");
  return [lead(text), matrixTable(m.values, m.rows, m.cols, names.rows, names.cols, t("steps.mask.caption", { head: h + 1 }),
    { paint: signed(big), masked: masked || undefined })];
}

/** softmax: each row of scores becoming weights that sum to 1: the attention map. */
function weights(ctx) {
  const a = attentionOf(ctx.place), h = ctx.place.head, names = labels(ctx), m = headMatrix(pick(ctx, `${a}.weights`), h);
  return [lead(t("steps.softmax.lead")), matrixTable(m.values, m.rows, m.cols, names.rows, names.cols,
    t("steps.softmax.caption", { head: h + 1 }), { sums: true, masked: maskOf(ctx) || undefined })];
}

/** heads-concat: each head's weights·V for one row, the heads side by side, times W_O. */
function heads(ctx) {
  const a = attentionOf(ctx.place), r = ctx.place.row, names = labels(ctx), tap = pick(ctx, `${a}.heads`);
  const out = row(pick(ctx, `${a}.out`), r), parts = [...Array(ctx.config.H).keys()].map((h) => headRow(tap, h, r));
  const joined = parts.flat(), big = Math.max(...joined.map(Math.abs), ...out.map(Math.abs));
  const side = el("div", "al-step-heads");
  parts.forEach((p, h) => side.append(stripRow(t("steps.heads.head", { head: h + 1 }), p, big, `${ctx.config.dk}`)));
  return [lead(t("steps.heads.lead", { piece: names.rows[r], H: ctx.config.H, dk: ctx.config.dk, D: ctx.config.D })), side,
    stripRow(t("steps.heads.concat"), joined, big, `${joined.length}`), el("p", "al-step-arrow", "\u00d7 W_O \u2193"),
    stripRow(t("steps.heads.out"), out, big, `${out.length}`),
    theNumbers(numbersTable(t("steps.heads.table", { piece: names.rows[r] }),
      [...parts.map((p, h) => [t("steps.heads.head", { head: h + 1 }), p]), [t("steps.heads.out"), out]]))];
}

/** residual-layernorm: x + sublayer(x), then LayerNorm (Post-LN, as the paper and this checkpoint have it). */
function residual(ctx) {
  const a = attentionOf(ctx.place), r = ctx.place.row, names = labels(ctx);
  const x = row(pick(ctx, streamInto(ctx.place)), r), f = row(pick(ctx, `${a}.out`), r), after = row(pick(ctx, `${a}.resid`), r);
  const sum = x.map((v, i) => v + f[i]), before = stats(sum), now = stats(after);
  const big = Math.max(...sum.map(Math.abs), ...after.map(Math.abs));
  const table = [["x", x], [t("steps.residual.sublayer"), f], ["x + sublayer(x)", sum], ["LayerNorm", after]];
  return [lead(t("steps.residual.lead", { piece: names.rows[r] })), ...table.map(([label, v]) => stripRow(label, v, big)),
    el("p", "al-step-note", t("steps.residual.stats", { mean: fixed(before.mean ?? 0, 3), std: fixed(before.std ?? 0, 3),
      mean2: fixed(now.mean ?? 0, 3), std2: fixed(now.std ?? 0, 3) })),
    theNumbers(numbersTable(t("steps.residual.table", { piece: names.rows[r] }), table))];
}

/** feed-forward: D → F (ReLU: how many zeros) → D, for one piece. */
function feedForward(ctx) {
  const s = stackOf(ctx.place), r = ctx.place.row, names = labels(ctx), p = `${s}.${ctx.place.layer}.ff`;
  const x = row(pick(ctx, intoFeedForward(ctx.place)), r), hidden = row(pick(ctx, `${p}.hidden`), r), out = row(pick(ctx, `${p}.out`), r);
  const zeros = hidden.filter((v) => v === 0).length;
  return [lead(t("steps.ff.lead", { piece: names.stack[r], D: ctx.config.D, F: hidden.length })),
    stripRow("x", x, 0, `${x.length}`), stripRow("max(0, x W\u2081 + b\u2081)", hidden, 0, `${hidden.length}`),
    el("p", "al-step-note", t("steps.ff.zeros", { zeros: number(zeros), F: number(hidden.length), percent: percent(zeros / hidden.length) })),
    stripRow("\u00b7 W\u2082 + b\u2082", out, 0, `${out.length}`),
    theNumbers(numbersTable(t("steps.ff.table", { piece: names.stack[r] }), [["x", x], ["hidden", hidden], ["out", out]]))];
}

/** cross-attention: each English piece's queries reaching the German memory: one head's weights as a bridge. */
function cross(ctx) {
  const place = { ...ctx.place, kind: "cross" }, h = ctx.place.head, m = headMatrix(pick(ctx, `${attentionOf(place)}.weights`), h);
  const english = pieceLabels(ctx.sentence, "in"), german = pieceLabels(ctx.sentence, "src"), height = 22 * Math.max(m.rows, m.cols) + 8;
  const NS = "http://www.w3.org/2000/svg", bridge = document.createElementNS(NS, "svg");
  bridge.setAttribute("viewBox", `0 0 420 ${height}`);
  bridge.setAttribute("class", "al-step-bridge");
  bridge.setAttribute("role", "img");
  piece(/** @type {any} */ (bridge));
  bridge.setAttribute("aria-label", t("steps.cross.bridge", { head: h + 1 }));
  const y = (i, n) => 14 + i * ((height - 20) / Math.max(1, n - 1 || 1));
  const text = (x, yy, s, anchor) => { const e = document.createElementNS(NS, "text"); e.setAttribute("x", String(x));
    e.setAttribute("y", String(yy)); e.setAttribute("text-anchor", anchor); e.setAttribute("dominant-baseline", "middle");
    e.textContent = s; bridge.append(e); return e; };
  for (let r = 0; r < m.rows; r++) for (let c = 0; c < m.cols; c++) {
    const w = m.values[r * m.cols + c];
    if (w < 0.05) continue;
    const line = document.createElementNS(NS, "line");
    Object.entries({ x1: 140, y1: y(r, m.rows), x2: 280, y2: y(c, m.cols), "stroke-width": (w * 6).toFixed(2),
      "stroke-opacity": (0.25 + 0.75 * w).toFixed(2), class: "al-bridge-line", "data-piece": r })
      .forEach(([k, v]) => line.setAttribute(k, String(v)));
    bridge.append(line);
  }
  english.forEach((p, r) => text(134, y(r, m.rows), p, "end").setAttribute("data-piece", String(r)));
  german.forEach((p, c) => text(286, y(c, m.cols), p, "start"));
  return [lead(t("steps.cross.lead", { layer: ctx.place.layer + 1, head: h + 1 })), bridge,
    theNumbers(matrixTable(m.values, m.rows, m.cols, english, german, t("steps.cross.caption", { head: h + 1 })))];
}

/** A candidate piece as the page writes pieces: no tokenizer marks. */
const candidate = (piece) => piece.replace(/^[\u2581\u0120]/, "");

/** logits-softmax: the last state times the output matrix, the likeliest pieces, a temperature, the piece fed back. */
function logits(ctx) {
  const top = pick(ctx, "logits"), r = ctx.place.row, english = pieceLabels(ctx.sentence, "in"), values = top.top_values[r].map(Number);
  const box = el("div", "al-step-logits"), slider = /** @type {HTMLInputElement} */ (el("input", "al-step-temperature"));
  Object.assign(slider, { type: "range", min: "0.2", max: "2", step: "0.1", value: "1" });
  slider.setAttribute("aria-label", t("steps.logits.temperature_label"));
  const label = el("label", "al-step-temp-label"), shown = el("span", null, "1.0");
  label.append(t("steps.logits.temperature"), " ", slider, " ", shown);
  const bars = el("div", "al-step-bars");
  const draw = () => {
    const T = Number(slider.value), logZ = top.log_z?.[T.toFixed(1)]?.[r];
    // The full softmax over all V pieces (log_z is its denominator); the top pieces alone would overstate each.
    const p = Number.isFinite(logZ) ? values.map((v) => Math.exp(v / T - logZ)) : softmax(values.map((v) => v / T));
    shown.textContent = fixed(T, 1);
    bars.replaceChildren(...p.slice(0, 10).map((q, i) => {
      const line = el("div", "al-step-bar"), fill = el("span", "al-step-fill");
      line.dataset.p = String(q); // the probability unrounded (tests compare it with the model's full softmax)
      fill.style.width = `${Math.round(q * 100)}%`;
      line.append(piece(el("span", "al-step-piece", candidate(top.top_tokens[r][i]))), fill, el("span", "al-step-p", percent(q)),
        el("span", "al-step-logit", fixed(values[i], 2)));
      return line;
    }));
  };
  slider.addEventListener("input", draw);
  draw();
  const chosen = r + 1 < english.length ? english[r + 1] : candidate(top.top_tokens[r][0]);
  box.append(label, bars);
  return [lead(t("steps.logits.lead", { piece: english[r], V: number(top.shape[2]) })), box,
    el("p", "al-step-note", t("steps.logits.fed_back", { piece: chosen }))];
}

/** A step's title, by its id. */
export const stepTitle = (id) => { const step = STEPS.find((x) => x.id === id); return step ? step.title() : id; };

/** The twelve steps, in the paper's order: id, which taps at a place, and the drawing. */
export const STEPS = [
  { id: "tokens", title: () => t("steps.tokens.title"), kinds: ["encoder", "decoder"], rows: false, taps: (p) => [`${stackOf(p)}.tokens`], draw: tokens },
  { id: "embedding", title: () => t("steps.embedding.title"), kinds: ["encoder", "decoder"], rows: false, taps: (p) => [`${stackOf(p)}.tokens`], draw: embedding },
  { id: "positional-encoding", title: () => t("steps.pe.title"), kinds: ["encoder", "decoder"], rows: false, taps: (p) => [`${stackOf(p)}.tokens`, `${stackOf(p)}.embed`],
    draw: positions },
  { id: "qkv-projection", title: () => t("steps.qkv.title"), kinds: ["encoder", "decoder", "cross"], rows: false, heads: true,
    taps: (p) => ["q", "k", "v"].map((x) => `${attentionOf(p)}.${x}`), draw: qkv },
  { id: "scores", title: () => t("steps.scores.title"), kinds: ["encoder", "decoder", "cross"], heads: true, taps: (p) => [`${attentionOf(p)}.scores`], draw: scores },
  { id: "mask", title: () => t("steps.mask.title"), kinds: ["decoder", "encoder", "cross"], heads: true, taps: (p) => [`${attentionOf(p)}.scores`], draw: mask },
  { id: "softmax", title: () => t("steps.softmax.title"), kinds: ["encoder", "decoder", "cross"], heads: true, taps: (p) => [`${attentionOf(p)}.weights`], draw: weights },
  { id: "heads-concat", title: () => t("steps.heads.title"), kinds: ["encoder", "decoder", "cross"], rows: true,
    taps: (p) => [`${attentionOf(p)}.heads`, `${attentionOf(p)}.out`], draw: heads },
  { id: "residual-layernorm", title: () => t("steps.residual.title"), kinds: ["encoder", "decoder", "cross"], rows: true,
    taps: (p) => [streamInto(p), `${attentionOf(p)}.out`, `${attentionOf(p)}.resid`], draw: residual },
  { id: "feed-forward", title: () => t("steps.ff.title"), kinds: ["encoder", "decoder"], rows: true,
    taps: (p) => [intoFeedForward(p), `${stackOf(p)}.${p.layer}.ff.hidden`, `${stackOf(p)}.${p.layer}.ff.out`], draw: feedForward },
  { id: "cross-attention", title: () => t("steps.cross.title"), kinds: ["cross"], heads: true, taps: (p) => [`decoder.${p.layer}.cross_attn.weights`], draw: cross },
  { id: "logits-softmax", title: () => t("steps.logits.title"), kinds: ["decoder"], rows: true, last: true, taps: () => ["logits"], draw: logits },
];
