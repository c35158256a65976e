// @ts-check
/* Attention Lens, the page's words. Every text a visitor reads (or a screen reader speaks) is a message of one
   catalogue a locale, messages/<locale>.json: one flat object, "<module>.<what>" -> text. A message names what
   changes in it as a {placeholder}, so that a translation puts it where its language wants it; a message that
   depends on a count has one key per plural form ("<key>.one", "<key>.other", ...), chosen by Intl.PluralRules;
   numbers are written by Intl.NumberFormat. The locale is the store's (store.js, `locale`), English where its
   catalogue lacks a message. A view looks a text up when it shows it, never at import: the locale may change.

     t("result.sentence_pick", { n: 2 })          // "Sentence 2: click to show its maps"
     plural("result.sentences", 3)                // "3 sentences"
     percent(0.53), fixed(0.4567, 2), number(1234) // "53%", "0.46", "1,234"
     list(["a", "b", "c"])                        // "a, b, c"
     element.append(...parts("walk.other_writes_below", { english: bold })) // text around an element

   A value fills its placeholder as String(value): a number to be written in the locale's way goes through
   number, fixed or percent first. */
import en from "./messages/en.json" with { type: "json" };
import zh from "./messages/zh-CN.json" with { type: "json" };
import { get } from "./store.js";

/** The catalogue of each locale the page has; English has every message (tests/js/messages.test.js). */
const CATALOGUES = /** @type {Record<string, Record<string, string>>} */ ({ en, "zh-CN": zh });
/** The locales the page speaks, English first. */
export const LOCALES = Object.keys(CATALOGUES);
const PLACEHOLDER = /\{(\w+)\}/g;

/** The locale the page speaks now: the store's, where the page has its catalogue; else English. */
export function locale() {
  const wanted = get().locale;
  return CATALOGUES[wanted] ? wanted : "en";
}

// The language of the sentence the page shows ("de" or "zh", the store's `source`): the lesson's messages say
// "German" for a German sentence and "Chinese" for a Chinese one, in each locale's own word. The router's, the
// app's and the glossary's messages keep theirs (they speak of German as such).
const SOURCE_NAMES = { en: [/\bGerman\b/g, "Chinese"], "zh-CN": [/德语/g, "中文"] };
const ABOUT_GERMAN = /^(app|result\.(route|reason|not_german|recased|everyday)|glossary|umlaut|router)/;

/** The text of message `key` in the page's locale, English where its catalogue lacks it; a key English lacks throws. */
function message(key) {
  const text = CATALOGUES[locale()][key] ?? en[key];
  if (text === undefined) throw new Error(`no message "${key}" in messages/en.json`);
  if (get().source !== "zh" || ABOUT_GERMAN.test(key)) return text;
  const [german, chinese] = SOURCE_NAMES[locale()] || SOURCE_NAMES.en;
  return text.replace(german, chinese);
}

/** `text` (the message `key`) with each {name} replaced by String(values[name]); a missing value throws. */
function fill(key, text, values) {
  return text.replace(PLACEHOLDER, (_, name) => {
    if (!values || !(name in values)) throw new Error(`message "${key}" needs a value for {${name}}`);
    return String(values[name]);
  });
}

/** The text of message `key` in the page's locale (English where its catalogue lacks it), its placeholders
    filled from `values`. A key that English lacks throws an Error naming it.
    @param {string} key @param {Record<string, string | number>} [values] @returns {string} */
export function t(key, values) {
  return fill(key, message(key), values);
}

/** Message `key` as the parts of an element's content (for `append`): its text, and the value of each placeholder
    in its place, a DOM node (a word set in bold, a meter) as itself.
    @param {string} key @param {Record<string, string | number | Node>} values @returns {(string | Node)[]} */
export function parts(key, values) {
  const out = [];
  message(key).split(PLACEHOLDER).forEach((piece, i) => { // a placeholder's name at each odd index
    if (i % 2 && !(piece in values)) throw new Error(`message "${key}" needs a value for {${piece}}`);
    const value = i % 2 ? values[piece] : piece;
    if (typeof value === "object") out.push(value);
    else if (typeof out[out.length - 1] === "string") out[out.length - 1] += String(value); // one text between nodes
    else if (value !== "") out.push(String(value));
  });
  return out;
}

/** The text of message `key`, one the app's Python writes ("app.<what>", ui/locales.py), in the page's locale:
    what locale.js writes into an element marked data-i18n="key". A key outside "app." throws.
    @param {string} key @param {Record<string, string | number>} [values] @returns {string} */
export function appText(key, values) {
  if (!key.startsWith("app.")) throw new Error(`"${key}" is not a message of the app's Python (app.<what>)`);
  return fill(key, message(key), values);
}

/** What a server's answer `x` says in its `field` ("error" or "message"): in the page's locale where it names its
    message (`<field>_key`, `<field>_values`, `<field>_words`: ui/locales.said), else its text as sent; "" for none.
    @param {any} x @param {string} [field] @returns {string} */
export function answerText(x, field = "error") {
  if (!x || !x[field]) return "";
  const key = x[`${field}_key`];
  if (!key) return String(x[field]);
  const words = Object.fromEntries(Object.entries(x[`${field}_words`] || {}).map(([name, word]) => [name, appText(word)]));
  return appText(key, { ...(x[`${field}_values`] || {}), ...words });
}

/** @type {Map<string, Intl.PluralRules>} */
const pluralRules = new Map();
const formOf = (here, n) => {
  if (!pluralRules.has(here)) pluralRules.set(here, new Intl.PluralRules(here));
  return pluralRules.get(here).select(n);
};

/** The message of a count `n`: the plural form of `key` that the locale uses for it ("<key>.one", "<key>.other",
    ...; its "other" where it lacks that form, English where it lacks the key), {n} the count in the locale's
    digits, the other placeholders from `values`.
    @param {string} key @param {number} n @param {Record<string, string | number>} [values] @returns {string} */
export function plural(key, n, values) {
  const here = locale(), own = CATALOGUES[here];
  const text = own[`${key}.${formOf(here, n)}`] ?? own[`${key}.other`] ?? en[`${key}.${formOf("en", n)}`];
  if (text === undefined) throw new Error(`no message "${key}.${formOf("en", n)}" in messages/en.json`);
  return fill(key, text, { n: number(n), ...values });
}

/** @type {Map<string, Intl.NumberFormat>} */
const formats = new Map();

/** `n` written in the page's locale (Intl.NumberFormat with `options`: 1234 -> "1,234" in English).
    @param {number} n @param {Intl.NumberFormatOptions} [options] @returns {string} */
export function number(n, options) {
  const here = locale(), id = here + JSON.stringify(options || {});
  if (!formats.has(id)) formats.set(id, new Intl.NumberFormat(here, options));
  return formats.get(id).format(n);
}

/** `v` with `digits` decimals, as v.toFixed(digits) writes it in English (no grouping; 0 for -0).
    @param {number} v @param {number} digits */
export function fixed(v, digits) {
  return number(v === 0 ? 0 : v, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false });
}

/** A share `p` (0..1) as a whole percentage: 0.534 -> "53%" (rounded as Math.round rounds, never "-0%").
    @param {number} p */
export function percent(p) {
  const whole = Math.round(100 * p);
  return number((whole === 0 ? 0 : whole) / 100, { style: "percent", maximumFractionDigits: 0, useGrouping: false });
}

/** Items written one after the other as a list is in the page's locale: "a, b, c" in English.
    @param {string[]} items */
export function list(items) {
  return items.join(t("i18n.list_separator"));
}
