// tokenizer_unicode.cpp — lookups into the generated tables of tokenizer_unicode_tables.inc.
#include "io/tokenizer_unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace deberta::tokenizer_detail::unicode {

namespace {

struct CodeRange {
  char32_t lo, hi;
};
struct CodeMapping {
  char32_t cp;
  uint32_t start, length;  ///< into kPool
};
struct CombiningRange {
  char32_t lo, hi;
  int ccc;
};
struct Composition {
  char32_t first, second, composite;
};

#include "io/tokenizer_unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodeRange (&table)[N], char32_t c) {
  const auto it = std::upper_bound(std::begin(table), std::end(table), c,
                                   [](char32_t v, const CodeRange& r) { return v < r.lo; });
  return it != std::begin(table) && c <= std::prev(it)->hi;
}

template <size_t N>
const CodeMapping* find_mapping(const CodeMapping (&table)[N], char32_t c) {
  const auto it = std::lower_bound(std::begin(table), std::end(table), c,
                                   [](const CodeMapping& m, char32_t v) { return m.cp < v; });
  return it != std::end(table) && it->cp == c ? &*it : nullptr;
}

// Hangul syllables (UAX #15 §3.12, Unicode ch. 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

}  // namespace

bool is_bert_control(char32_t c) { return in_ranges(kOther, c); }
bool is_bert_whitespace(char32_t c) { return in_ranges(kBertSpace, c); }
bool is_whitespace(char32_t c) { return in_ranges(kWhitespace, c); }
bool is_punctuation(char32_t c) { return in_ranges(kPunctuation, c); }
bool is_numeric(char32_t c) { return in_ranges(kNumeric, c); }
bool is_nonspacing_mark(char32_t c) { return in_ranges(kNonspacingMark, c); }

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int combining_class(char32_t c) {
  const auto it = std::upper_bound(std::begin(kCombining), std::end(kCombining), c,
                                   [](char32_t v, const CombiningRange& r) { return v < r.lo; });
  if (it == std::begin(kCombining)) return 0;
  const auto& r = *std::prev(it);
  return c <= r.hi ? r.ccc : 0;
}

void append_decomposition(char32_t c, bool compat, std::u32string* out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out->push_back(kTBase + s % kTCount);
    return;
  }
  const CodeMapping* m = compat ? find_mapping(kNfkd, c) : find_mapping(kNfd, c);
  if (!m) {
    out->push_back(c);
    return;
  }
  out->append(kPool + m->start, m->length);
}

void append_lowercase(char32_t c, std::u32string* out) {
  if (c < 0x80) {
    out->push_back(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return;
  }
  const CodeMapping* m = find_mapping(kLower, c);
  if (!m) {
    out->push_back(c);
    return;
  }
  out->append(kPool + m->start, m->length);
}

namespace {

enum Gcb { kOtherGcb, kCR, kLF, kControl, kExtend, kZWJ, kRI, kPrepend, kSpacingMark, kL, kV, kT, kLV, kLVT };

int grapheme_class(char32_t c) {
  const auto it = std::upper_bound(std::begin(kGraphemeBreak), std::end(kGraphemeBreak), c,
                                   [](char32_t v, const CombiningRange& r) { return v < r.lo; });
  if (it == std::begin(kGraphemeBreak)) return 0;
  const auto& r = *std::prev(it);
  return c <= r.hi ? r.ccc : 0;
}

}  // namespace

std::vector<size_t> grapheme_lengths(const std::u32string& text) {
  std::vector<size_t> out;
  if (text.empty()) return out;
  size_t start = 0;
  int prev = grapheme_class(text[0]);
  bool pict_then_extends = (prev & 0x100) != 0;  // ExtPict Extend* so far (GB11)
  bool pict_zwj = false;                          // … followed by ZWJ just before
  size_t ri_run = (prev & 0xFF) == kRI ? 1 : 0;    // regional indicators in a row (GB12, GB13)
  for (size_t k = 1; k < text.size(); ++k) {
    const int cur = grapheme_class(text[k]);
    const int a = prev & 0xFF, b = cur & 0xFF;
    bool join;
    if (a == kCR && b == kLF) join = true;                                            // GB3
    else if (a == kControl || a == kCR || a == kLF) join = false;                      // GB4
    else if (b == kControl || b == kCR || b == kLF) join = false;                      // GB5
    else if (a == kL && (b == kL || b == kV || b == kLV || b == kLVT)) join = true;    // GB6
    else if ((a == kLV || a == kV) && (b == kV || b == kT)) join = true;              // GB7
    else if ((a == kLVT || a == kT) && b == kT) join = true;                           // GB8
    else if (b == kExtend || b == kZWJ) join = true;                                   // GB9
    else if (b == kSpacingMark) join = true;                                           // GB9a
    else if (a == kPrepend) join = true;                                               // GB9b
    else if (pict_zwj && (cur & 0x100)) join = true;                                   // GB11
    else if (a == kRI && b == kRI) join = ri_run % 2 == 1;                             // GB12, GB13
    else join = false;                                                                 // GB999
    if (!join) {
      out.push_back(k - start);
      start = k;
    }
    pict_zwj = pict_then_extends && b == kZWJ;
    pict_then_extends = (cur & 0x100) || (pict_then_extends && b == kExtend);
    ri_run = b == kRI ? ri_run + 1 : 0;
    prev = cur;
  }
  out.push_back(text.size() - start);
  return out;
}

char32_t compose_pair(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount)
    return first + (second - kTBase);
  const auto it = std::lower_bound(std::begin(kCompose), std::end(kCompose), std::pair{first, second},
                                   [](const Composition& c, const std::pair<char32_t, char32_t>& v) {
                                     return c.first < v.first || (c.first == v.first && c.second < v.second);
                                   });
  return it != std::end(kCompose) && it->first == first && it->second == second ? it->composite : 0;
}

}  // namespace deberta::tokenizer_detail::unicode
