// tokenizer.h — text to token ids for the model families DeBERTa ships with.
//
// v2/v3: SentencePiece `spm.model` (DeBERTa-v2 tokenizer conventions); v1: GPT-2 byte-level BPE
// (`vocab.json` + `merges.txt`); fine-tuned models: `tokenizer.json` (Unigram, WordPiece, byte-level
// BPE); BERT-vocabulary checkpoints (the Chinese DeBERTa-v2): `vocab.txt`. Special tokens ([CLS],
// [SEP], [PAD], [UNK], [MASK]) are read from the model files, never hard-coded.
#pragma once

#include "deberta/tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace deberta {

/// The result of tokenizing one text (or a pair).
struct Encoding {
  std::vector<std::string> tokens;       ///< display strings (word-start markers made readable)
  std::vector<int64_t> ids;              ///< token ids, with [CLS] … [SEP] added
  std::vector<int64_t> token_type_ids;   ///< 0 for the first segment, 1 for the second
};

/// A tokenizer loaded from a model directory.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// Tokenizes `text` (and `pair` when non-null) as `[CLS] A [SEP] (B [SEP])`. The literal text
  /// `[MASK]` becomes the mask token. Errors: text that is not valid UTF-8.
  virtual Encoding encode(const std::string& text, const std::string* pair = nullptr) const = 0;
  /// Readable form of one id (e.g. "▁house" → " house"); "<id N>" when out of range.
  virtual std::string display(int64_t id) const = 0;
  /// Raw vocabulary piece of one id.
  virtual std::string piece(int64_t id) const = 0;
  virtual int64_t mask_id() const = 0;
  virtual int64_t cls_id() const = 0;
  virtual int64_t sep_id() const = 0;
  virtual int64_t pad_id() const = 0;
  virtual int64_t unk_id() const = 0;
  virtual int64_t vocab_size() const = 0;
  /// "sentencepiece", "gpt2-bpe", "tokenizer.json", …
  virtual std::string kind() const = 0;
  /// Builds now what the first `encode` would otherwise build on demand: for a SentencePiece model,
  /// its second copy without the dummy prefix (for text glued to a special token, "[MASK]."), a
  /// parse of spm.model as long as the load's own. Nothing for the other kinds. A caller that
  /// bounds the length of its steps (the web page's load, issue 55 item 4: the two parses of a
  /// 128,100-piece spm.model were its one long step) calls it as a step of its own; others need
  /// not, `encode` calls it. Safe to call from several threads. Errors: spm.model's second parse
  /// failing (`Error` naming the file), raised again by the next call.
  virtual void prepare() const {}
};

/// Throws `Error` ("<what>: text is not valid UTF-8 (byte 0xff at offset 3)") unless `text` is
/// well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF): the check every
/// tokenizer applies to its input, for frontends that want to name their own argument (`what`).
void require_utf8(const std::string& text, const std::string& what);

/// `text` with every byte that does not start a well-formed UTF-8 sequence replaced by U+FFFD
/// (as Python's errors="replace"). Every string shown to a user — token labels, JSON output,
/// Python strings, figure text — goes through it (issue 28, classes 14 and 17).
std::string valid_utf8(const std::string& text);

/// The byte of a byte-fallback piece "<0xNN>" (SentencePiece / HF Unigram `byte_fallback`), or −1
/// when `piece` is not one. Used by the ByteFallback display decoder and by the [UNK]-share note.
int byte_piece_value(const std::string& piece);

/// True when `model_dir` holds files a tokenizer can be loaded from.
bool has_tokenizer(const std::string& model_dir);

/// Loads the tokenizer of a model directory (spm.model, else vocab.json + merges.txt, else
/// tokenizer.json, else a BERT vocab.txt with tokenizer_config.json). Errors: none of them present, or a file that cannot be parsed (named).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir);

/// Refuses a tokenizer that can give an id the model has no row for: every id it produces
/// (vocabulary, added and special tokens) must be below `model_vocab_size` (config.json's
/// vocab_size). Errors name `model_dir` and both sizes.
void check_tokenizer_fits_model(const Tokenizer& tokenizer, int64_t model_vocab_size, const std::string& model_dir);

/// load_tokenizer followed by check_tokenizer_fits_model: what every command and the viewer call
/// when they load a model's tokenizer beside the model.
std::unique_ptr<Tokenizer> load_tokenizer_for_model(const std::string& model_dir, int64_t model_vocab_size);

}  // namespace deberta
