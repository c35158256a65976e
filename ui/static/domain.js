// @ts-check
// twin of: training_data/domain.py (tests/test_site.py)
/* Attention Lens, which kind of German a text is, in the page: training_data/domain.py's naive Bayes guess (photo caption
   or everyday speech) from the checkpoint's domain.json.gz, computed as the server computes it, so that the page
   without a server says what the server says.

     const guess = await readDomain(gzippedBytes); // null where this browser cannot unzip
     guess.report("Wo ist der Bahnhof?") // {everyday: true, log_odds: 24.04, words: ["Wo", "?", ...]}  */
// Python's \w+|[^\w\s] on str: \w is a letter, a number or "_"; \s is str.isspace's whitespace (sentences.js)
const WS = "\\t\\n\\v\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const TOKEN = new RegExp(`[\\p{L}\\p{N}_]+|[^\\p{L}\\p{N}_${WS}]`, "gu");
const SHOWN = /^[\p{L}\p{N}]|^[?!]$/u; // the words a report names: alphanumeric first, or "?" / "!"

/** The tokens of `text` and two markers, its first and last token (lens/domain.features). */
export function domainFeatures(text) {
  const tokens = /** @type {string[]} */ (text.match(TOKEN) || []);
  return tokens.length ? tokens.concat(`<first>${tokens[0]}`, `<last>${tokens[tokens.length - 1]}`) : [];
}

/** The guess of a file's content (lens/domain.guess_from): each feature's log-ratio, summed in the server's order. */
export function domainGuess(content) {
  const a = content.smoothing, counts = new Map(Object.entries(content.counts));
  let nCaptions = 0, nEveryday = 0;
  for (const [c, e] of counts.values()) { nCaptions += c; nEveryday += e; }
  const size = counts.size + 1; // every feature, and one for those never seen
  const logCaptions = Math.log(nCaptions + a * size), logEveryday = Math.log(nEveryday + a * size);
  const ratios = new Map();
  for (const [f, [c, e]] of counts) ratios.set(f, Math.log(e + a) - logEveryday - Math.log(c + a) + logCaptions);
  const unseen = logCaptions - logEveryday, ratio = (f) => ratios.has(f) ? ratios.get(f) : unseen;
  const logOdds = (text) => domainFeatures(text).reduce((sum, f) => sum + ratio(f), 0);
  return {
    threshold: content.threshold, logOdds,
    /** {everyday, log_odds, words}: the words (and "?" or "!") that pulled most towards the guess. */
    report(text, shown = 4) {
      const odds = logOdds(text), everyday = odds > content.threshold, sign = everyday ? 1 : -1;
      const words = new Map();
      for (const t of text.match(TOKEN) || []) if (SHOWN.test(t)) words.set(t, ratio(t));
      const pulled = [...words.keys()].filter((t) => sign * words.get(t) > 0)
        .sort((x, y) => sign * words.get(y) - sign * words.get(x)).slice(0, shown);
      return { everyday, log_odds: Number(odds.toFixed(2)), words: pulled };
    },
  };
}

/** The guess of a gzipped domain.json.gz (the server checked it before it was written here); null where the
    browser has no DecompressionStream or the bytes are not the file: the page then goes without the guess. */
export async function readDomain(bytes) {
  if (typeof DecompressionStream === "undefined") return null;
  try {
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    const content = JSON.parse(text);
    if (content.format !== 1 || typeof content.counts !== "object" || !(content.smoothing > 0)) return null;
    return domainGuess(content);
  } catch (err) {
    return null;
  }
}
