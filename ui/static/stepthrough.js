// @ts-check
/* Attention Lens, the step-through view. The server traces one sentence (ui/step_through.py: greedy and
   beam search); here a slider steps through it. At step t: the words so far, the likeliest next
   pieces (click one, or type a word, to force it), the German words shaded by this step's
   cross-attention and the English so far by its self-attention. Forcing and a hypothesis's maps
   ask the server once (server.force, server.hypothesis); maps are drawn by the shared Viewer.
   Words and sentences: steptext.js; the beam tree: beam.js. */
import { el } from "./draw.js";
import { drawBeamTree, drawNBest, nodeLabel } from "./beam.js";
import { SPECIAL } from "./core.js";
import { unfamiliarNotice } from "./result.js";
import { answerText, fixed, t } from "./i18n.js";
import { drawInside, mountInside } from "./stepinside.js";
import { changedWords, describeChoice, glue, percent, sentenceOf, wordsOf } from "./steptext.js";
import { Viewer, themeOf } from "./viewer.js";
import { drawWhy, mountWhy } from "./why.js";
import { register } from "./store.js";

const pct = percent;
const logProb = (tr) => tr.probs.reduce((a, p) => a + Math.log(Math.max(p, 1e-12)), 0);
function wordLine(words, changed, cls) {
  const line = el("div", "st-line");
  words.forEach((w, i) => line.append(i ? glue(w) : "", el("span", "st-w" + (changed[i] ? " " + cls : ""), w)));
  return line;
}
function bytesOf(b64) {
  const text = atob(b64), bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** One attention row of step t (layer, head or null = mean), summed over the pieces of each group.
    @param {Trace} tr @param {"cross" | "decoder"} kind @param {number} t @param {number} layer
    @param {number | null} head @param {number} L @param {number} H @param {PieceWord[]} groups */
function row(tr, kind, t, layer, head, L, H, groups) {
  tr._bytes = tr._bytes || { cross: bytesOf(tr.cross), decoder: bytesOf(tr.decoder) };
  const width = kind === "cross" ? tr.src.tokens.length : tr.tokens.length, bytes = tr._bytes[kind];
  const heads = head === null ? [...Array(H).keys()] : [head];
  return groups.map((g) => {
    let sum = 0;
    for (const h of heads) for (const j of g.span) sum += bytes[((t * L + layer) * H + h) * width + j];
    return sum / 255 / heads.length;
  });
}

export class StepView {
  constructor(element, server) {
    this.server = server;
    /** @type {StepViewLike["state"]} */
    this.state = { which: "beam", t: 0, layer: null, head: null, guess: false };
    /** @type {StepPayload | null} */
    this.x = null;
    /** @type {Trace | null} */
    this.forced = null; // the trace with a word forced
    this.guesses = new Map(); // "which:t:layer:head" -> the German word guessed (guess first)
    this.score = { tries: 0, right: 0 };
    this.root = el("div", "st-view st-empty");
    element.appendChild(this.root);
    this.build();
  }

  section(cls, title) {
    const box = el("section", "st-panel " + cls);
    if (title) box.appendChild(el("h3", "st-title", title));
    return box;
  }

  build() {
    const r = this.root;
    this.message = el("div", "st-message", t("stepthrough.start"));
    this.notice = el("div", "al-notice st-notice"); // unlike the training data (result.js)
    this.notice.hidden = true;
    this.compare = el("div", "st-compare");
    const stepper = el("div", "st-stepper");
    this.prev = el("button", "st-nav", "\u2190"); this.next = el("button", "st-nav", "\u2192");
    this.prev.title = t("stepthrough.previous"); this.next.title = t("stepthrough.next");
    this.slider = el("input", "st-slider"); this.slider.type = "range"; this.slider.min = "0"; this.slider.step = "1";
    this.slider.setAttribute("aria-label", t("stepthrough.slider"));
    this.count = el("span", "st-count");
    stepper.append(this.prev, this.slider, this.next, this.count);
    this.prev.addEventListener("click", () => this.go(this.state.t - 1));
    this.next.addEventListener("click", () => this.go(this.state.t + 1));
    this.slider.addEventListener("input", () => this.go(+this.slider.value));
    r.tabIndex = -1;
    r.addEventListener("keydown", (e) => {
      const target = /** @type {HTMLInputElement} */ (e.target);
      if (target.tagName === "INPUT" && target.type === "text") return;
      if (e.key === "ArrowLeft" || e.key === "ArrowRight") { // the slider's own keys too: one step each
        e.preventDefault();
        this.go(this.state.t + (e.key === "ArrowLeft" ? -1 : 1));
      }
    });
    this.sofar = el("div", "st-sofar");
    this.cands = this.section("st-cands", t("stepthrough.candidates"));
    this.bars = el("div", "st-bars");
    this.entropy = el("p", "st-entropy");
    const form = el("form", "st-type");
    this.typed = el("input"); this.typed.type = "text"; this.typed.placeholder = t("stepthrough.type_word"); this.typed.maxLength = 40;
    this.typed.setAttribute("aria-label", t("stepthrough.type_word_label"));
    const forceButton = el("button", "st-force", t("stepthrough.force")); forceButton.type = "submit";
    form.append(this.typed, forceButton);
    form.addEventListener("submit", (e) => { e.preventDefault(); if (this.typed.value.trim()) this.force(null, this.typed.value); });
    this.cands.append(this.bars, this.entropy, form);
    mountWhy(this, this.cands); // why.js: "why this word and not that one?"
    mountInside(this, this.cands); // stepinside.js: who wrote it, when it was decided
    this.attn = this.section("st-attn", "");
    this.attnTitle = this.attn.appendChild(el("h3", "st-title"));
    this.toolbar = this.attn.appendChild(el("div", "al-toolbar st-toolbar"));
    this.guessButton = this.attn.appendChild(el("button", "st-guess-toggle", t("stepthrough.guess_first")));
    this.guessButton.type = "button";
    this.guessButton.title = t("stepthrough.guess_first_title");
    this.guessButton.setAttribute("aria-pressed", "false");
    this.guessButton.addEventListener("click", () => {
      this.state.guess = !this.state.guess;
      this.guessButton.setAttribute("aria-pressed", String(this.state.guess));
      this.go(this.state.t);
    });
    this.src = this.attn.appendChild(el("div", "st-chips st-src"));
    this.guessNote = this.attn.appendChild(el("p", "st-guess-note"));
    this.selfTitle = this.attn.appendChild(el("h3", "st-title"));
    this.self = this.attn.appendChild(el("div", "st-chips st-self"));
    const grid = el("div", "st-grid");
    grid.append(this.cands, this.attn);
    this.whatif = this.section("st-whatif", t("stepthrough.what_if"));
    this.whatif.hidden = true;
    this.beam = this.section("st-beam", "");
    this.beamTitle = this.beam.appendChild(el("h3", "st-title"));
    this.beam.appendChild(el("p", "st-note", t("stepthrough.beam_note")));
    // "Whole tree" scales it to the width (a phone's first view); "Actual size" reads it, scrolling.
    this.fit = this.beam.appendChild(el("button", "st-tree-toggle"));
    this.fit.type = "button";
    this.fit.addEventListener("click", () => this.fitTree(!this.tree.classList.contains("st-tree-fit")));
    this.tree = this.beam.appendChild(el("div", "st-tree"));
    this.fitTree(window.innerWidth <= 720);
    this.nbest = this.beam.appendChild(el("div", "st-nbest"));
    this.maps = this.section("st-maps", "");
    this.mapsTitle = this.maps.appendChild(el("h3", "st-title"));
    this.maps.hidden = true;
    r.append(this.message, this.notice, this.compare, stepper, this.sofar, grid, this.whatif, this.beam, this.maps);
  }

  trace() { return this.state.which === "forced" ? this.forced : this.x[this.state.which]; }

  fitTree(fit) {
    this.tree.classList.toggle("st-tree-fit", fit);
    this.fit.textContent = fit ? t("stepthrough.tree_actual") : t("stepthrough.tree_whole");
    this.fit.setAttribute("aria-pressed", String(fit));
  }

  /** @param {StepPayload | null} x */
  show(x) {
    this.root.classList.remove("st-busy");
    this.x = x; this.forced = null;
    this.root.dataset.shown = x && x.id ? String(x.id) : "";
    const ok = x && x.greedy;
    this.root.classList.toggle("st-empty", !ok);
    this.message.textContent = x && x.error ? answerText(x) : ok ? "" : this.message.textContent;
    this.message.classList.toggle("st-error", !!(x && x.error));
    unfamiliarNotice(this.notice, ok ? x : null);
    if (!ok) return;
    this.state.which = x.beam ? "beam" : "greedy";
    this.state.t = 0;
    this.whatif.hidden = true; this.maps.hidden = true;
    this.drawCompare();
    this.drawToolbar();
    this.drawBeam();
    this.go(0);
  }

  drawCompare() {
    const x = this.x;
    /** @type {[which: string, name: string, how: string, tr: Trace][]} */
    const cards = [["greedy", t("stepthrough.greedy"), t("stepthrough.greedy_how"), x.greedy]];
    if (x.beam) cards.push(["beam", t("stepthrough.beam"), t("stepthrough.beam_how", { n: x.num_beams }), x.beam]);
    if (this.forced) cards.push(["forced", t("stepthrough.forced"), t("stepthrough.forced_how"), this.forced]);
    this.compare.replaceChildren(...cards.map(([which, name, how, tr]) => {
      const card = el("button", "st-card"); card.type = "button"; card.dataset.which = which;
      card.setAttribute("aria-pressed", String(which === this.state.which));
      const meta = { total: fixed(logProb(tr), 2), n: tr.tokens.length, mean: fixed(logProb(tr) / tr.tokens.length, 3) };
      card.append(el("span", "st-card-name", t("stepthrough.card_name", { name, how })),
        el("span", "st-card-text", tr.translation || t("stepthrough.nothing")),
        el("span", "st-card-meta", which === this.state.which ? t("stepthrough.card_current", meta)
          : t("stepthrough.card_other", meta)));
      card.addEventListener("click", () => { this.state.which = which; this.drawCompare(); this.go(Math.min(this.state.t, this.trace().tokens.length - 1)); });
      return card;
    }));
  }

  drawToolbar() {
    const L = this.x.layers, H = this.x.heads, box = (name, label, choices) => {
      const g = el("div", "al-group st-" + name); g.appendChild(el("span", "al-group-label", label));
      for (const [value, text] of choices) {
        const b = el("button", "al-choice", text); b.type = "button"; b.dataset.value = value;
        b.addEventListener("click", () => { this.state[name] = value === "mean" ? null : +value; this.go(this.state.t); });
        g.appendChild(b);
      }
      return g;
    };
    this.toolbar.replaceChildren(box("layer", t("stepthrough.layer"), [...Array(L).keys()].map((l) => [String(l), String(l + 1)])),
      box("head", t("stepthrough.head"), [["mean", t("stepthrough.mean")]]
        .concat([...Array(H).keys()].map((h) => [String(h), String(h + 1)]))));
  }

  /** Show step t: everything here is drawn from the trace already in the page. */
  go(step) {
    const tr = this.trace(), T = tr.tokens.length, s = this.state;
    s.t = step = Math.max(0, Math.min(T - 1, step));
    this.slider.max = String(T - 1); this.slider.value = String(step);
    this.prev.disabled = step === 0; this.next.disabled = step === T - 1;
    this.count.textContent = t("stepthrough.count", { step: step + 1, steps: T });
    const words = wordsOf(tr.tokens);
    this.sofar.replaceChildren(el("span", "st-label", t("stepthrough.so_far")), ...words.map((w, i) => {
      const state = w.span[w.span.length - 1] < step ? "st-done" : w.span.includes(step) ? "st-now" : "st-later";
      const span = el("span", "st-w " + state, w.text === "</s>" ? t("stepthrough.end") : w.text);
      return [i ? glue(w.text) : "", span];
    }).flat());
    const top = tr.top[step], best = top[0][2];
    this.bars.replaceChildren(...top.map(([piece, id, p]) => {
      const b = el("button", "st-cand" + (id === tr.ids[step] ? " st-chosen" : "")); b.type = "button"; b.dataset.id = id;
      const bar = el("span", "st-bar"); bar.style.width = (100 * p / best).toFixed(1) + "%";
      b.append(el("span", "st-cand-label", nodeLabel(piece)), el("span", "st-bar-box", undefined), el("span", "st-p", pct(p)));
      b.children[1].appendChild(bar);
      b.title = id === tr.ids[step] ? t("stepthrough.written", { p: fixed(p, 3) })
        : t("stepthrough.force_this", { word: nodeLabel(piece), p: fixed(p, 3) });
      if (piece === "</s>" && id !== tr.ids[step]) { b.disabled = true; b.title = t("stepthrough.cannot_force_end"); }
      else if (id !== tr.ids[step]) b.addEventListener("click", () => this.force(id));
      return b;
    }));
    this.entropy.textContent = describeChoice(tr, step);
    drawWhy(this, tr, step);
    drawInside(this, tr, step);
    this.drawAttention(tr, step);
    this.root.dataset.step = step; this.root.dataset.which = s.which;
  }

  drawAttention(tr, step) {
    const s = this.state, L = this.x.layers, H = this.x.heads, layer = s.layer === null ? L - 1 : s.layer;
    /** @type {NodeListOf<HTMLElement>} */ (this.toolbar.querySelectorAll(".st-layer .al-choice")).forEach((b) => b.setAttribute("aria-pressed", String(+b.dataset.value === layer)));
    /** @type {NodeListOf<HTMLElement>} */ (this.toolbar.querySelectorAll(".st-head .al-choice")).forEach((b) => b.setAttribute("aria-pressed",
      String(b.dataset.value === (s.head === null ? "mean" : String(s.head)))));
    const word = nodeLabel(tr.tokens[step]);
    this.attnTitle.textContent = t("stepthrough.looked", { word });
    const src = tr.src.words.map(([w, span]) => ({ text: w, span: span }));
    const values = row(tr, "cross", step, layer, s.head, L, H, src);
    const key = [s.which, step, layer, s.head].join(":");
    if (s.guess && !this.guesses.has(key)) this.askGuess(src, values, key, word);
    else {
      this.chips(this.src, src, values);
      this.markGuess(src, values, s.guess ? this.guesses.get(key) : null);
    }
    this.selfTitle.textContent = t("stepthrough.looked_back");
    const read = wordsOf(["<s>"].concat(tr.tokens.slice(0, step)));
    this.chips(this.self, read, row(tr, "decoder", step, layer, s.head, L, H, read));
  }

  /** Guess first: the German words without their weights; a click is the guess, then the answer shows. */
  askGuess(src, values, key, word) {
    this.attnTitle.textContent = t("stepthrough.your_guess", { word });
    this.src.replaceChildren(...src.map((w, i) => {
      const chip = el("button", "st-chip st-chip-guess", w.text);
      chip.type = "button";
      chip.title = t("stepthrough.guess_chip", { word: w.text });
      chip.addEventListener("click", () => {
        this.guesses.set(key, i);
        this.score.tries += 1;
        if (values[i] >= Math.max(...values)) this.score.right += 1;
        this.go(this.state.t);
      });
      return chip;
    }));
    this.guessNote.textContent = this.scoreText();
  }

  markGuess(src, values, guessed) {
    if (guessed == null) { this.guessNote.textContent = this.state.guess ? this.scoreText() : ""; return; }
    const top = values.indexOf(Math.max(...values)), chips = this.src.children;
    if (chips[guessed]) chips[guessed].classList.add("st-guessed");
    if (chips[top]) chips[top].classList.add("st-top");
    const word = src[guessed].text, weight = fixed(values[guessed], 2), score = this.scoreText();
    this.guessNote.textContent = guessed === top ? t("stepthrough.guess_right", { word, weight, score })
      : t("stepthrough.guess_wrong", { word, weight, top: src[top].text, top_weight: fixed(values[top], 2), score });
  }

  scoreText() {
    const { tries, right } = this.score;
    return tries ? t("stepthrough.score", { right, tries }) : t("stepthrough.guess_hint");
  }

  chips(box, words, values) {
    const max = Math.max(...values, 1e-6), dark = themeOf(this.root).dark;
    box.replaceChildren(...words.map((w, i) => {
      const chip = el("span", "st-chip"), v = values[i];
      chip.style.background = (dark ? "rgba(255,138,61," : "rgba(228,88,11,") + (0.08 + 0.8 * v / max).toFixed(2) + ")";
      chip.append(el("span", "st-chip-word", w.text === "<s>" ? t("stepthrough.start_token") : w.text),
        el("span", "st-chip-v", fixed(v, 2)));
      chip.title = t("stepthrough.chip", { word: w.text, weight: fixed(v, 2) });
      return chip;
    }));
  }

  drawBeam() {
    const tr = this.x.beam;
    this.beam.hidden = !tr;
    if (!tr) return;
    this.beamTitle.textContent = t("stepthrough.beam_title", { beams: this.x.num_beams, nodes: tr.beam.length });
    const text = (n) => sentenceOf(n.ids.map((_, i) => this.pieceOf(n, i)));
    const pick = (n) => this.openMaps(n.ids, t("stepthrough.hypothesis_maps", { text: text(n) }));
    drawBeamTree(this.tree, tr, { onPick: pick });
    drawNBest(this.nbest, tr, { onPick: pick, text: text });
  }

  /** Piece i of a beam node, found from its ancestors (each node holds its own last piece). */
  pieceOf(node, i) {
    /** @type {Map<number, BeamNode> & {tree?: Trace}} */
    const byId = this._byId || (this._byId = new Map());
    if (byId.tree !== this.x.beam) { byId.clear(); this.x.beam.beam.forEach((n) => byId.set(n.id, n)); byId.tree = this.x.beam; }
    let n = node;
    while (n.ids.length > i + 1) n = byId.get(n.parent);
    return n.token;
  }

  async force(id, word) {
    const tr = this.trace(), step = this.state.t, ids = tr.ids.slice(0, step).concat(id === null ? [] : [id]);
    this.whatif.hidden = false;
    this.whatif.replaceChildren(el("h3", "st-title", t("stepthrough.what_if")), el("p", "st-note", t("stepthrough.asking")));
    this.whatif.dataset.shown = "";
    const r = await this.call("force", { text: this.x.source, num_beams: tr.num_beams, ids: ids, word: id === null ? word : null,
      model: this.x.model || "auto" });
    if (r.error) { this.whatif.replaceChildren(el("h3", "st-title", t("stepthrough.what_if")), el("p", "st-error", answerText(r))); return; }
    this.forced = r.trace;
    const plain = (tokens) => wordsOf(tokens).filter((w) => !(w.text in SPECIAL));
    const before = plain(tr.tokens).map((w) => w.text), afterWords = plain(r.trace.tokens), after = afterWords.map((w) => w.text);
    const changed = changedWords(before, after), what = id === null ? word.trim() : nodeLabel(r.trace.tokens[step]);
    const at = afterWords.findIndex((w) => w.span.includes(step));
    const pair = el("div", "st-pair"), left = el("div", "st-col"), right = el("div", "st-col st-new");
    left.append(el("div", "st-col-name", t("stepthrough.model_choice")), wordLine(before, changed.before, "st-dropped"));
    right.append(el("div", "st-col-name", t("stepthrough.forced_at", { word: what, step: step + 1 })),
      wordLine(after, changed.after, "st-changed"));
    if (at >= 0) right.querySelectorAll(".st-w")[at].classList.add("st-forced-word");
    pair.append(left, right);
    const n = changed.after.filter(Boolean).length + changed.before.filter(Boolean).length;
    const stepIt = el("button", "st-nav st-step-forced", t("stepthrough.step_it"));
    stepIt.type = "button";
    stepIt.addEventListener("click", () => { this.state.which = "forced"; this.drawCompare(); this.go(step); });
    this.whatif.replaceChildren(el("h3", "st-title", t("stepthrough.what_if_word", { word: what })), pair,
      el("p", "st-note", n ? t("stepthrough.changed") : t("stepthrough.unchanged")), stepIt);
    this.whatif.dataset.shown = r.maps.id;
    this.drawCompare();
    this.showMaps(r.maps, t("stepthrough.forced_maps", { word: what }));
  }

  /** One server function, called with one object (the page's server functions take one argument). */
  async call(name, request) {
    try { return await this.server[name](request); } catch (err) {
      return { error: t("stepthrough.no_answer", { error: String(err) }) };
    }
  }

  async openMaps(ids, title) {
    this.maps.hidden = false;
    this.mapsTitle.textContent = t("stepthrough.loading", { title });
    const r = await this.call("hypothesis", { text: this.x.source, ids: ids, model: this.x.model || "auto" });
    if (r.error) { this.mapsTitle.textContent = answerText(r); return; }
    this.showMaps(r, title);
  }

  showMaps(payload, title) {
    this.maps.hidden = false;
    this.mapsTitle.textContent = title;
    if (!this.viewer) this.viewer = new Viewer(this.maps, { sentencePicker: false });
    this.viewer.show(payload);
    this.maps.dataset.shown = payload.id;
    this.maps.dataset.translation = payload.sentences[0].translation;
  }
}

/** js_on_load of the view's gr.HTML: build once, redraw when its value changes. */
export function mountStep(element, props, watch, server) {
  const view = new StepView(element.querySelector(".al-mount") || element, server);
  register("step", view);
  if (props.value) view.show(props.value);
  watch("value", () => view.show(props.value));
  new MutationObserver(() => view.x && view.x.greedy && view.go(view.state.t))
    .observe(document.body, { attributes: true, attributeFilter: ["class"] });
}
