// @ts-check
/* Attention Lens, one view per URL: `?view=NAME&embed=1` shows only that view (the door's names, views.js), sized
   to its iframe, without the header and the walk, on the app and the static site; `&concept=ID` opens one of the
   picture's twelve steps inside the translate view ("the mask step for this sentence"). The sentence, the locale
   and the model come with the link as on a plain visit: the app's fragment (#s=...&model=..., walk.js) or, on the
   static site, ?s= and ?model=. Everything the link sets is read as text: a name the door does not know is said on
   the page, never run. */
import { offered } from "./door.js";
import { pageSentence, VIEW_NAMES } from "./views.js";

// The element each view lives in, on either front door: the page keeps it and its ancestors, hides the rest.
const ROOTS = {
  translate: "#result, #site-result", who: "#result, #site-result", patch: "#result, #site-result",
  ladder: "#result, #site-result", code: "#result, #site-result", qkv: "#result, #site-result",
  step: "#view-step, #site-step", why: "#view-step, #site-step", headlab: "#view-headlab, #site-headlab",
  history: "#view-history, #site-history", copylab: "#view-copylab, #site-copylab", glossary: "dialog.al-glossary",
};

/** The link's embed request: {view, concept} where ?embed=1, else null. */
export function embedRequest(search = location.search) {
  const q = new URLSearchParams(search);
  if (q.get("embed") !== "1") return null;
  return { view: q.get("view") || "translate", concept: q.get("concept") || null };
}

/** Hide everything on the page but `keep` and its ancestors (each ancestor's other children hidden). */
function keepOnly(keep) {
  for (let node = keep; node && node !== document.body; node = node.parentElement) {
    for (const sibling of node.parentElement ? [...node.parentElement.children] : []) {
      if (sibling !== node && !["SCRIPT", "STYLE", "LINK"].includes(sibling.tagName)) sibling.setAttribute("data-embed-hidden", "");
    }
  }
}

/** Wait for the page's first translation, open the view (and the step), keep only it. */
export async function startEmbed() {
  const asked = embedRequest();
  if (!asked) return;
  document.documentElement.classList.add("al-embed");
  const since = Date.now();
  while (!pageSentence() && Date.now() - since < 120000) await new Promise((r) => setTimeout(r, 200));
  const say = (text) => { const p = document.createElement("p"); p.className = "al-embed-error"; p.textContent = text; document.body.prepend(p); };
  if (!VIEW_NAMES.includes(asked.view)) { say(`view=${asked.view}: no such view (${VIEW_NAMES.join(", ")})`); return; }
  try {
    await offered().openView(asked.view);
    if (asked.concept) {
      const step = (offered().concepts ? offered().concepts() : []).find((c) => c.id === asked.concept);
      if (!step) { say(`concept=${asked.concept}: no such step`); return; }
      await step.open(null);
    }
  } catch (err) {
    say(String(err.message || err));
    return;
  }
  const root = /** @type {HTMLElement | null} */ (asked.concept ? document.querySelector(`[data-concept="${CSS.escape(asked.concept)}"]`)
    : document.querySelector(ROOTS[asked.view]));
  if (root) keepOnly(root);
  document.documentElement.classList.add("al-embed-ready"); // tests and the iframe's host: the view is shown
}
