// tokenizer_pipeline.h — the stages of a Hugging Face tokenizer.json around its model, read from
// the file and applied as Hugging Face's tokenizers library applies them:
//
//   text ─ normalizer ─▶ normalized text ─ pre_tokenizer ─▶ words ─ model ─▶ ids
//                                                        (decoder: how one piece is shown)
//
// Normalizers: BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend,
// Precompiled (SentencePiece's compiled map), Sequence.
// Pre-tokenizers: BertPreTokenizer, Metaspace, WhitespaceSplit, Punctuation, Digits, Split,
// Sequence. Decoders (for display): Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace,
// Sequence. Any other type is refused at load with the component and its type named.
//
// Each normalized character remembers the byte offset of the input character it came from, as the
// library's NormalizedString does: Metaspace's prepend_scheme "first" prepends only to the word
// whose original offset is 0.
#pragma once

#include "io/tokenizer_detail.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace deberta::tokenizer_detail {

/// Text being normalized: its characters and, per character, the byte offset in the original
/// input of the character it came from (inserted characters take their neighbour's).
struct NormText {
  std::u32string chars;
  std::vector<size_t> origin;  ///< [chars.size()]

  /// `utf8` (valid UTF-8) whose first byte sits at `base` in the input.
  static NormText from_utf8(const std::string& utf8, size_t base);
  std::string utf8() const;
};

/// One pre-tokenized word: its text and the original offset of its start as the library computes
/// it (`offsets_original().0`): the segment's start until a split slices it, then the origin of
/// the slice's first character.
struct Word {
  NormText text;
  size_t start = 0;
};

/// Bounded work (issue 59, class 6): the longest text a Replace or Prepend normalizer inserts, and
/// the longest Unigram piece (the lattice walks up to a piece's length from every byte of a word:
/// a 100,000-byte piece with a 99,999-character word ran past 60 s). Longer ones are refused when
/// tokenizer.json is read, naming the file and the limit.
constexpr size_t kMaxInsertedBytes = 256;
constexpr size_t kMaxUnigramPieceBytes = 1024;

/// A compiled regular expression (Replace and Split with a "Regex" pattern): PCRE2 with UTF and
/// Unicode properties on the desktop (tokenizer_regex.cpp). The library uses Oniguruma; the
/// patterns tokenizer.json files carry mean the same in both.
class Regex {
 public:
  virtual ~Regex() = default;
  /// Errors: a pattern PCRE2 rejects, or no regex engine (the web edition); `where` names it.
  static std::unique_ptr<Regex> compile(const std::string& pattern, const std::string& where);
  /// Leftmost non-overlapping matches in `utf8`, as byte ranges [begin, end), as Oniguruma's
  /// find_iter gives them: after an empty match the search resumes one character further, and an
  /// empty match where the previous match ended is skipped.
  virtual std::vector<std::pair<size_t, size_t>> find_all(const std::string& utf8) const = 0;
};

/// A normalizer of tokenizer.json.
class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void apply(NormText* text) const = 0;
};

/// A pre-tokenizer of tokenizer.json: splits each word of `words` further (and may rewrite it).
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void apply(std::vector<Word>* words) const = 0;
};

/// A decoder of tokenizer.json, used for one piece at a time: the readable form of a piece that is
/// not the first of its text (Metaspace: "▁house" → " house"; WordPiece: "##ing" → "ing",
/// "house" → " house"; ByteFallback: "<0x41>" → "A", a byte of a longer character stays "<0xE3>").
class DisplayDecoder {
 public:
  virtual ~DisplayDecoder() = default;
  virtual std::string display(std::string piece) const = 0;
};

/// Reads the "normalizer" node; null JSON gives nullptr. Errors (naming `source`): a type not
/// listed above, e.g. "tokenizer.json: normalizer type 'Nmt' is not supported", or a malformed
/// field.
std::unique_ptr<Normalizer> read_normalizer(const nlohmann::json& node, const std::string& source);
/// Reads the "pre_tokenizer" node; null gives nullptr. Errors as read_normalizer, naming a type
/// inside a Sequence so ("pre_tokenizer type 'ByteLevel' inside Sequence is not supported").
std::unique_ptr<PreTokenizer> read_pre_tokenizer(const nlohmann::json& node, const std::string& source);
/// Reads the "decoder" node; null gives nullptr. Errors as read_normalizer.
std::unique_ptr<DisplayDecoder> read_decoder(const nlohmann::json& node, const std::string& source);

/// The normalizer, pre-tokenizer and per-word model of Hugging Face's pipeline over DeBERTa's
/// layout (BasicTokenizer: special tokens split out first, `[CLS] A [SEP]`). Subclasses give the
/// model: Unigram (tokenizer_json.cpp), WordPiece (tokenizer_wordpiece.cpp).
class PipelineTokenizer : public BasicTokenizer {
 protected:
  std::vector<int64_t> encode_plain(const std::string& text) const override { return encode_plain_at(text, true); }
  /// Normalizes `text` (a stretch between special tokens; at offset 0 of the input when
  /// `at_start`), pre-tokenizes it and gives each word to tokenize_word.
  std::vector<int64_t> encode_plain_at(const std::string& text, bool at_start) const override;
  /// The ids of one pre-tokenized word (non-empty UTF-8).
  virtual void tokenize_word(const std::string& word, std::vector<int64_t>* ids) const = 0;
  /// The decoder's reading of a piece; the special tokens ([CLS], [SEP], …) as they are spelt.
  std::string base_display(int64_t id) const override {
    if (id == cls_id_ || id == sep_id_ || id == pad_id_ || id == unk_id_ || id == mask_id_) return base_piece(id);
    return decoder_ ? decoder_->display(base_piece(id)) : base_piece(id);
  }

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<DisplayDecoder> decoder_;
};

/// The Metaspace display decoder ("▁" → " "), for a Unigram tokenizer.json without a decoder.
std::unique_ptr<DisplayDecoder> metaspace_display(const std::string& replacement);
/// The WordPiece display decoder ("##ing" → "ing", "house" → " house").
std::unique_ptr<DisplayDecoder> wordpiece_display(const std::string& prefix);

/// A WordPiece vocabulary (models/wordpiece): piece → id, the unknown token, the prefix of a
/// continuation and the longest word (in characters) that is not simply unknown.
struct WordPieceModel {
  std::unordered_map<std::string, int64_t> vocab;
  std::string unk_token = "[UNK]";
  std::string prefix = "##";
  size_t max_input_chars_per_word = 100;
};

/// A WordPiece tokenizer over the given stages (tokenizer_wordpiece.cpp). `source` names the file
/// in errors; `kind` is what kind() returns. Errors: unk_token not in the vocabulary, ids that
/// repeat.
std::unique_ptr<Tokenizer> make_wordpiece(WordPieceModel model, std::unique_ptr<Normalizer> normalizer,
                                          std::unique_ptr<PreTokenizer> pre_tokenizer,
                                          std::unique_ptr<DisplayDecoder> decoder, SpecialTokens specials,
                                          const std::string& source, const std::string& kind);

/// BertNormalizer with the given switches (strip_accents already resolved), BertPreTokenizer: the
/// pipeline Hugging Face builds for a BERT vocab.txt (transformers' BertTokenizerFast converter).
std::unique_ptr<Normalizer> bert_normalizer(bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase);
std::unique_ptr<PreTokenizer> bert_pre_tokenizer();

}  // namespace deberta::tokenizer_detail
