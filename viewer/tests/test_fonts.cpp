// test_fonts.cpp — the font atlas's characters and CJK fonts (viewer/ui/fonts.h; issue 55 item 1,
// issue 54 item 4). No window: the atlas is built on the CPU (ImFontAtlas::Build), no GL texture.
//   - the language menu's names (한국어, 日本語, 简体中文) are in the atlas in every interface language;
//   - Han characters take the language's forms: the first merged font is IPA Gothic in Japanese,
//     Droid Sans Fallback in Chinese, NanumGothic in Korean, and 直 (whose Japanese and Chinese
//     forms differ) is drawn with different pixels in a Japanese and a Chinese atlas.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "i18n/i18n.h"
#include "state/state.h"
#include "ui/fonts.h"

#include <doctest/doctest.h>
#include <imgui.h>

#include <string>
#include <vector>

namespace {

/// A fresh ImGui context whose atlas holds the characters the state and `extra` require, in `language`.
struct Atlas {
  ImGuiContext* ctx;
  viewer::FontAtlas fonts;
  explicit Atlas(const std::string& language, const std::string& extra = "") {
    REQUIRE(viewer::i18n::set_language(language));
    ctx = ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    viewer::ViewerState s;
    fonts.require(extra);
    fonts.require_state(s);
    fonts.init();  // builds with what was required (no GL texture)
  }
  ~Atlas() { ImGui::DestroyContext(ctx); }
  bool has(ImWchar c) const { return ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(c) != nullptr; }
  /// The glyph's coverage as the atlas holds it (alpha, row by row).
  std::vector<unsigned char> pixels(ImWchar c) const {
    ImFontAtlas* a = ImGui::GetIO().Fonts;
    unsigned char* data = nullptr;
    int w = 0, h = 0;
    a->GetTexDataAsAlpha8(&data, &w, &h);
    const ImFontGlyph* g = a->Fonts[0]->FindGlyphNoFallback(c);
    std::vector<unsigned char> out;
    if (!g) return out;
    const int x0 = static_cast<int>(g->U0 * w + 0.5f), x1 = static_cast<int>(g->U1 * w + 0.5f);
    const int y0 = static_cast<int>(g->V0 * h + 0.5f), y1 = static_cast<int>(g->V1 * h + 0.5f);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) out.push_back(data[y * w + x]);
    return out;
  }
};

}  // namespace

TEST_CASE("the language menu's names are in the atlas whatever the interface's language") {
  for (const std::string& language : {"en", "it", "ko", "ja", "zh_CN"}) {
    CAPTURE(language);
    Atlas atlas(language);
    for (const auto& l : viewer::i18n::languages()) {
      CAPTURE(l.native_name);
      const std::string& name = l.native_name;
      for (size_t i = 0; i < name.size();) {  // each character of the name (UTF-8, BMP)
        const auto b = static_cast<unsigned char>(name[i]);
        const int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : 3;
        unsigned c = len == 1 ? b : b & (0xFF >> (len + 1));
        for (int k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(name[i + k]) & 0x3F);
        i += static_cast<size_t>(len);
        CHECK_MESSAGE(atlas.has(static_cast<ImWchar>(c)), "U+", std::hex, c, " is not in the ", language, " atlas");
      }
    }
  }
}

TEST_CASE("cjk_order: the language's own Han forms first; Kana makes an English text Japanese") {
  CHECK(viewer::cjk_order("zh_CN", {}) == 0);
  CHECK(viewer::cjk_order("ja", {}) == 1);
  CHECK(viewer::cjk_order("ko", {}) == 2);
  CHECK(viewer::cjk_order("en", {0x76F4}) == 0);
  CHECK(viewer::cjk_order("it", {0x76F4, 0x306E}) == 1);  // 直 and の
}

TEST_CASE("Japanese is drawn with a Japanese font, Chinese with a Chinese one") {
  const std::string ipa = "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf";
  const std::string droid = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf";
  const std::string nanum = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf";
  std::vector<unsigned char> ja, zh;
  {
    Atlas atlas("ja", "直");
    const auto f = atlas.fonts.fallbacks();
    REQUIRE_MESSAGE(!f.empty(), "no CJK font (scripts/setup.sh installs fonts-ipafont-gothic)");
    CHECK_MESSAGE(f[0] == ipa, "first CJK font in Japanese: ", f[0]);
    ja = atlas.pixels(0x76F4);
  }
  {
    Atlas atlas("zh_CN", "直");
    const auto f = atlas.fonts.fallbacks();
    REQUIRE(!f.empty());
    CHECK(f[0] == droid);
    zh = atlas.pixels(0x76F4);
  }
  {
    Atlas atlas("ko", "直");
    const auto f = atlas.fonts.fallbacks();
    REQUIRE(!f.empty());
    CHECK(f[0] == nanum);
  }
  REQUIRE(!ja.empty());
  REQUIRE(!zh.empty());
  CHECK_MESSAGE(ja != zh, "直 has the same pixels in the Japanese and the Chinese atlas");
}
