// @ts-check
/* Attention Lens, which language the page speaks: English or Chinese (zh-CN), and the switch between them.

   The locale is chosen once, when the page opens: the link's ?lang= first, then the visitor's last choice (kept in
   this browser), then the browser's languages, else English. The switch in the header (中文 / English) keeps the
   choice and opens the same link in the other language: the page's state is in the link's fragment (walk.js), so
   the sentence, the view and the step come back as they were.

   The texts Python writes (labels, the header, each view's introduction) follow it two ways: Gradio's own
   components through Gradio's i18n (told the locale here), the HTML blocks through their data-i18n key (the
   catalogue's "app." messages, ui/locales.py), rewritten here when they appear. */
import { LOCALES, appText, t } from "./i18n.js";
import { get, set } from "./store.js";

const KEPT = "attention-lens.locale"; // localStorage: the visitor's last choice

/** The page's locale for a language tag ("zh", "zh-Hans-CN", "en-GB"...): Chinese of any script reads zh-CN
    (closer than English for a reader of Traditional Chinese), English as en; null for the others. */
export function localeOf(tag) {
  const lower = String(tag || "").toLowerCase();
  if (lower === "zh" || lower.startsWith("zh-")) return "zh-CN";
  if (lower === "en" || lower.startsWith("en-")) return "en";
  return null;
}

/** The locale a visit opens in: `search`'s lang, else `kept`, else the first of `languages` the page speaks, else en. */
export function pickLocale(search, kept, languages) {
  const asked = new URLSearchParams(search).get("lang");
  for (const tag of [asked, kept, ...(languages || [])]) {
    const found = localeOf(tag);
    if (found) return found;
  }
  return "en";
}

function keptChoice() {
  try { return localStorage.getItem(KEPT); } catch { return null; } // storage may be refused
}

/** Each element marked data-i18n under `root` written in the page's locale (its values: data-i18n-values). */
export function localize(root) {
  const marked = root instanceof Element && root.matches("[data-i18n]") ? [root] : [];
  for (const el of [...marked, ...root.querySelectorAll("[data-i18n]")]) {
    const key = /** @type {HTMLElement} */ (el).dataset.i18n || "";
    const values = JSON.parse(/** @type {HTMLElement} */ (el).dataset.i18nValues || "{}");
    const text = appText(key, values);
    if (el.innerHTML !== text) el.innerHTML = text;
  }
}

/** Gradio's own texts in `locale`: its changeLocale, from the module of Gradio's page that exports it. */
async function tellGradio(locale) {
  const url = performance.getEntriesByType("resource").map((e) => e.name)
    .find((name) => /\/assets\/core-[\w-]+\.js$/.test(name));
  if (!url) return; // not the app's page (the static site, a notebook)
  const core = await import(url);
  if (typeof core.changeLocale === "function") core.changeLocale(locale);
}

// Gradio's own screen-reader labels it has no translation for, as the page's catalogue says them: a slider's
// "number input for X", "range slider for X" and its reset button.
/** @type {[RegExp, (name: string) => string][]} */
const GRADIO_LABELS = [
  [/^number input for (.+)$/, (name) => t("locale.number_input", { name })],
  [/^range slider for (.+)$/, (name) => t("locale.range_slider", { name })],
  [/^Reset to default value$/, () => t("locale.reset_default")],
];

/** Gradio's English aria-labels under `root` in the page's locale (English: left as they are). */
export function localizeGradioLabels(root) {
  if (get().locale === "en") return;
  for (const el of root.querySelectorAll("[aria-label]")) {
    const label = el.getAttribute("aria-label") || "";
    for (const [pattern, say] of GRADIO_LABELS) {
      const m = label.match(pattern);
      if (m) { el.setAttribute("aria-label", say(m[1])); break; }
    }
  }
}

/** The header's switch (ui/header.py): one button naming both languages; it opens the page in the other one. */
function wireSwitch(root) {
  const switches = root instanceof Element && root.matches(".al-lang") ? [root] : [...root.querySelectorAll(".al-lang")];
  for (const button of switches) {
    const b = /** @type {HTMLButtonElement} */ (button), other = LOCALES.find((l) => l !== get().locale) || "en";
    const name = (b.querySelector(`[lang="${other}"]`) || { textContent: other }).textContent;
    b.dataset.lang = other;
    b.title = t("locale.switch", { language: name }); // its name is what it shows: both languages
    if (b.dataset.wired) continue;
    b.dataset.wired = "1";
    b.addEventListener("click", () => switchTo(b.dataset.lang || "en"));
  }
}

/** The same page, its state and all, in `locale`: the choice kept, ?lang= in the link (the fragment unchanged). */
export function switchTo(locale) {
  if (!LOCALES.includes(locale) || locale === get().locale) return;
  try { localStorage.setItem(KEPT, locale); } catch { /* storage refused: the link still says it */ }
  const url = new URL(location.href);
  url.searchParams.set("lang", locale);
  location.assign(url.href);
}

// The store's locale is set when this module is first imported, before the modules that write texts run (page.js
// and site.js import it first): none of them writes a text in the wrong language, even once.
const languages = typeof navigator === "undefined" ? [] : navigator.languages || [navigator.language];
set({ locale: pickLocale(location.search, keptChoice(), languages) });

/** Open the page in its locale: <html lang>, Gradio's texts, and every marked text now and later. */
export function startLocale() {
  const locale = get().locale;
  document.documentElement.lang = locale;
  tellGradio(locale).catch(() => {}); // Gradio starts in the browser's language: it may differ
  const follow = (root) => { localize(root); wireSwitch(root); localizeGradioLabels(root); };
  follow(document.body);
  new MutationObserver((records) => {
    for (const r of records) for (const node of r.addedNodes) if (node instanceof Element) follow(node);
  }).observe(document.body, { childList: true, subtree: true });
}
