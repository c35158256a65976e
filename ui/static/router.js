// @ts-check
// twin of: ui/routed.py, training_data/truecase.py, training_data/language.py, training_data/umlauts.py (tests/test_site.py)
/* Attention Lens, the router in the page: ui/routed.py's Router, training_data/truecase.py and training_data/language.py computed
   as the server computes them, so that the page without a server sends each sentence to the same model.
   German written all in lowercase (or capitals) gets its capitals back from the domain file's counts; text that is
   not German is named; Chinese goes to the Chinese model (chinese.js); the domain guess (domain.js) picks the default or
   the everyday model.

     const router = makeRouter({ domain: content, language: content, everyday: true });
     router.split("wo ist der bahnhof? ein hund rennt.") // [["wo ist der bahnhof?", "Wo ist der Bahnhof?"], ...]
     router.route("Wo ist der Bahnhof?") // {text, model: "everyday", reads_like: "everyday", words, recased, ...}  */
import { domainGuess } from "./domain.js";
import { normaliseChinese, readsChinese, toSimplified } from "./chinese.js";
import { splitSentences } from "./sentences.js";

const WORD = /\p{L}+/gu; // lens/truecase._WORD: [^\W\d_]+
const LANGUAGE_WORD = /\p{L}+(?:[-'’]\p{L}+)*/gu; // lens/language._WORD
const SENTENCE_END = /[.!?…。！？]/u;
const FULL_WIDTH = { "。": ".", "！": "!", "？": "?", "．": "." }; // lens/routed.FULL_WIDTH_MARKS
const LATIN_SHARE = 0.7, FIRST = "<first>";
const cased = (c) => c.toLowerCase() !== c.toUpperCase();
const capitalize = (w) => w.slice(0, 1).toUpperCase() + w.slice(1).toLowerCase();
const upperFirst = (w) => w.slice(0, 1).toUpperCase() + w.slice(1);
const plainMarks = (text) => text.replace(/[。！？．]/gu, (m) => FULL_WIDTH[m]);

/** "lower", "upper" or null, as lens/truecase.uncased. */
export function uncased(text) {
  const letters = [...text].filter(cased);
  if (letters.length < 2 && !(letters.length && letters[0] === letters[0].toLowerCase())) return null;
  if (letters.every((c) => c === c.toLowerCase())) return "lower";
  if (letters.every((c) => c === c.toUpperCase())) return "upper";
  return null;
}

/** lens/truecase.Truecaser.from_counts: per lowercased word, its most common spelling inside a sentence. */
export function truecaser(counts) {
  const inside = new Map();
  for (const [token, pair] of Object.entries(counts)) {
    if (token.startsWith("<") || !new RegExp(`^${WORD.source}$`, "u").test(token)) continue;
    const first = counts[FIRST + token] || [0, 0];
    const n = pair[0] + pair[1] - first[0] - first[1], key = token.toLowerCase(), had = inside.get(key);
    if (n > 0 && (!had || n > had[0] || (n === had[0] && token > had[1]))) inside.set(key, [n, token]);
  }
  const spelling = new Map([...inside].map(([key, [, token]]) => [key, token]));
  return {
    spelling,
    /** [text recased, [[as written, as recased], ...]] (mixed case: as written, no change). */
    recase(text) {
      const kase = uncased(text), changes = [];
      if (!kase) return [text, changes];
      let out = "", end = 0;
      for (const m of text.matchAll(WORD)) {
        const between = text.slice(end, m.index), word = m[0], known = spelling.get(word.toLowerCase());
        const atStart = end === 0 || SENTENCE_END.test(between);
        let form = known || (kase === "lower" ? word.toLowerCase() : capitalize(word));
        if (atStart || (kase === "upper" && !known)) form = upperFirst(form);
        if (form !== word) changes.push([word, form]);
        out += between + form;
        end = /** @type {number} */ (m.index) + word.length;
      }
      return [out + text.slice(end), changes];
    },
  };
}

const SPECIAL = /[äöüÄÖÜß]/u, PLAIN = { ä: "a", ö: "o", ü: "u", ß: "ss" };
const plainWord = (w) => w.toLowerCase().replace(/[äöüß]/gu, (c) => PLAIN[c]);

/** training_data/umlauts.Umlauts.from_counts: per plain key, the spelling with umlauts the training data used most. */
export function umlauts(counts) {
  const totals = new Map();
  for (const [token, pair] of Object.entries(counts)) {
    if (token.startsWith("<") || !new RegExp(`^${WORD.source}$`, "u").test(token)) continue;
    const key = token.toLowerCase();
    totals.set(key, (totals.get(key) || 0) + pair[0] + pair[1]);
  }
  const best = new Map();
  for (const [word, n] of totals) {
    if (!SPECIAL.test(word) || n < 2) continue;
    const had = best.get(plainWord(word));
    if (!had || n > had[0] || (n === had[0] && word > had[1])) best.set(plainWord(word), [n, word]);
  }
  const withCaseOf = (typed, word) => (typed.length > 1 && typed === typed.toUpperCase() ? word.toUpperCase()
    : typed[0] !== typed[0].toLowerCase() ? word[0].toUpperCase() + word.slice(1) : word);
  const restored = (word) => {
    const low = word.toLowerCase();
    if (totals.has(low)) return null;
    let found = best.get(low);
    if (!found) { const undone = low.replace(/ae/g, "a").replace(/oe/g, "o").replace(/ue/g, "u"); if (undone !== low) found = best.get(undone); }
    return found ? withCaseOf(word, found[1]) : null;
  };
  return {
    /** [text with umlauts given back, [[as typed, as read], ...]]; a text with an umlaut or ß: as it is. */
    restore(text) {
      if (SPECIAL.test(text)) return [text, []];
      const changes = [];
      const out = text.replace(WORD, (w) => { const r = restored(w); if (r === null) return w; changes.push([w, r]); return r; });
      return [out, changes];
    },
  };
}

/** lens/truecase.word_changes. */
function wordChanges(written, read) {
  const before = written.match(WORD) || [], after = read.match(WORD) || [];
  if (before.length !== after.length) return [];
  return before.map((w, i) => [w, after[i]]).filter(([a, b]) => a !== b);
}

/** lens/language.LanguageCheck of a language.json.gz's content. */
export function languageCheck(content) {
  const a = content.smoothing, entries = Object.entries(content.counts), size = entries.length + 1;
  const totals = [0, 1].map((k) => entries.reduce((sum, [, c]) => sum + c[k], 0) + a * size);
  const ratios = new Map(entries.map(([w, [g, e]]) => [w, Math.log((g + a) / totals[0]) - Math.log((e + a) / totals[1])]));
  const words = (text) => (text.match(LANGUAGE_WORD) || []).map((w) => w.toLowerCase().replace(/’/g, "'"));
  const logOdds = (text) => words(text).reduce((sum, w) => sum + (ratios.get(w) || 0), 0);
  return {
    logOdds,
    report(text, shown = 3) {
      const letters = [...text].filter((c) => /\p{L}/u.test(c));
      if (!letters.length) return { german: false, why: "no letters", words: [] };
      if (letters.filter((c) => /\p{Script=Latin}/u.test(c)).length < LATIN_SHARE * letters.length) {
        return { german: false, why: "script", words: [] };
      }
      if (logOdds(text) < content.threshold) {
        const english = [...new Set(words(text))].filter((w) => (ratios.get(w) || 0) < 0)
          .sort((x, y) => ratios.get(x) - ratios.get(y) || (x < y ? -1 : x > y ? 1 : 0));
        return { german: false, why: "english", words: english.slice(0, shown) };
      }
      return { german: true, why: "", words: [] };
    },
  };
}

/** ui/routed.simplified: the Traditional characters of a sentence and the Simplified ones read instead. */
function simplified(sentence, table) {
  const read = toSimplified(sentence, table), a = Array.from(sentence), b = Array.from(read);
  if (a.length !== b.length) return read !== sentence ? [[sentence, read]] : [];
  const seen = new Set(), out = [];
  a.forEach((c, i) => { if (c !== b[i] && !seen.has(c + b[i])) { seen.add(c + b[i]); out.push([c, b[i]]); } });
  return out;
}

/** lens/routed.Router: `domain` a guess (domainGuess) or null, `truecaser` and `language` or null, `everyday`
    whether the page has the everyday model, `chinese` the t2s table (chinese.t2sTable) where it has the Chinese one,
    `restorer` the umlauts (umlauts()) or null. */
export function makeRouter({ domain = null, truecaser = null, language = null, everyday = true, chinese = null, restorer = null }) {
  /** ui/routed.Router.prepared: umlauts given back, then capitals; the words changed. */
  const prepared = (sentence) => {
    const written = plainMarks(sentence);
    let text = restorer ? restorer.restore(written)[0] : written;
    if (truecaser) text = truecaser.recase(text)[0];
    return /** @type {[string, string[][]]} */ ([text, wordChanges(written, text)]);
  };
  /** ui/routed.Router.chinese_route. */
  const chineseRoute = (sentence, model) => {
    const chosen = model && model !== "auto" ? (model === "everyday" && !everyday ? "default" : model) : chinese ? "zh-en" : "default";
    const text = chosen === "zh-en" ? normaliseChinese(sentence, chinese) : prepared(sentence)[0];
    return /** @type {any} */ ({ text, model: chosen, reads_like: "Chinese", forced: !!model && model !== "auto",
      words: [], recased: chosen === "zh-en" ? simplified(sentence, chinese) : [], why: "", written: sentence });
  };
  return {
    /** A sentence as a model reads it, and the words recased (ui/routed.Router.prepared). */
    prepared,
    split(text) {
      const read = truecaser ? truecaser.recase(text)[0] : text;
      if (read.length !== text.length) {
        return splitSentences(text).map((s) => /** @type {[string, string]} */ ([s, prepared(s)[0]]));
      }
      let at = 0;
      return splitSentences(read).map((sentence) => {
        at = read.indexOf(sentence, at);
        const written = text.slice(at, at + sentence.length), pair = /** @type {[string, string]} */ ([written, prepared(written)[0]]);
        at += sentence.length;
        return pair;
      });
    },
    /** @returns {Route & {text: string}} */
    route(sentence, model = "auto", written = null) {
      if (readsChinese(written === null ? sentence : written)) return chineseRoute(written === null ? sentence : written, model);
      let [text, recased] = prepared(sentence);
      if (written !== null && written !== sentence) recased = wordChanges(plainMarks(written), text);
      const lang = language ? language.report(text) : { german: true, why: "", words: [] };
      let readsLike = "captions", words = [], why = "";
      if (!lang.german) { readsLike = "not German"; words = lang.words; why = lang.why; }
      else if (domain) { const r = domain.report(text); readsLike = r.everyday ? "everyday" : "captions"; words = r.words; }
      let chosen = readsLike === "everyday" && everyday ? "everyday" : "default";
      if (model === "zh-en" && chinese) {
        return /** @type {any} */ ({ text: normaliseChinese(written === null ? sentence : written, chinese), model: "zh-en",
          reads_like: readsLike, forced: true, words, recased: [], why, written: written === null ? sentence : written });
      }
      if (model && model !== "auto") chosen = (model === "everyday" && !everyday) || (model === "zh-en" && !chinese) ? "default" : model;
      return /** @type {any} */ ({ text, model: chosen, reads_like: readsLike, forced: !!model && model !== "auto",
        words, recased, why, written: written === null ? sentence : written });
    },
  };
}

/** The JSON of a gzipped file, or null where this browser cannot unzip it or it is not JSON. */
export async function readGzipJson(bytes) {
  if (typeof DecompressionStream === "undefined") return null;
  try {
    return JSON.parse(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text());
  } catch (err) {
    return null;
  }
}
