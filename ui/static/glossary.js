// @ts-check
/* Attention Lens, the glossary: the words of the Transformer as the page uses them, in the page's language (the
   Chinese ones those of the Chinese tutorials and the Hugging Face course, with d2l-zh's beside them where it says
   otherwise). One dialog lists them all (the header's
   "Glossary" button, or window.attentionLens.glossary(id)); in the page's explanations the first use of a term in
   each paragraph is underlined, its meaning in a tooltip, and a click opens the dialog at it.

   A term's three messages: glossary.<id>.term (how the list names it), .match (the forms found in a text,
   comma-separated) and .gloss (one or two sentences). */
import { publish } from "./door.js";
import { t } from "./i18n.js";

/** Each term's [name, forms to find, meaning], read in the page's language when asked. */
const TERMS = {
  token: () => [t("glossary.token.term"), t("glossary.token.match"), t("glossary.token.gloss")],
  embedding: () => [t("glossary.embedding.term"), t("glossary.embedding.match"), t("glossary.embedding.gloss")],
  positional_encoding: () => [t("glossary.positional_encoding.term"), t("glossary.positional_encoding.match"), t("glossary.positional_encoding.gloss")],
  encoder: () => [t("glossary.encoder.term"), t("glossary.encoder.match"), t("glossary.encoder.gloss")],
  decoder: () => [t("glossary.decoder.term"), t("glossary.decoder.match"), t("glossary.decoder.gloss")],
  qkv: () => [t("glossary.qkv.term"), t("glossary.qkv.match"), t("glossary.qkv.gloss")],
  self_attention: () => [t("glossary.self_attention.term"), t("glossary.self_attention.match"), t("glossary.self_attention.gloss")],
  cross_attention: () => [t("glossary.cross_attention.term"), t("glossary.cross_attention.match"), t("glossary.cross_attention.gloss")],
  multi_head: () => [t("glossary.multi_head.term"), t("glossary.multi_head.match"), t("glossary.multi_head.gloss")],
  mask: () => [t("glossary.mask.term"), t("glossary.mask.match"), t("glossary.mask.gloss")],
  score: () => [t("glossary.score.term"), t("glossary.score.match"), t("glossary.score.gloss")],
  softmax: () => [t("glossary.softmax.term"), t("glossary.softmax.match"), t("glossary.softmax.gloss")],
  residual: () => [t("glossary.residual.term"), t("glossary.residual.match"), t("glossary.residual.gloss")],
  layernorm: () => [t("glossary.layernorm.term"), t("glossary.layernorm.match"), t("glossary.layernorm.gloss")],
  add_norm: () => [t("glossary.add_norm.term"), t("glossary.add_norm.match"), t("glossary.add_norm.gloss")],
  feed_forward: () => [t("glossary.feed_forward.term"), t("glossary.feed_forward.match"), t("glossary.feed_forward.gloss")],
  logits: () => [t("glossary.logits.term"), t("glossary.logits.match"), t("glossary.logits.gloss")],
  beam_search: () => [t("glossary.beam_search.term"), t("glossary.beam_search.match"), t("glossary.beam_search.gloss")],
  greedy: () => [t("glossary.greedy.term"), t("glossary.greedy.match"), t("glossary.greedy.gloss")],
  log_probability: () => [t("glossary.log_probability.term"), t("glossary.log_probability.match"), t("glossary.log_probability.gloss")],
  nats: () => [t("glossary.nats.term"), t("glossary.nats.match"), t("glossary.nats.gloss")],
  logit_lens: () => [t("glossary.logit_lens.term"), t("glossary.logit_lens.match"), t("glossary.logit_lens.gloss")],
  attribution: () => [t("glossary.attribution.term"), t("glossary.attribution.match"), t("glossary.attribution.gloss")],
  alti: () => [t("glossary.alti.term"), t("glossary.alti.match"), t("glossary.alti.gloss")],
  patching: () => [t("glossary.patching.term"), t("glossary.patching.match"), t("glossary.patching.gloss")],
};

// The page's explanations: where a term is underlined (never the German, the English, a label or a control).
const GLOSSED = ".al-tour-text, [data-i18n]:not(button):not(label):not(span), .al-readout, .st-note, .al-who-note, .al-h-note, " +
  ".st-why-lead, .hl-notes, .al-qkv-note, .al-patch-note, .al-notes";
const SKIP = "dfn, code, button, a, input, textarea, select, summary, h1, h2, h3, [lang='de'], [lang='en'], [translate='no'], svg, canvas";

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** [id, the pattern that finds any of its forms] of each term, the longest forms first (so that "多头注意力" is
    found before "注意力头"). A Latin form must stand as a word; a Chinese form anywhere.
    @returns {[string, RegExp][]} */
function patterns() {
  const forms = Object.entries(TERMS).flatMap(([id, read]) => read()[1].split(",").map((f) => [id, f.trim()]))
    .filter(([, f]) => f).sort((a, b) => b[1].length - a[1].length);
  return forms.map(([id, f]) => /** @type {[string, RegExp]} */ ([id, new RegExp(/^[\w+ -]+$/.test(f) ? `(?<![\\w-])${escape(f)}(?![\\w-])` : escape(f),
    /^[\w+ -]+$/.test(f) ? "i" : "")]));
}

/** The first use of each term in `block`'s own text, underlined: <dfn class="al-term" data-term=id title=meaning>. */
export function glossBlock(block, found = patterns()) {
  const seen = new Set(/** @type {string[]} */ ([...block.querySelectorAll("dfn.al-term")].map((d) => d.dataset.term)));
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  const texts = /** @type {Text[]} */ ([]);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement.closest(SKIP)) texts.push(/** @type {Text} */ (n));
  for (const node of texts) {
    let best = null;
    for (const [id, pattern] of found) {
      if (seen.has(id)) continue;
      const m = pattern.exec(node.data);
      if (m && (!best || m.index < best.index)) best = { id, index: m.index, length: m[0].length };
    }
    if (!best) continue;
    seen.add(best.id);
    const word = node.splitText(best.index);
    word.splitText(best.length);
    const [name, , meaning] = TERMS[best.id]();
    const dfn = document.createElement("dfn");
    Object.assign(dfn, { className: "al-term", title: `${name}: ${meaning}`, tabIndex: 0 });
    dfn.dataset.term = best.id;
    word.replaceWith(dfn);
    dfn.append(word);
  }
}

/** The glossary's dialog, made once; `id`: the term it scrolls to. */
export function openGlossary(id) {
  let box = /** @type {HTMLDialogElement | null} */ (document.querySelector("dialog.al-glossary"));
  if (!box) {
    box = document.createElement("dialog");
    box.className = "al-glossary";
    box.setAttribute("aria-labelledby", "al-glossary-title");
    document.body.append(box);
  }
  const list = document.createElement("dl");
  for (const [term, read] of Object.entries(TERMS)) {
    const [name, , meaning] = read();
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.id = `al-term-${term}`;
    dt.textContent = name;
    dd.textContent = meaning;
    list.append(dt, dd);
  }
  const title = document.createElement("h2"), lead = document.createElement("p"), close = document.createElement("button");
  title.id = "al-glossary-title";
  title.textContent = t("glossary.title");
  lead.textContent = t("glossary.lead");
  Object.assign(close, { type: "button", className: "al-glossary-close", textContent: t("glossary.close") });
  close.addEventListener("click", () => box.close());
  box.replaceChildren(close, title, lead, list);
  if (!box.open) box.showModal();
  const at = id && box.querySelector(`#al-term-${id}`);
  if (at) { at.scrollIntoView({ block: "center" }); at.classList.add("al-term-here"); }
  close.focus();
  return box;
}

/** Underline the terms of every explanation now and whenever one appears; the header's button opens the list. */
export function startGlossary() {
  const found = patterns();
  const gloss = (root) => {
    if (!(root instanceof Element)) return;
    const blocks = root.matches(GLOSSED) ? [root] : [...root.querySelectorAll(GLOSSED)];
    for (const block of blocks) glossBlock(block, found);
  };
  gloss(document.body);
  new MutationObserver((records) => {
    for (const r of records) for (const node of r.addedNodes) {
      if (node instanceof Element && !node.matches("dfn.al-term")) gloss(node);
      else if (node instanceof Text && node.parentElement && !node.parentElement.closest("dfn")) {
        const block = node.parentElement.closest(GLOSSED);
        if (block) glossBlock(block, found);
      }
    }
  }).observe(document.body, { childList: true, subtree: true });
  document.addEventListener("click", (e) => {
    const target = /** @type {Element} */ (e.target);
    if (!target || !target.closest) return;
    const term = /** @type {HTMLElement | null} */ (target.closest("dfn.al-term"));
    if (term) openGlossary(term.dataset.term);
    else if (target.closest(".al-glossary-open")) openGlossary();
  });
  document.addEventListener("keydown", (e) => {
    const term = /** @type {HTMLElement | null} */ (e.target instanceof Element ? e.target.closest("dfn.al-term") : null);
    if (term && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); openGlossary(term.dataset.term); }
  });
}

publish({ glossary: openGlossary });
