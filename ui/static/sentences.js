// @ts-check
// twin of: tokenizer/sentences.py (tests/test_site.py)
/* Attention Lens, German text -> sentences in the page: the rules of tokenizer/sentences.py, for a model trained on
   single sentences. A full stop ends a sentence only when it is not part of an abbreviation ("z. B.", "Dr."), an
   ordinal or date ("1. Mai"), a decimal number ("3.5") or an initial, and when what follows starts a sentence
   (a capital, a digit or an opening quote). A line break always ends one, and so does a full-width mark ("。"). */
const words = (s) => new Set(s.trim().split(/\s+/));
const ABBREVIATIONS = words(`abb abs abt allg anm bd bzgl bzw ca chr co dgl di dipl do dr ehem etc evtl fa ff fr frl
  gebr gegr ggf hl hr hrn inkl ing jh jhd jr kap kath kfz lt mi mio mo mrd nr phil pkt prof rd reg sa sen so sog st
  std str tel u.a usw vgl vs z.b zb zt ca bspw mind max min geb gest`);
const MONTHS = words("januar jänner februar märz april mai juni juli august september oktober november dezember");
const BEFORE_ORDINALS = words(`der die das dem den des am im zum zur vom beim ab bis seit vor nach ihr ihre sein seine
  mein meine dein deine unser unsere euer eure jeder jede jedes ein eine einem einen einer`);
const SENTENCE_STARTERS = words(`ich du er sie es wir ihr man das der die dies diese dieser mein meine dein deine unser
  unsere und aber dann danach jetzt heute morgen gestern hier dort da wo wie was wann warum wer bitte danke ja nein
  seitdem damals trotzdem deshalb also`);
const ENDINGS = /[.!?…。！？．]+["'“”»«‚‘’)\]」』）]*/gu;
const FULL_WIDTH = /[。！？．]/u; // end a sentence with no space after them (lens/sentences.FULL_WIDTH)
const OPENERS = "\"'„“‚‘»«([";
// Python's str.isspace, str.splitlines' line ends, str.isupper of one character, str.isdigit
const WS = "\\t\\n\\v\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPACE = new RegExp(`[${WS}]`, "u"), LEADING = new RegExp(`^[${WS}]+`, "u"), TRAILING = new RegExp(`[${WS}]+$`, "u");
const LAST_WORD = new RegExp(`([^${WS}]+)$`, "u");
const LINES = /\r\n|[\n\r\v\f\u001c\u001d\u001e\u0085\u2028\u2029]/u;
const upper = (c) => c !== c.toLowerCase() && c === c.toUpperCase();
const digit = (c) => /\p{Nd}/u.test(c);
const uncasedLetter = (c) => /\p{L}/u.test(c) && c.toLowerCase() === c.toUpperCase(); // 你: a script without capitals
const pyStrip = (s) => s.replace(LEADING, "").replace(TRAILING, "");
/** Python's str.strip: its whitespace, not JS's (JS's trim also takes U+FEFF). */
export { pyStrip as pyStrip };

function numberEndsSentence(before, following) {
  const previous = /([\p{L}\p{N}_]+)[^\p{L}\p{N}_]*$/u.exec(before), next = /^[\p{L}\p{N}_]+/u.exec(following), word = next ? next[0].toLowerCase() : "";
  if (MONTHS.has(word) || (previous && BEFORE_ORDINALS.has(previous[1].toLowerCase()))) return false;
  return SENTENCE_STARTERS.has(word);
}

function endsSentence(text, end, mark) {
  const rest = text.slice(end);
  if (FULL_WIDTH.test(mark)) return true;
  if (!rest || !SPACE.test(rest[0])) return false;
  const following = rest.replace(LEADING, "");
  if (!following) return true;
  const first = [...following][0];
  if (!(upper(first) || digit(first) || OPENERS.includes(first) || uncasedLetter(first))) return false;
  if (!mark.startsWith(".")) return true;
  const m = LAST_WORD.exec(text.slice(0, end - mark.length));
  if (!m) return true;
  let word = m[1];
  while (word && OPENERS.includes(word[0])) word = word.slice(1);
  word = word.toLowerCase();
  if (word && [...word].every(digit)) {
    return [...word].length > 2 || numberEndsSentence(text.slice(0, end - mark.length - word.length), following);
  }
  if ([...word].length === 1 && /\p{L}/u.test(word)) return false;
  return !ABBREVIATIONS.has(word);
}

/** German text -> its sentences, each stripped; empty lines and blanks dropped. */
export function splitSentences(text) {
  const out = [];
  for (const line of text.split(LINES)) {
    let start = 0;
    for (const m of line.matchAll(ENDINGS)) {
      const end = (m.index || 0) + m[0].length;
      if (endsSentence(line, end, m[0])) { out.push(pyStrip(line.slice(start, end))); start = end; }
    }
    out.push(pyStrip(line.slice(start)));
  }
  return out.filter((s) => s);
}
