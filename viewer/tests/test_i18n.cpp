// test_i18n.cpp — the catalogues' reader and the choice of language (viewer/i18n/i18n.h, issue 40 item 5).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "i18n/i18n.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using viewer::i18n::parse_mo;

// A .mo file written the way the GNU gettext manual lays it out ("The Format of GNU MO Files"):
// magic, revision, count, the originals' table, the translations' table, no hash table, then the
// strings. `big` writes it big-endian (a catalogue compiled on such a machine).
std::string make_mo(const std::vector<std::pair<std::string, std::string>>& entries, bool big = false) {
  std::string out;
  auto u32 = [&](uint32_t v) {
    for (int k = 0; k < 4; ++k) out += static_cast<char>(big ? (v >> (24 - 8 * k)) & 0xff : (v >> (8 * k)) & 0xff);
  };
  const uint32_t n = static_cast<uint32_t>(entries.size());
  const uint32_t originals = 28, translations = originals + 8 * n;
  uint32_t at = translations + 8 * n;
  u32(0x950412de), u32(0), u32(n), u32(originals), u32(translations), u32(0), u32(at);
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> ids, strs;
  for (const auto& e : entries) ids.push_back({static_cast<uint32_t>(e.first.size()), at}), at += e.first.size() + 1;
  for (const auto& e : entries) strs.push_back({static_cast<uint32_t>(e.second.size()), at}), at += e.second.size() + 1;
  for (const auto& [len, off] : ids) u32(len), u32(off);
  for (const auto& [len, off] : strs) u32(len), u32(off);
  for (const auto& e : entries) out += e.first, out += '\0';
  for (const auto& e : entries) out += e.second, out += '\0';
  return out;
}

const std::vector<std::pair<std::string, std::string>> kEntries = {
    {"", "Content-Type: text/plain; charset=UTF-8\nLanguage: ko\n"},
    {"Head detail", "헤드 상세"},
    {std::string("tab\x04") + "Tokens", "토큰"},
    {"Untranslated", ""},
};

}  // namespace

TEST_CASE("parse_mo reads entries, contexts and the header's language, either byte order") {
  for (bool big : {false, true}) {
    const auto c = parse_mo(make_mo(kEntries, big), "ko.mo");
    CHECK(c.language == "ko");
    REQUIRE(c.find("Head detail"));
    CHECK(*c.find("Head detail") == "헤드 상세");
    REQUIRE(c.find(std::string("tab\x04") + "Tokens"));
    CHECK(*c.find(std::string("tab\x04") + "Tokens") == "토큰");
    CHECK(c.find("Tokens") == nullptr);        // the context is part of the key
    CHECK(c.find("Untranslated") == nullptr);  // an empty msgstr is no translation
    CHECK(c.find("") == nullptr);              // the header is not an entry
  }
}

TEST_CASE("parse_mo refuses a broken catalogue, naming it") {
  const std::string good = make_mo(kEntries);
  auto message = [](const std::string& bytes) {
    try {
      parse_mo(bytes, "po/ko.mo");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(message(good.substr(0, 20)).find("po/ko.mo: not a .mo catalogue") == 0);
  std::string bad_magic = good;
  bad_magic[0] = 'x';
  CHECK(message(bad_magic).find("bad magic number") != std::string::npos);
  // The last string's bytes cut off: its offset + length lies outside the file.
  CHECK(message(good.substr(0, good.size() - 6)).find("lies outside the file") != std::string::npos);
  // Cut inside the tables: the first string's place is read, and it is past the end.
  CHECK(message(good.substr(0, 40)) == "po/ko.mo: .mo string 0 lies outside the file");
  // A table said to start past the end of the file.
  std::string far_table = good;
  far_table[12] = static_cast<char>(0xe8), far_table[13] = 0x03, far_table[14] = far_table[15] = 0;  // 1000
  CHECK(message(far_table) == "po/ko.mo: truncated .mo catalogue (offset 1000)");
  std::string revision = good;
  revision[6] = 2;  // major revision 2
  CHECK(message(revision).find("unsupported .mo major revision") != std::string::npos);
  std::string huge_count = good;
  huge_count[8] = huge_count[9] = huge_count[10] = huge_count[11] = '\x7f';
  CHECK(message(huge_count).find("exceeds the file") != std::string::npos);
}

TEST_CASE("resolve maps locale names and BCP 47 tags to the catalogues") {
  using viewer::i18n::resolve;
  CHECK(resolve("ko_KR.UTF-8") == "ko");
  CHECK(resolve("ko") == "ko");
  CHECK(resolve("ja-JP") == "ja");
  CHECK(resolve("zh-CN") == "zh_CN");
  CHECK(resolve("zh-Hans") == "zh_CN");
  CHECK(resolve("zh_SG.UTF-8") == "zh_CN");
  CHECK(resolve("zh") == "zh_CN");
  CHECK(resolve("zh-TW") == "");  // Traditional Chinese is not Simplified
  CHECK(resolve("zh-Hant-HK") == "");
  CHECK(resolve("it_CH@euro") == "it");
  CHECK(resolve("en_GB.UTF-8") == "en");
  CHECK(resolve("C") == "en");
  CHECK(resolve("POSIX") == "en");
  CHECK(resolve("fr_FR") == "");
  CHECK(resolve("") == "");
}

TEST_CASE("from_environment follows gettext's order: LANGUAGE, LC_ALL, LC_MESSAGES, LANG") {
  using viewer::i18n::from_environment;
  for (const char* v : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) unsetenv(v);
  CHECK(from_environment() == "en");
  setenv("LANG", "it_IT.UTF-8", 1);
  CHECK(from_environment() == "it");
  setenv("LC_MESSAGES", "ja_JP.UTF-8", 1);
  CHECK(from_environment() == "ja");
  setenv("LC_ALL", "fr_FR.UTF-8", 1);  // set, and no catalogue: English, not a later variable's
  CHECK(from_environment() == "en");
  setenv("LANGUAGE", "fr:zh_CN:ko", 1);  // the first of the list that has a catalogue
  CHECK(from_environment() == "zh_CN");
  for (const char* v : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) unsetenv(v);
}

TEST_CASE("the embedded catalogues: every language, switched while running") {
  using namespace viewer::i18n;
  std::vector<std::string> codes;
  for (const auto& l : languages()) codes.push_back(l.code);
  CHECK(codes == std::vector<std::string>{"en", "it", "ja", "ko", "zh_CN"});
  const unsigned before = generation();
  CHECK_FALSE(set_language("fr"));
  CHECK(language() == "en");
  CHECK(generation() == before);
  // "Head detail" is a tab title (layout.cpp): every catalogue translates it.
  CHECK(std::string(viewer::tr("Head detail")) == "Head detail");
  for (const char* code : {"ko", "ja", "zh_CN", "it"}) {
    CAPTURE(std::string(code));
    REQUIRE(set_language(code));
    CHECK(language() == code);
    const std::string t = viewer::tr("Head detail");
    CHECK(t != "Head detail");
    CHECK(all_text().find(t) != std::string::npos);
  }
  CHECK(generation() == before + 4);
  // A string no catalogue has comes back as it was given, the same pointer.
  const char* missing = "no catalogue has this string";
  CHECK(viewer::tr(missing) == missing);
  REQUIRE(set_language("en"));
  CHECK(all_text().empty());
}

TEST_CASE("trf fills named placeholders") {
  viewer::i18n::set_language("en");
  CHECK(viewer::trf("layer {layer}, head {head}", viewer::arg("layer", 3), viewer::arg("head", 1)) == "layer 3, head 1");
  CHECK(viewer::trf("{x:.2f}", viewer::arg("x", 0.125)) == "0.12");
}
