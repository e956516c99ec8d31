// i18n.cpp — the compiled catalogues' reader and the current language (i18n.h).
#include "i18n/i18n.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

// The catalogues the build embedded (cmake/catalogues.cmake generates their definitions).
struct DebertaEmbeddedCatalogue {
  const char* code;
  const unsigned char* data;
  unsigned long size;
};
extern "C" const DebertaEmbeddedCatalogue deberta_embedded_catalogues[];
extern "C" const unsigned long deberta_embedded_catalogue_count;

namespace viewer::i18n {

namespace {

uint32_t read_u32(std::string_view b, size_t at, bool swap, const std::string& what) {
  if (at + 4 > b.size()) throw std::runtime_error(what + ": truncated .mo catalogue (offset " + std::to_string(at) + ")");
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  if (swap) v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  return v;
}

std::string read_string(std::string_view b, size_t table, uint32_t i, bool swap, const std::string& what) {
  const uint32_t len = read_u32(b, table + 8 * size_t{i}, swap, what);
  const uint32_t off = read_u32(b, table + 8 * size_t{i} + 4, swap, what);
  if (size_t{off} + len > b.size())
    throw std::runtime_error(what + ": .mo string " + std::to_string(i) + " lies outside the file");
  return std::string(b.substr(off, len));
}

// The names a language menu shows, as each language's speakers write them.
std::string native_name(const std::string& code) {
  if (code == "ko") return "한국어";
  if (code == "ja") return "日本語";
  if (code == "zh_CN") return "简体中文";
  if (code == "it") return "Italiano";
  if (code == "en") return "English";
  return code;
}

struct Registry {
  std::vector<Language> languages;
  std::vector<std::unique_ptr<Catalogue>> catalogues;  // parallel to languages (null for English)
  Registry() {
    languages.push_back({"en", native_name("en")});
    catalogues.push_back(nullptr);
    for (unsigned long i = 0; i < deberta_embedded_catalogue_count; ++i) {
      const auto& e = deberta_embedded_catalogues[i];
      auto c = std::make_unique<Catalogue>(parse_mo(
          std::string_view(reinterpret_cast<const char*>(e.data), e.size), std::string("catalogue ") + e.code + ".mo"));
      languages.push_back({e.code, native_name(e.code)});
      catalogues.push_back(std::move(c));
    }
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

std::atomic<size_t> current{0};
std::atomic<unsigned> switches{0};

}  // namespace

Catalogue parse_mo(std::string_view b, const std::string& what) {
  if (b.size() < 28) throw std::runtime_error(what + ": not a .mo catalogue (" + std::to_string(b.size()) + " bytes)");
  uint32_t magic;
  std::memcpy(&magic, b.data(), 4);
  bool swap;
  if (magic == 0x950412deu) swap = false;
  else if (magic == 0xde120495u) swap = true;
  else throw std::runtime_error(what + ": not a .mo catalogue (bad magic number)");
  const uint32_t revision = read_u32(b, 4, swap, what);
  if ((revision >> 16) > 1) throw std::runtime_error(what + ": unsupported .mo major revision " + std::to_string(revision >> 16));
  const uint32_t n = read_u32(b, 8, swap, what);
  const uint32_t originals = read_u32(b, 12, swap, what);
  const uint32_t translations = read_u32(b, 16, swap, what);
  if (size_t{n} * 8 > b.size()) throw std::runtime_error(what + ": .mo entry count " + std::to_string(n) + " exceeds the file");
  Catalogue c;
  c.entries.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string id = read_string(b, originals, i, swap, what);
    std::string str = read_string(b, translations, i, swap, what);
    if (id.empty()) {  // the header entry: "Language: ko\n…"
      const auto at = str.find("Language: ");
      if (at != std::string::npos) c.language = str.substr(at + 10, str.find('\n', at) - at - 10);
      continue;
    }
    // A plural entry's msgid is "singular\0plural" and its msgstr the forms joined by NUL: the
    // explorer's strings have no plurals, so the first form is the translation.
    id.resize(std::strlen(id.c_str()));
    str.resize(std::strlen(str.c_str()));
    if (!str.empty()) c.entries.emplace_back(std::move(id), std::move(str));
  }
  std::sort(c.entries.begin(), c.entries.end());
  return c;
}

const std::string* Catalogue::find(std::string_view key) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const auto& e, std::string_view k) { return std::string_view(e.first) < k; });
  return it != entries.end() && it->first == key ? &it->second : nullptr;
}

const std::vector<Language>& languages() { return registry().languages; }

bool set_language(std::string_view code) {
  const auto& langs = registry().languages;
  for (size_t i = 0; i < langs.size(); ++i)
    if (langs[i].code == code) {
      if (current.exchange(i) != i) ++switches;
      return true;
    }
  return false;
}

const std::string& language() { return registry().languages[current.load()].code; }

std::string resolve(std::string_view tag) {
  std::string t;
  for (char ch : tag) {
    if (ch == '.' || ch == '@') break;  // "ko_KR.UTF-8", "it_IT@euro"
    t += ch == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (t.empty()) return "";
  if (t == "c" || t == "posix") return "en";
  const std::string primary = t.substr(0, t.find('_'));
  if (primary == "zh") {
    // Simplified Chinese: zh, zh_CN, zh_SG, zh_Hans*; not zh_TW, zh_HK, zh_MO or zh_Hant*.
    const std::string rest = t.size() > 2 ? t.substr(3) : "";
    const bool traditional = rest.rfind("hant", 0) == 0 || rest == "tw" || rest == "hk" || rest == "mo";
    return traditional ? "" : "zh_CN";
  }
  for (const auto& l : languages())
    if (l.code == primary) return l.code;
  return "";
}

std::string from_environment() {
  if (const char* list = std::getenv("LANGUAGE"); list && *list) {
    std::string_view rest(list);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string code = resolve(rest.substr(0, colon));
      if (!code.empty()) return code;
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const char* var : {"LC_ALL", "LC_MESSAGES", "LANG"})
    if (const char* v = std::getenv(var); v && *v) {
      const std::string code = resolve(v);
      return code.empty() ? "en" : code;  // gettext stops at the first variable that is set
    }
  return "en";
}

#ifdef __EMSCRIPTEN__
std::string from_page() {
  // ?lang= first (a link can carry it), then the browser's list of the reader's languages; the
  // candidates arrive as one string, newline-separated, in that order.
  const int bytes = EM_ASM_INT({
    const c = [];
    const q = new URLSearchParams(window.location.search).get('lang');
    if (q) c.push(q);
    for (const l of (navigator.languages || [navigator.language || ''])) c.push(l);
    Module.debertaLanguages = c.join('\n');
    return lengthBytesUTF8(Module.debertaLanguages) + 1;
  });
  std::string list(static_cast<size_t>(bytes), '\0');
  EM_ASM({ stringToUTF8(Module.debertaLanguages, $0, $1); }, list.data(), bytes);
  list.resize(std::strlen(list.c_str()));
  std::string_view rest(list);
  std::string code;
  while (code.empty() && !rest.empty()) {
    const auto nl = rest.find('\n');
    code = resolve(rest.substr(0, nl));
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  return code.empty() ? "en" : code;
}
#endif

const char* tr(const char* msgid) {
  const auto& c = registry().catalogues[current.load()];
  if (!c) return msgid;
  const std::string* s = c->find(msgid);
  return s ? s->c_str() : msgid;
}

const char* trc(const char* context, const char* msgid) {
  const auto& c = registry().catalogues[current.load()];
  if (!c) return msgid;
  const std::string* s = c->find(std::string(context) + '\x04' + msgid);
  return s ? s->c_str() : msgid;
}

unsigned generation() { return switches.load(); }

std::string all_text() {
  const auto& c = registry().catalogues[current.load()];
  std::string out;
  if (c)
    for (const auto& e : c->entries) out += e.second;
  return out;
}

}  // namespace viewer::i18n
