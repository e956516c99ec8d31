// fonts.h — the viewer's font atlas, built from the characters on screen (issue 30).
//
// Dear ImGui 1.86 rasterises every glyph it may draw into one texture up front, so an atlas with
// all of Hangul, Kana and Han would be tens of megabytes. Instead the atlas holds Latin, Greek,
// Cyrillic and the symbols the panels use (DejaVu Sans / Sans Mono), plus exactly the other
// characters the current text, tokens, predictions, lesson and language menu need, taken from
// DejaVu where it has them and otherwise from a CJK font (TrueType outlines: stb_truetype reads no
// CFF): Droid Sans Fallback, IPA Gothic and NanumGothic, the language's own first (cjk_order: Han
// characters take Chinese forms in Chinese, Japanese ones in Japanese, Korean ones in Korean). When a new character appears the atlas is rebuilt between two
// frames. A character no font has is drawn as U+FFFD and reported once on stderr:
//   font: N characters have no glyph (U+XXXX …)
// The atlas holds at most kMaxExtraGlyphs characters beyond the base ranges (the first ones
// required); 157 KB of text with 60,000 distinct characters grew it to ~1 GB (issue 44, class 10).
// The rest are drawn as U+FFFD and reported the same way:
//   font: N characters beyond the atlas's limit of 4096 show as U+FFFD (U+XXXX …)
#pragma once

#include <imgui.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace viewer {

struct ViewerState;

/// Which CJK font draws Han characters first: 0 Chinese (Droid Sans Fallback), 1 Japanese (IPA
/// Gothic), 2 Korean (NanumGothic). The interface's language decides for zh_CN, ja and ko; in
/// English and Italian, a text with Kana (`chars`: the required characters) is Japanese, else 0.
int cjk_order(const std::string& language, const std::set<unsigned>& chars);

/// The most characters outside the base ranges one atlas holds (two fonts' glyphs each).
constexpr size_t kMaxExtraGlyphs = 4096;

class FontAtlas {
 public:
  /// Builds the first atlas (the base ranges). Returns the monospace font (null: the default).
  /// Call once, after ImGui's context exists and before the first frame.
  ImFont* init();

  /// Adds the characters of `utf8` (invalid bytes are skipped) to those the atlas must hold.
  void require(std::string_view utf8);

  /// Adds every text the state shows: input, tokens, predictions, lesson, and the current
  /// language's catalogue (i18n.h) when the language changed. Reads them only when
  /// the text, the result or the lesson changed since the last call (cheap to call every frame).
  void require_state(const ViewerState& s);

  /// Rebuilds the atlas and its GL texture when `require` added characters it lacks. Call between
  /// frames (before ImGui_ImplOpenGL3_NewFrame). Returns true when it rebuilt (the monospace
  /// font pointer changes: `mono()`).
  bool rebuild_if_needed();

  /// The fonts' pixel size factor (the interface's size × the screen's pixel ratio; layout.h
  /// ui_scale): the sans face is 15 px × scale, the monospace 14 px × scale, rasterised at that size
  /// (sharp, not stretched). A new factor rebuilds the atlas at the next rebuild_if_needed.
  void set_scale(float scale) { scale_ = scale; }

  ImFont* mono() const { return mono_; }
  /// The CJK fonts merged into the current atlas, the first drawing the characters they share.
  std::vector<std::string> fallbacks() const;
  /// Characters required that no loaded font has (drawn as U+FFFD).
  const std::set<unsigned>& missing() const { return missing_; }
  /// Characters required after the atlas was full (kMaxExtraGlyphs; drawn as U+FFFD).
  const std::set<unsigned>& over_limit() const { return over_limit_; }

 private:
  void build();

  std::set<unsigned> extra_;     // required code points outside the base ranges
  std::set<unsigned> built_;     // extra code points of the current atlas
  std::set<unsigned> missing_;   // reported already
  std::set<unsigned> over_limit_;          // required once extra_ was full
  size_t over_limit_reported_ = 0;         // over_limit_.size() at the last report
  std::vector<ImWchar> ranges_;           // the ranges of the current atlas (ImGui keeps the pointer)
  std::vector<ImWchar> fallback_ranges_;  // the extra characters, for the merged fallback fonts
  // What require_state last read: the result's generation, the input text, the lesson's size.
  uint64_t seen_generation_ = ~uint64_t{0};
  std::string seen_text_;
  size_t seen_steps_ = 0;
  unsigned seen_language_ = 0;  // i18n::generation() + 1 when the catalogue was last read (0: never)
  ImFont* mono_ = nullptr;
  float scale_ = 1.0f, built_scale_ = 1.0f;  // set_scale's factor; the current atlas's
  int order_wanted_ = 0, order_ = 0;         // cjk_order for the language and text; the current atlas's
};

}  // namespace viewer
