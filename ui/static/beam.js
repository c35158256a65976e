// @ts-check
/* Attention Lens, the beam search as a tree (SVG) and its ranked finished sentences. A node is a
   hypothesis the search kept: its last piece, its cumulative log-probability; the winner's path is
   highlighted, finished sentences outlined, hypotheses that were dropped greyed. */
import { svg } from "./draw.js";
import { fixed, parts, t } from "./i18n.js";
const ROW = 30, PAD = 8, FONT = "12px ui-sans-serif, system-ui, sans-serif";

let measurer = null;
function textWidth(text) {
  measurer = measurer || document.createElement("canvas").getContext("2d");
  measurer.font = FONT;
  return measurer.measureText(text).width;
}

export const nodeLabel = (token) => (token === "<s>" ? t("beam.start") : token === "</s>" ? t("beam.end")
  : token.replace(/[▁\u0120]/g, ""));
// A node's status (lens/trace.py), in words; a status not named here is shown as the trace names it.
const STATUS = { get winner() { return t("beam.status.winner"); }, get finished() { return t("beam.status.finished"); },
  get expanded() { return t("beam.status.expanded"); }, get pruned() { return t("beam.status.pruned"); } };

/** Rows for the leaves in depth-first order, the winner's child first, then likelier ones; a parent sits
    on the row of its first child, so the winner's path is one straight line along the top. */
/** @param {BeamNode[]} nodes */
function layout(nodes) {
  const children = new Map(nodes.map((n) => [n.id, []]));
  nodes.forEach((n) => n.parent >= 0 && children.get(n.parent).push(n));
  const rank = (n) => (n.status === "winner" ? 1 : 0);
  children.forEach((list) => list.sort((a, b) => rank(b) - rank(a) || b.log_prob - a.log_prob));
  const y = new Map();
  let leaves = 0;
  const visit = (n) => {
    const kids = children.get(n.id);
    kids.forEach(visit);
    y.set(n.id, kids.length ? y.get(kids[0].id) : leaves++);
  };
  visit(nodes[0]);
  return { y: y, rows: leaves };
}

/** Draw the tree of one trace into container; opts.onPick(node) when a node is clicked. */
export function drawBeamTree(container, trace, opts) {
  const nodes = trace.beam, { y, rows } = layout(nodes);
  const steps = Math.max(...nodes.map((n) => n.step)) + 2;
  const col = Math.min(96, Math.max(56, ...nodes.map((n) => textWidth(nodeLabel(n.token)) + 22)));
  const width = steps * col + PAD * 2, height = rows * ROW + PAD * 2 + 10;
  const root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, class: "st-tree-svg", role: "img",
    "aria-label": t("beam.tree_label", { n: nodes.length }) });
  const X = (n) => PAD + (n.step + 1) * col, Y = (n) => PAD + 6 + y.get(n.id) * ROW + ROW / 2;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = svg("g"), dots = svg("g");
  root.append(edges, dots);
  for (const n of nodes) {
    if (n.parent >= 0) {
      const p = byId.get(n.parent), x1 = X(p) + col - 14, x0 = X(p) + textWidth(nodeLabel(p.token)) + 8;
      const d = "M" + Math.min(x0, x1) + "," + Y(p) + " C" + (x1 - 4) + "," + Y(p) + " " + (X(n) - 12) + "," + Y(n) + " " + (X(n) - 3) + "," + Y(n);
      edges.appendChild(svg("path", { d: d, class: "st-edge st-" + n.status }));
    }
    const g = svg("g", { class: "st-node st-" + n.status, transform: "translate(" + X(n) + "," + Y(n) + ")",
      "data-node": n.id, tabindex: 0 });
    const label = nodeLabel(n.token), w = textWidth(label) + 8;
    g.appendChild(svg("rect", { x: -3, y: -9, width: w, height: 18, rx: 4 }));
    g.appendChild(svg("text", { x: 1, y: 4 }, label));
    const logProb = fixed(n.log_prob, 2), score = fixed(n.score, 2), status = STATUS[n.status] || n.status;
    g.appendChild(svg("title", {}, n.ids.length ? t("beam.node_pieces", { n: n.ids.length, log_prob: logProb, score, status })
      : t("beam.node", { log_prob: logProb, score, status })));
    if (n.step >= 0) g.appendChild(svg("text", { x: 1, y: 19, class: "st-score" }, fixed(n.log_prob, 1)));
    g.addEventListener("click", () => opts.onPick(n));
    g.addEventListener("keydown", (e) => (e.key === "Enter" || e.key === " ") && opts.onPick(n));
    dots.appendChild(g);
  }
  container.replaceChildren(root);
  return root;
}

/** The ranked finished sentences as buttons; opts.text(node) writes a hypothesis as words. */
export function drawNBest(container, trace, opts) {
  const byId = new Map(trace.beam.map((n) => [n.id, n]));
  const items = trace.nbest.map((id, rank) => {
    const n = byId.get(id), b = document.createElement("button");
    b.type = "button"; b.className = "st-hyp" + (n.status === "winner" ? " st-win" : ""); b.dataset.node = String(id);
    const score = document.createElement("span");
    score.className = "st-hyp-score";
    score.textContent = t("beam.score", { score: fixed(n.score, 3) });
    const words = document.createElement("span"); // the English, marked as such (content.js)
    Object.assign(words, { lang: "en", translate: false, textContent: opts.text(n) });
    b.append(...parts("beam.nbest", { rank: rank + 1, text: words, score }));
    b.title = t("beam.nbest_title", { log_prob: fixed(n.log_prob, 3), n: n.ids.length, length_penalty: trace.length_penalty });
    b.addEventListener("click", () => opts.onPick(n));
    return b;
  });
  container.replaceChildren(...items);
}
