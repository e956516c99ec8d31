// fonts.cpp — see fonts.h.
#include "ui/fonts.h"

#include "i18n/i18n.h"
#include "state/state.h"

#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace viewer {

namespace {

const char* kSans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* kMono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
// TrueType (glyf) fonts for what DejaVu lacks, by script: stb_truetype reads no CFF. Han characters
// have different standard forms in Chinese, Japanese and Korean (直, 骨, 誤, 角), so which of the
// three comes first follows the language (cjk_order): the first font that has a character draws it.
//   Chinese: Droid Sans Fallback (fonts-droid-fallback; Han in simplified Chinese forms, Kana)
//   Japanese: IPA Gothic (fonts-ipafont-gothic), else VL Gothic (fonts-vlgothic): Kana, Han in
//             Japanese forms. The page carries a subset of IPA Gothic at the same path (web.sh).
//   Korean: NanumGothic (fonts-nanum): Hangul syllables, which Droid Sans Fallback lacks, and Hanja.
const char* kChinese[] = {"/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"};
const char* kJapanese[] = {"/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
                           "/usr/share/fonts/truetype/vlgothic/VL-Gothic-Regular.ttf"};
const char* kKorean[] = {"/usr/share/fonts/truetype/nanum/NanumGothic.ttf"};

// Always in the atlas: Latin-1 and Latin Extended-A/B, Greek (δ, α), Cyrillic, phonetic extensions
// (ᵀ), general punctuation (…, ‖), super/subscripts, arrows (→), maths (∑, √, −, ≤), block
// elements (▁) and U+FFFD, the replacement drawn for a character no font has.
const ImWchar kBase[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x1D00, 0x1DBF, 0x2000, 0x206F,
                         0x2070, 0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2580, 0x259F, 0xFFFD, 0xFFFD};

bool in_base(unsigned c) {
  for (size_t i = 0; i + 1 < sizeof(kBase) / sizeof(kBase[0]); i += 2)
    if (c >= kBase[i] && c <= kBase[i + 1]) return true;
  return false;
}

bool exists(const char* path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

bool is_kana(unsigned c) { return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9F); }

/// The first existing font of each script, in the order `first` says (0 Chinese, 1 Japanese,
/// 2 Korean first; the other two keep the order Chinese, Japanese, Korean).
std::vector<const char*> fallback_fonts(int first) {
  std::vector<const char*> by_script[3];
  for (const char* f : kChinese) by_script[0].push_back(f);
  for (const char* f : kJapanese) by_script[1].push_back(f);
  for (const char* f : kKorean) by_script[2].push_back(f);
  std::vector<const char*> out;
  for (int k : {first, 0, 1, 2}) {
    for (const char* f : by_script[k])
      if (exists(f) && std::find(out.begin(), out.end(), f) == out.end()) {
        out.push_back(f);
        break;  // one font a script (VL Gothic only without IPA Gothic)
      }
  }
  return out;
}

}  // namespace

int cjk_order(const std::string& language, const std::set<unsigned>& chars) {
  if (language == "zh_CN") return 0;
  if (language == "ja") return 1;
  if (language == "ko") return 2;
  // English, Italian: Japanese forms for a text with Kana (it is Japanese), else Chinese ones.
  for (unsigned c : chars)
    if (is_kana(c)) return 1;
  return 0;
}

std::vector<std::string> FontAtlas::fallbacks() const {
  std::vector<std::string> out;
  for (const char* f : fallback_fonts(order_)) out.emplace_back(f);
  return out;
}

ImFont* FontAtlas::init() {
  build();
  return mono_;
}

void FontAtlas::require(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + static_cast<size_t>(len) > s.size()) {  // not UTF-8 here: skip the byte
      ++i;
      continue;
    }
    unsigned c = len == 1 ? b : b & (0xFF >> (len + 1));
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((cont & 0xC0) != 0x80) ok = false;
      c = (c << 6) | (cont & 0x3F);
    }
    i += ok ? static_cast<size_t>(len) : 1;
    if (!ok || c < 0x20 || in_base(c) || extra_.count(c)) continue;
    if (extra_.size() < kMaxExtraGlyphs)
      extra_.insert(c);
    else
      over_limit_.insert(c);
  }
}

void FontAtlas::require_state(const ViewerState& s) {
  // The interface's own text in the current language (i18n.h): every translated string's
  // characters, read once per language.
  if (seen_language_ != i18n::generation() + 1) {
    seen_language_ = i18n::generation() + 1;
    require(i18n::all_text());
    // The language menu names every language in its own script (한국어, 日本語, 简体中文),
    // whatever the interface's language is.
    for (const auto& l : i18n::languages()) require(l.native_name);
  }
  order_wanted_ = cjk_order(i18n::language(), extra_);
  const uint64_t generation = s.result ? s.result->generation : 0;
  // The steps' count, and which are pending (step 15's question arrives when the learner opens it).
  size_t steps = s.lesson.steps.size();
  for (const auto& step : s.lesson.steps) steps += step.pending ? 1000 : 0;
  if (generation == seen_generation_ && s.text == seen_text_ && steps == seen_steps_) return;
  seen_generation_ = generation, seen_text_ = s.text, seen_steps_ = steps;
  require(s.text);
  require(s.pair);
  if (s.result) {
    for (const std::string& name : s.result->input.names) require(name);
    const deberta::Tokenizer* tok = s.result->model ? s.result->model->tokenizer.get() : nullptr;
    if (tok)
      for (const auto* preds : {&s.result->current, &s.result->baseline})
        for (const auto& p : *preds)
          for (const auto& t : p.top) require(tok->piece(t.id));
  }
  for (const auto& step : s.lesson.steps)
    for (const std::string* t : {&step.title, &step.equation, &step.text, &step.skip_reason, &step.question, &step.explanation})
      require(*t);
}

bool FontAtlas::rebuild_if_needed() {
  if (extra_ == built_ && scale_ == built_scale_ && order_wanted_ == order_) {
    if (over_limit_.size() > over_limit_reported_) {  // nothing to add to the atlas; the report only
      std::fprintf(stderr, "font: %zu characters beyond the atlas's limit of %zu show as U+FFFD\n", over_limit_.size(),
                   kMaxExtraGlyphs);
      over_limit_reported_ = over_limit_.size();
    }
    return false;
  }
  build();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  return true;
}

void FontAtlas::build() {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ranges_.assign(std::begin(kBase), std::end(kBase));
  std::vector<ImWchar> extra_ranges;
  // ImWchar is 16 bits in this build of Dear ImGui: characters beyond the BMP draw as U+FFFD.
  for (unsigned c : extra_)
    if (c <= 0xFFFF) extra_ranges.push_back(static_cast<ImWchar>(c)), extra_ranges.push_back(static_cast<ImWchar>(c));
  ranges_.insert(ranges_.end(), extra_ranges.begin(), extra_ranges.end());
  ranges_.push_back(0);
  // Both range lists must outlive the atlas build: members.
  fallback_ranges_ = extra_ranges;
  fallback_ranges_.push_back(0);

  ImFontConfig merge;
  merge.MergeMode = true;
  order_ = order_wanted_;
  const std::vector<const char*> fallbacks = fallback_fonts(order_);
  auto add = [&](const char* path, float size) -> ImFont* {
    if (!exists(path)) return nullptr;
    ImFont* f = io.Fonts->AddFontFromFileTTF(path, size, nullptr, ranges_.data());
    if (!extra_ranges.empty())
      for (const char* fallback : fallbacks) io.Fonts->AddFontFromFileTTF(fallback, size, &merge, fallback_ranges_.data());
    return f;
  };
  if (!add(kSans, 15.0f * scale_)) {
    std::fprintf(stderr, "deberta-viewer: %s not found (install fonts-dejavu-core); Greek letters will show as '?'\n", kSans);
    ImFontConfig sized;
    sized.SizePixels = 13.0f * scale_;
    io.Fonts->AddFontDefault(&sized);
  }
  mono_ = add(kMono, 14.0f * scale_);
  io.Fonts->Build();
  built_ = extra_;
  built_scale_ = scale_;

  // What no font could give: reported once per character, drawn as U+FFFD.
  std::vector<unsigned> newly;
  const ImFont* main = io.Fonts->Fonts[0];
  for (unsigned c : extra_)
    if ((c > 0xFFFF || !main->FindGlyphNoFallback(static_cast<ImWchar>(c))) && missing_.insert(c).second) newly.push_back(c);
  static bool told = false;
  if (!extra_ranges.empty() && fallbacks.size() < 3 && !told) {
    std::fprintf(stderr, "deberta-viewer: a CJK font is missing (install fonts-droid-fallback fonts-ipafont-gothic "
                         "fonts-nanum): characters no loaded font has show as U+FFFD\n");
    told = true;
  }
  auto first_eight = [](const auto& chars) {
    std::string list;
    size_t i = 0;
    for (unsigned c : chars) {
      if (i == 8) {
        list += " …";
        break;
      }
      char buf[16];
      std::snprintf(buf, sizeof buf, "%sU+%04X", i++ ? " " : "", c);
      list += buf;
    }
    return list;
  };
  if (!newly.empty())
    std::fprintf(stderr, "font: %zu characters have no glyph (%s)\n", newly.size(), first_eight(newly).c_str());
  if (over_limit_.size() > over_limit_reported_) {
    std::fprintf(stderr, "font: %zu characters beyond the atlas's limit of %zu show as U+FFFD (%s)\n", over_limit_.size(),
                 kMaxExtraGlyphs, first_eight(over_limit_).c_str());
    over_limit_reported_ = over_limit_.size();
  }
}

}  // namespace viewer
