// @ts-check
// twin of: tokenizer/chinese.py (tests/test_chinese.py)
/* Attention Lens, Chinese text in the page as the Chinese model reads it: tokenizer/chinese.py's twin (the same
   class of Han characters, the same rule for Chinese, the same normalisation; tests/test_chinese.py holds the
   two to the same output on the whole corpus). Traditional characters become Simplified by OpenCC's t2s table,
   shipped by the static site as t2s.json (tokenizer/chinese.t2s_table), matched longest first. */

const HAN_CLASS = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}";
const HAN = new RegExp(`[${HAN_CLASS}]`, "gu");
const BMP_HAN = "\u3007\u3400-\u9fff\uf900-\ufaff";
const KANA_HANGUL = /[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/u;
const HAN_SHARE = 0.3;
const FULL = { ",": "，", "?": "？", "!": "！", ":": "：", ";": "；", "(": "（", ")": "）" };
const DOTS_AFTER_HAN = new RegExp(`(?<=[${BMP_HAN}])\\s*\\.{2,}`, "gu");
const HALF_AFTER_HAN = new RegExp(`(?<=[${BMP_HAN}])\\s*([,?!:;.])`, "gu");
const SPACE_BETWEEN_HAN = new RegExp(`(?<=[${BMP_HAN}，。？！：；、])\\s+(?=[${BMP_HAN}])`, "gu");
const FULLWIDTH_ALNUM = /[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/gu;

/** Whether `text` is one Han character (a word of its own on the maps: lens/explain.word_spans). */
export const isHan = (text) => new RegExp(`^[${HAN_CLASS}]$`, "u").test(text);

/** How many Han characters `text` holds. */
export const hanCount = (text) => (text.match(HAN) || []).length;

/** tokenizer/chinese.reads_chinese: Han characters, at least HAN_SHARE of the letters, and no kana or Hangul. */
export function readsChinese(text) {
  const han = hanCount(text);
  if (!han || KANA_HANGUL.test(text)) return false;
  return han >= HAN_SHARE * [...text].filter((c) => /\p{L}/u.test(c)).length;
}

/** Traditional characters as Simplified ones: at each place the longest key of `table`, left to right. */
export function toSimplified(text, table) {
  if (!table || !hanCount(text)) return text;
  const chars = Array.from(text), out = [], longest = table.longest || 1;
  for (let i = 0; i < chars.length;) {
    let done = false;
    for (let n = Math.min(longest, chars.length - i); n > 0; n--) {
      const found = table.map.get(chars.slice(i, i + n).join(""));
      if (found !== undefined) { out.push(found); i += n; done = true; break; }
    }
    if (!done) out.push(chars[i++]);
  }
  return out.join("");
}

/** The t2s.json the site ships ({traditional: simplified}) as toSimplified's table. */
export function t2sTable(json) {
  const map = new Map(Object.entries(json));
  return { map, longest: Math.max(1, ...[...map.keys()].map((k) => Array.from(k).length)) };
}

/** tokenizer/chinese.normalise_chinese: NFC, Simplified, Chinese punctuation after Han, no spaces between Han. */
export function normaliseChinese(text, table) {
  let s = text.normalize("NFC").replace(/\ufeff/g, "").replace(/^\s+|\s+$/gu, "");
  s = toSimplified(s, table).replace(FULLWIDTH_ALNUM, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0));
  s = s.replace(DOTS_AFTER_HAN, "……").replace(HALF_AFTER_HAN, (_, m) => (m === "." ? "。" : FULL[m]));
  return s.replace(SPACE_BETWEEN_HAN, "");
}
