// @ts-check
// twin of: tokenizer/han_pieces.py (tests/test_site.py)
/* Attention Lens, the tokenizer in the page: the byte-level BPE of the checkpoint's tokenizer.json, the same pieces
   as the `tokenizers` library gives (tests/test_site.py and tests/test_site.py compare them).

   Encoding, as tokenizer/__init__.py builds it: NFC, (for the Chinese model) each Han character alone, then the GPT-2 split into words, numbers, punctuation and
   spaces; each part's UTF-8 bytes written as the 256 printable characters of the byte-level alphabet; then the
   merges, the lowest-ranked pair first, until none applies. A typed "<s>" is text, never a control token
   (tokenizer.text_only). Decoding is the way back; a byte sequence that is not UTF-8 becomes U+FFFD. */
// The pre-tokenizer's pattern (tokenizers' ByteLevel, use_regex) with Oniguruma's \s: the Unicode White_Space
// characters, which JS's \s differs from (it adds U+FEFF).
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPLIT = new RegExp(`'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`, "gu");

/** GPT-2's map of the 256 bytes to printable characters (byte -> char) and its inverse. */
function byteAlphabet() {
  const keep = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const toChar = new Array(256), toByte = new Map();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const code = keep.includes(b) ? b : 256 + extra++;
    toChar[b] = String.fromCodePoint(code);
    toByte.set(toChar[b], b);
  }
  return { toChar, toByte };
}

export class BPE {
  /** @param {any} json a parsed tokenizer.json (BPE model, NFC, ByteLevel) */
  constructor(json) {
    const model = json.model;
    if (!model || model.type !== "BPE") throw new Error("tokenizer.json: a BPE model is expected");
    this.vocab = new Map(Object.entries(model.vocab).map(([t, i]) => [t, Number(i)]));
    this.tokens = [];
    for (const [t, i] of this.vocab) this.tokens[i] = t;
    for (const a of json.added_tokens || []) { this.vocab.set(a.content, a.id); this.tokens[a.id] = a.content; }
    this.ranks = new Map();
    model.merges.forEach((m, rank) => {
      const [a, b] = Array.isArray(m) ? m : m.split(" ");
      this.ranks.set(a + " " + b, rank);
    });
    this.unk = this.vocab.get(model.unk_token || "<unk>");
    this.specials = new Set((json.added_tokens || []).filter((a) => a.special).map((a) => a.id));
    const { toChar, toByte } = byteAlphabet();
    this.toChar = toChar; this.toByte = toByte;
    this.cache = new Map();
    this.utf8 = new TextEncoder();
    this.text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }); // a typed U+FEFF stays
    // The Chinese model's tokenizer (tokenizer/han_pieces.py) first makes each Han character a word of its own: a
    // Split, before the byte-level one, whose pattern is the class of Han characters.
    const pre = json.pre_tokenizer, steps = pre && pre.type === "Sequence" ? pre.pretokenizers : [];
    const split = steps.find((p) => p.type === "Split" && p.behavior === "Isolated" && p.pattern && p.pattern.Regex);
    this.isolate = split ? new RegExp(split.pattern.Regex, "gu") : null;
  }

  /** The text's parts before the byte-level split: itself, or its Han characters each alone and the runs between. */
  pieces(text) {
    if (!this.isolate) return [text];
    const out = [];
    let at = 0;
    for (const m of text.matchAll(this.isolate)) {
      if (/** @type {number} */ (m.index) > at) out.push(text.slice(at, m.index));
      out.push(m[0]);
      at = /** @type {number} */ (m.index) + m[0].length;
    }
    if (at < text.length) out.push(text.slice(at));
    return out;
  }

  /** One pre-tokenized word (in the byte alphabet) -> its pieces, by the merges' ranks. */
  word(chars) {
    const hit = this.cache.get(chars);
    if (hit) return hit;
    let parts = Array.from(chars);
    while (parts.length > 1) {
      let best = -1, rank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const r = this.ranks.get(parts[i] + " " + parts[i + 1]);
        if (r !== undefined && r < rank) { rank = r; best = i; }
      }
      if (best < 0) break;
      const a = parts[best], b = parts[best + 1], merged = [];
      for (let i = 0; i < parts.length; i++) { // every occurrence of the pair, left to right
        if (i < parts.length - 1 && parts[i] === a && parts[i + 1] === b) { merged.push(a + b); i++; } else merged.push(parts[i]);
      }
      parts = merged;
    }
    const ids = parts.map((p) => this.vocab.get(p) ?? this.unk);
    if (this.cache.size < 50000) this.cache.set(chars, ids);
    return ids;
  }

  /** Text -> ids (no BOS or EOS: the caller adds them). */
  encode(text) {
    const out = [];
    for (const part of this.pieces(text.normalize("NFC"))) {
      for (const m of part.matchAll(SPLIT)) {
        let chars = "";
        for (const b of this.utf8.encode(m[0])) chars += this.toChar[b];
        for (const id of this.word(chars)) out.push(id);
      }
    }
    return out;
  }

  /** Ids -> text, the special tokens left out unless `keepSpecial`. */
  decode(ids, keepSpecial) {
    const bytes = [];
    let text = "";
    const flush = () => { text += this.text.decode(Uint8Array.from(bytes)); bytes.length = 0; };
    for (const id of ids) {
      const t = this.tokens[id];
      if (t === undefined) continue;
      if (this.specials.has(id)) { if (keepSpecial) { flush(); text += t; } continue; }
      for (const c of t) { const b = this.toByte.get(c); if (b !== undefined) bytes.push(b); }
    }
    flush();
    return text;
  }

  /** Each id's readable label, as tokenizer.token_strings writes it: a leading space shown as '▁'. */
  labels(ids) {
    return ids.map((id) => { const t = this.decode([id], true); return t.startsWith(" ") ? "\u2581" + t.slice(1) : t; });
  }
}
