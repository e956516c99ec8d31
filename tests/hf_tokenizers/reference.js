// reference.js — runs Hugging Face's tokenizers library (npm `tokenizers`, the Rust library's Node
// binding) on a job that tests/test_tokenizer_hf.cpp writes, and prints the library's answer as
// JSON on stdout. The C++ test compares its own tokenizers with it.
//
//   NODE_PATH=<install dir>/node_modules /usr/bin/node reference.js JOB.json
//
// Jobs ({"mode": …, "lines": [text, …]}):
//   "ids"          {"folder": DIR}: DIR/tokenizer.json, or else DIR/vocab.txt with
//                  DIR/tokenizer_config.json read as transformers' BertConverter builds it
//                  (BertNormalizer, BertPreTokenizer, WordPiece "##" / 100 characters).
//                  Answer: [[id, …] per line] (no special tokens added).
//   "normalize"    {"normalizer": {...}}: the component as it appears in tokenizer.json.
//                  Answer: [normalized text per line].
//   "pre_tokenize" {"pre_tokenizer": {...}}. Answer: [[word, …] per line].
//   "cases"        {"cases": [{"folder": DIR, "lines": [text, …]}, …], "start": [case, line]}:
//                  DIR/tokenizer.json per case, where the library may refuse the file or a text
//                  (the generated files of tests/test_tokenizer_generated.cpp), from case
//                  start[0]'s line start[1] on. Without "start": [{"load_error": message} or
//                  {"results": [[id, …] or {"error": message} per line]} per case]. With it: one
//                  JSON object a line, written as each is
//                  known (so a panic of the library names the text it died on): {"case": k,
//                  "load_error": message}, or {"case": k, "line": l, "ids": [id, …]} or
//                  {"case": k, "line": l, "error": message}.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

function bertFromVocab(folder) {
  const text = fs.readFileSync(path.join(folder, 'vocab.txt'), 'utf8');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const vocab = {};
  lines.forEach((line, i) => { vocab[line.endsWith('\r') ? line.slice(0, -1) : line] = i; });
  let config = {};
  const configPath = path.join(folder, 'tokenizer_config.json');
  if (fs.existsSync(configPath)) config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
  const pick = (v, d) => (v === undefined || v === null ? d : v);
  const lower = pick(config.do_lower_case, true);
  const unk = typeof config.unk_token === 'string' ? config.unk_token : '[UNK]';
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].filter((t) => t in vocab);
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((t) => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
                                         normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: pick(config.tokenize_chinese_chars, true),
                  strip_accents: pick(config.strip_accents, null), lowercase: lower },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: unk, continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

function withComponent(key, component) {
  const spec = { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
                 pre_tokenizer: null, post_processor: null, decoder: null,
                 model: { type: 'WordLevel', vocab: { x: 0 }, unk_token: 'x' } };
  spec[key] = component;
  return Tokenizer.fromString(JSON.stringify(spec));
}

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let answer;
  if (job.mode === 'ids') {
    const file = path.join(job.folder, 'tokenizer.json');
    const tok = fs.existsSync(file) ? Tokenizer.fromFile(file) : Tokenizer.fromString(JSON.stringify(bertFromVocab(job.folder)));
    answer = [];
    for (const line of job.lines) {
      const e = await tok.encode(line, null, { addSpecialTokens: false });
      answer.push(e.getIds());
    }
  } else if (job.mode === 'cases' && !job.start) {
    // Without "start": one answer, per case {"load_error": …} or {"results": [ids or {"error": …}]}.
    answer = [];
    for (const c of job.cases) {
      let tok;
      try {
        tok = Tokenizer.fromFile(path.join(c.folder, 'tokenizer.json'));
      } catch (e) {
        answer.push({ load_error: String(e.message || e) });
        continue;
      }
      const results = [];
      for (const line of c.lines) {
        try {
          results.push((await tok.encode(line, null, { addSpecialTokens: false })).getIds());
        } catch (e) {
          results.push({ error: String(e.message || e) });
        }
      }
      answer.push({ results });
    }
  } else if (job.mode === 'cases') {
    const [first, firstLine] = job.start;
    const put = (o) => fs.writeSync(1, JSON.stringify(o) + '\n');
    for (let k = first; k < job.cases.length; ++k) {
      const c = job.cases[k];
      let tok;
      try {
        tok = Tokenizer.fromFile(path.join(c.folder, 'tokenizer.json'));
      } catch (e) {
        put({ case: k, load_error: String(e.message || e) });
        continue;
      }
      for (let l = k === first ? firstLine : 0; l < c.lines.length; ++l) {
        try {
          const e = await tok.encode(c.lines[l], null, { addSpecialTokens: false });
          put({ case: k, line: l, ids: e.getIds() });
        } catch (e) {
          put({ case: k, line: l, error: String(e.message || e) });
        }
      }
    }
    return;
  } else if (job.mode === 'normalize') {
    const n = withComponent('normalizer', job.normalizer).getNormalizer();
    answer = job.lines.map((line) => n.normalizeString(line));
  } else if (job.mode === 'pre_tokenize') {
    const p = withComponent('pre_tokenizer', job.pre_tokenizer).getPreTokenizer();
    answer = job.lines.map((line) => p.preTokenizeString(line).map((w) => w[0]));
  } else {
    throw new Error('unknown mode ' + job.mode);
  }
  process.stdout.write(JSON.stringify(answer));
}

main().catch((e) => { process.stderr.write('reference.js: ' + e.message + '\n'); process.exit(1); });
