// tokenizer_unicode.h — the character classes and mappings of Hugging Face's tokenizer pipeline
// (normalizers and pre-tokenizers of tokenizer.json), as the reference library applies them.
//
// The tables (tokenizer_unicode_tables.inc) were read off Hugging Face's tokenizers library itself,
// one code point at a time (tests/hf_tokenizers/make_unicode_tables.py): the library mixes Unicode
// versions (Rust's std for whitespace, lowercase and numeric; the unicode-normalization crate for
// NFD/NFKD; an older unicode_categories crate for BertNormalizer's control class and the
// punctuation class), and a single Unicode database would disagree with it on hundreds of
// characters. Combining classes and primary composites come from Unicode 14.0.
#pragma once

#include <string>
#include <vector>

namespace deberta::tokenizer_detail::unicode {

/// BertNormalizer's clean_text removes these: NUL, U+FFFD and the "other" class of the library
/// (controls except \t \n \r, formats, private use). Source: HF bert.rs `is_control`.
bool is_bert_control(char32_t c);
/// BertNormalizer's clean_text maps these to U+0020 (\t, \n, \r and Unicode White_Space that is
/// not a control). Source: HF bert.rs `is_whitespace`.
bool is_bert_whitespace(char32_t c);
/// Rust's `char::is_whitespace` (White_Space): what WhitespaceSplit and BertPreTokenizer split on.
bool is_whitespace(char32_t c);
/// ASCII punctuation or Unicode punctuation (P*) as the library classifies it: what Punctuation
/// and BertPreTokenizer isolate.
bool is_punctuation(char32_t c);
/// Rust's `char::is_numeric` (Nd, Nl, No): what the Digits pre-tokenizer splits on.
bool is_numeric(char32_t c);
/// Non-spacing marks (Mn) that BertNormalizer's strip_accents removes after NFD.
bool is_nonspacing_mark(char32_t c);
/// The CJK ideograph blocks BertNormalizer's handle_chinese_chars pads with spaces (HF bert.rs
/// `is_chinese_char`: U+4E00–9FFF, 3400–4DBF, 20000–2A6DF, 2A700–2B73F, 2B740–2B81F, 2B920–2CEAF,
/// F900–FAFF, 2F800–2FA1F).
bool is_chinese_char(char32_t c);
/// Canonical combining class (0 for starters).
int combining_class(char32_t c);

/// Lengths (in characters) of the extended grapheme clusters of `text`, in order (UAX #29 rules
/// GB3–GB13 on Unicode 15.0's Grapheme_Cluster_Break and Extended_Pictographic; the Indic conjunct
/// rule GB9c is not applied). Source: the unicode-segmentation crate's graphemes(true), which the
/// Precompiled normalizer of Hugging Face's library walks.
std::vector<size_t> grapheme_lengths(const std::u32string& text);

/// Appends the full canonical (compat = false) or compatibility (compat = true) decomposition of
/// `c` to `out` (Hangul syllables algorithmically, UAX #15 §3.12). A character without one is
/// appended as itself.
void append_decomposition(char32_t c, bool compat, std::u32string* out);
/// Appends the lowercase of `c` (Rust's `char::to_lowercase`: one to three characters).
void append_lowercase(char32_t c, std::u32string* out);
/// The primary composite of the pair (`first`, `second`), or 0 when there is none (Hangul LV and
/// LVT included).
char32_t compose_pair(char32_t first, char32_t second);

}  // namespace deberta::tokenizer_detail::unicode
