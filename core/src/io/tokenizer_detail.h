// tokenizer_detail.h — pieces shared by the tokenizer implementations (not needed by users of
// tokenizer.h): UTF-8 checks, the special tokens of a model directory, and the common
// `[CLS] A [SEP] (B [SEP])` assembly with the literal special tokens split out of the text.
#pragma once

#include "deberta/file_limits.h"
#include "deberta/tokenizer.h"

#include <map>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

namespace deberta::tokenizer_detail {

/// Largest tokenizer file read (tokenizer.json, vocab.json, merges.txt, the special-token JSONs):
/// a 250,000-piece multilingual tokenizer.json is ~20 MB.
constexpr uint64_t kMaxTokenizerFileBytes = 256ull << 20;

/// Throws `Error` ("<what>: text is not valid UTF-8 (byte 0xff at offset 3)") unless `text` is
/// well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
void require_utf8(const std::string& text, const std::string& what);
/// True when `text` is well-formed UTF-8.
bool is_utf8(const std::string& text);
/// Length of the well-formed UTF-8 sequence at `text[i]`, or 0 when it is not one.
size_t utf8_length_at(const std::string& text, size_t i);
/// Splits UTF-8 text into its characters (each a 1–4 byte string). Assumes valid UTF-8.
std::vector<std::string> utf8_chars(const std::string& text);
/// Decodes one code point at `text[*pos]` and advances `*pos`. Assumes valid UTF-8.
char32_t next_code_point(const std::string& text, size_t* pos);
/// Encodes one code point as UTF-8.
std::string encode_utf8(char32_t cp);

/// The special-token strings and added tokens of a model directory, read from
/// `special_tokens_map.json`, `tokenizer_config.json`, `added_tokens.json` (and
/// `tokenizer.json`'s "added_tokens") when present. Token strings default to DeBERTa's
/// "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]".
struct SpecialTokens {
  std::string cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", unk = "[UNK]", mask = "[MASK]";
  bool mask_lstrip = true;   ///< the mask token swallows the whitespace before it (HF's AddedToken lstrip)
  bool lower_case = false;   ///< tokenizer_config "do_lower_case" (applied to ASCII letters only)
  std::map<std::string, int64_t> added;  ///< added token → id (ids may lie beyond the base vocabulary)

  /// Reads the files of `model_dir` that exist. Errors: a file that is not JSON of the expected form.
  static SpecialTokens read(const std::string& model_dir);
};

/// Strings over bytes in a trie, for walks along a text one byte at a time: the Unigram
/// tokenizer's pieces (its Viterbi lattice) and the added tokens (the split of the text around
/// them, issue 28 class 4: the scan over every token per position took minutes for 200k tokens).
/// Node 0 is the root; edges are (node, byte) → node.
class ByteTrie {
 public:
  /// Adds `bytes` (non-empty) with `id`; a string already present keeps its first id.
  void insert(const std::string& bytes, int64_t id);
  /// The child of `node` along `byte`, or −1.
  int32_t child(int32_t node, unsigned char byte) const {
    const auto it = child_.find(uint64_t{static_cast<uint32_t>(node)} << 8 | byte);
    return it == child_.end() ? -1 : it->second;
  }
  /// The id of the string ending at `node`, or −1.
  int64_t id(int32_t node) const { return id_[static_cast<size_t>(node)]; }
  /// The longest string that starts at `text[pos]`: its length in bytes and id, or {0, −1}.
  /// Costs the length of the longest prefix of text[pos…] in the trie, whatever its size.
  std::pair<size_t, int64_t> longest_at(const std::string& text, size_t pos) const;

 private:
  std::unordered_map<uint64_t, int32_t> child_;  ///< (node << 8 | byte) → child node
  std::vector<int64_t> id_{-1};                  ///< per node: the id of the string ending there, or −1
};

/// Base of the tokenizers: special-token bookkeeping, the split of the text around literal special
/// tokens, and the `[CLS] A [SEP] B [SEP]` assembly. Subclasses tokenize plain text.
class BasicTokenizer : public Tokenizer {
 public:
  Encoding encode(const std::string& text, const std::string* pair = nullptr) const override;
  std::string display(int64_t id) const override;
  std::string piece(int64_t id) const override;
  int64_t mask_id() const override { return mask_id_; }
  int64_t cls_id() const override { return cls_id_; }
  int64_t sep_id() const override { return sep_id_; }
  int64_t pad_id() const override { return pad_id_; }
  int64_t unk_id() const override { return unk_id_; }
  int64_t vocab_size() const override;

 protected:
  /// Ids of plain text (no special tokens in it, valid UTF-8).
  virtual std::vector<int64_t> encode_plain(const std::string& text) const = 0;
  /// encode_plain of a stretch of text between special tokens; `at_start` when it begins the
  /// segment (no special token before it). Tokenizers whose pipeline depends on the position
  /// (tokenizer.json's Metaspace prepend_scheme "first") override it.
  virtual std::vector<int64_t> encode_plain_at(const std::string& text, bool at_start) const {
    (void)at_start;
    return encode_plain(text);
  }
  /// Size of the base vocabulary (ids 0 … n−1); added tokens may extend it.
  virtual int64_t base_size() const = 0;
  /// Piece of a base-vocabulary id (0 ≤ id < base_size()).
  virtual std::string base_piece(int64_t id) const = 0;
  /// Readable form of a base piece (e.g. "▁house" → " house").
  virtual std::string base_display(int64_t id) const = 0;
  /// Id of a base-vocabulary piece, if any.
  virtual std::optional<int64_t> base_id(const std::string& piece) const = 0;

  /// Resolves the five special ids from `specials_` (added tokens first, then the base
  /// vocabulary; a [MASK] found nowhere gets the next id after the vocabulary, as Hugging Face
  /// appends missing special tokens). Call once from the subclass constructor.
  /// Errors: [CLS], [SEP] or [UNK] found nowhere (`source` names the file).
  void resolve_specials(const std::string& source, std::optional<int64_t> fallback_cls = {},
                        std::optional<int64_t> fallback_sep = {}, std::optional<int64_t> fallback_pad = {},
                        std::optional<int64_t> fallback_unk = {});

  SpecialTokens specials_;
  ByteTrie added_trie_;  ///< specials_.added, built by resolve_specials
  std::map<int64_t, std::string> added_by_id_;  ///< added tokens (and an appended [MASK]) by id
  int64_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1, mask_id_ = -1;

 private:
  std::vector<int64_t> encode_segment(const std::string& text) const;
};

/// A byte-level BPE vocabulary (GPT-2 / RoBERTa / DeBERTa v1): pieces spelt in GPT-2's
/// byte-to-unicode alphabet ("Ġ" = a space byte), merges in priority order.
struct BpeModel {
  std::map<std::string, int64_t> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
};

/// A byte-level BPE tokenizer (GPT-2 pre-tokenisation regex through PCRE2). `source` names the
/// files in errors; `kind` is what `kind()` returns.
std::unique_ptr<Tokenizer> make_byte_level_bpe(BpeModel model, SpecialTokens specials, const std::string& source,
                                               const std::string& kind);

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& model_dir);
std::unique_ptr<Tokenizer> load_gpt2_bpe(const std::string& model_dir);
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& model_dir);
/// A BERT WordPiece folder: vocab.txt (one piece a line, the id its line number) with
/// tokenizer_config.json's do_lower_case (default true), tokenize_chinese_chars (default true),
/// strip_accents (default: do_lower_case) and unk_token (tokenizer_wordpiece.cpp).
std::unique_ptr<Tokenizer> load_bert_vocab(const std::string& model_dir);

}  // namespace deberta::tokenizer_detail
