// probe_unicode.js — asks Hugging Face's tokenizers library (npm `tokenizers`) how it classifies and
// maps every Unicode scalar value, for make_unicode_tables.py, which writes the tables of
// core/src/io/tokenizer_unicode_tables.inc from this output. The library's character classes come
// from several Unicode versions at once (Rust's std, the unicode-normalization crate, and an older
// unicode_categories crate for BertNormalizer's "other" and the punctuation class), so the tables
// are read off the library itself rather than from one Unicode database.
//
//   NODE_PATH=<dir>/node_modules /usr/bin/node probe_unicode.js > probe.json
//
// Output: {"version": ..., "other": [cp...], "bert_space": [...], "whitespace": [...],
//          "punctuation": [...], "numeric": [...], "nonspacing_mark": [...], "reorders": [...],
//          "nfd": {cp: [cp...]}, "nfkd": {...}, "nfc": {...}, "lower": {...}}
'use strict';
const t = require('tokenizers');

const clean = t.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false });
const strip = t.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false });
const nfd = t.nfdNormalizer(), nfkd = t.nfkdNormalizer(), nfc = t.nfcNormalizer(), lower = t.lowercase();
const wsSplit = t.whitespaceSplitPreTokenizer();
const punct = t.punctuationPreTokenizer();
const digits = t.digitsPreTokenizer(true);

const out = { version: require('tokenizers/package.json').version, other: [], bert_space: [], whitespace: [],
              punctuation: [], numeric: [], nonspacing_mark: [], reorders: [], nfd: {}, nfkd: {}, nfc: {},
              lower: {} };
const cps = (s) => Array.from(s, (c) => c.codePointAt(0));
for (let cp = 0; cp < 0x110000; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  const c = clean.normalizeString(s);
  if (c === '') out.other.push(cp);
  else if (c === ' ') out.bert_space.push(cp);
  // A character between two letters: split in two (removed) by WhitespaceSplit, in three by the
  // punctuation and digit splitters (isolated).
  if (wsSplit.preTokenizeString('a' + s + 'a').length === 2) out.whitespace.push(cp);
  if (punct.preTokenizeString('a' + s + 'a').length === 3) out.punctuation.push(cp);
  if (digits.preTokenizeString('a' + s + 'a').length === 3) out.numeric.push(cp);
  const d = nfd.normalizeString(s);
  if (d !== s) out.nfd[cp] = cps(d);
  else if (strip.normalizeString(s) === '') out.nonspacing_mark.push(cp);
  // A mark of combining class 1 … 239 moves before U+0345 (class 240) under NFD: the library's
  // own list of non-starters (its combining classes are older than Python's unicodedata).
  if (nfd.normalizeString('a\u0345' + s) === 'a' + s + '\u0345') out.reorders.push(cp);
  const kd = nfkd.normalizeString(s);
  if (kd !== s) out.nfkd[cp] = cps(kd);
  const cc = nfc.normalizeString(s);
  if (cc !== s) out.nfc[cp] = cps(cc);
  const l = lower.normalizeString(s);
  if (l !== s) out.lower[cp] = cps(l);
}
process.stdout.write(JSON.stringify(out));
