// @ts-check
/* Attention Lens, the German and English the page shows, marked as such: the sentence typed, the translation, the
   pieces and the words quoted in an explanation keep their language whatever language the page speaks. Each such
   element gets lang="de" or lang="en" (a screen reader then reads it in its own language) and translate="no" (a
   browser's translator leaves it alone).

   Two kinds are marked as they appear: the elements that hold only content (WORDS: a translation's words, the
   pieces of a map's table, the walk's choices, Gradio's example sentences...), and the words quoted in a sentence
   of the page's own (“Junge”, ‘boy’), wrapped in a <span>. Which language: what a view says it is (LANGS), else
   German when every word of it is in the German being translated, else English. */
import { get } from "./store.js";

/** The elements whose text is content, not the page's words: the selector, the language where it is known. */
const WORDS = /** @type {[string, string | null][]} */ ([
  ["#source textarea, #step-source textarea, #headlab-source textarea, #history-source textarea", "de"],
  ["#examples-column .gallery button, #step-view .gallery button, .al-ev-word, .al-sentence-text", "de"],
  [".al-word, .al-english, .al-h-english, .st-w, .st-cand-label, .st-why-chip, .st-tree-svg text", "en"],
  [".st-card-text, .st-chip-word, .al-tour-choice, .hl-words, .al-who-word, .al-who-col, .al-who-row, .al-patch-chip, .al-patch-pair, .al-ladder th:not(:first-child)", null],
]);
const QUOTED = /([“‘])([^“”‘’]*[A-Za-zÄÖÜäöüß][^“”‘’]*)([”’])/g;
const CHINESE = /[\u3400-\u9fff]/;
const SKIP = "[lang='de'], [lang='en'], [translate='no'], code, script, style, textarea, input, svg";

/** "de" when every word of `text` is a word of the German sentence `german` (letters compared in lower case), else
    "en". */
export function languageOf(text, german) {
  const words = (s) => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []);
  const known = new Set(words(german || ""));
  const own = words(text);
  return own.length && own.every((w) => known.has(w)) ? "de" : "en";
}

function mark(el, lang) {
  if (el.getAttribute("lang") !== lang) el.setAttribute("lang", lang);
  if (el.getAttribute("translate") !== "no") el.setAttribute("translate", "no");
}

/** The quoted content of one text node in `lang`-less page text, each quotation's inside wrapped and marked. */
function markQuotes(node, german) {
  QUOTED.lastIndex = 0;
  let m = QUOTED.exec(node.data);
  while (m && CHINESE.test(m[2])) m = QUOTED.exec(node.data); // a Chinese name in quotes is the page's own
  if (!m) return;
  const inside = node.splitText(m.index + m[1].length);
  const rest = inside.splitText(m[2].length);
  const span = document.createElement("span");
  mark(span, languageOf(m[2], german));
  inside.replaceWith(span);
  span.append(inside);
  markQuotes(rest, german); // the next quotation, if any
}

/** Every content element and quotation under `root` marked with its language. */
export function markContent(root) {
  if (!(root instanceof Element)) return;
  const german = get().sentence || (/** @type {HTMLTextAreaElement | null} */ (document.querySelector("#source textarea, #site-source")) || { value: "" }).value;
  for (const [selector, lang] of WORDS) {
    for (const el of [...(root.matches(selector) ? [root] : []), ...root.querySelectorAll(selector)]) {
      const text = el.textContent || "";
      if (lang || (/[A-Za-z]/.test(text) && !CHINESE.test(text))) mark(el, lang || languageOf(text, german)); // the page's own "(nothing)" stays
    }
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts = /** @type {Text[]} */ ([]);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (/[“‘]/.test(/** @type {Text} */ (n).data) && n.parentElement && !n.parentElement.closest(SKIP)) texts.push(/** @type {Text} */ (n));
  }
  for (const node of texts) markQuotes(node, german);
}

/** Mark the page now and whatever appears later. */
export function startContent() {
  markContent(document.body);
  new MutationObserver((records) => {
    for (const r of records) {
      for (const node of r.addedNodes) {
        if (node instanceof Element) markContent(node);
        else if (node instanceof Text && node.parentElement && !node.parentElement.closest(SKIP)) markContent(node.parentElement);
      }
    }
  }).observe(document.body, { childList: true, subtree: true });
}
