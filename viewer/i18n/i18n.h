// i18n.h — the explorer in the reader's language (issue 40, item 5): GNU gettext catalogues.
//
// The source of every translation is a `.po` file in viewer/i18n/po/ (ko, ja, zh_CN, it; English is
// the msgids themselves). The build compiles each with `msgfmt --check` and embeds the compiled
// `.mo` bytes in the program (desktop and WebAssembly alike, cmake/catalogues.cmake), and this file
// reads them: a small reader of the `.mo` format (GNU gettext manual, "The Format of GNU MO
// Files"), so that the page, which has no libintl, and the desktop behave the same, and the
// language can change while the program runs.
//
// Marking strings (xgettext reads these keywords, tests/i18n_check.py):
//   tr("Head detail")                      a translated C string (printf formats allowed: c-format)
//   trc("tab", "Tokens")                   the same with a context (msgctxt), for a word that
//                                          translates differently in two places
//   trf("layer {layer}, head {head}", arg("layer", l), arg("head", h))
//                                          named placeholders ({name}, {name:.3f}; the fmt library's
//                                          syntax): translations may reorder them
//   N_("…")                                marks a literal for extraction only (static tables);
//                                          translate it where it is shown, with tr()
// The paper's symbols (Q_c, K_r, δ(i,j), c2p, p2c, EMD, Ã) are kept as written in every language;
// the CLI's messages and the ASCII verdict words of --lesson-answer are not marked (they stay
// English for scripts).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

/// Marks a literal for xgettext without translating it (static tables; translate with tr()).
#define N_(s) s

namespace viewer {
namespace i18n {

/// One language the explorer speaks: its catalogue code ("ko", "zh_CN"; "en" has no catalogue)
/// and its name as its speakers write it ("한국어"), for the language menu.
struct Language {
  std::string code;
  std::string native_name;
};

/// The languages with a compiled catalogue, English first. Never empty.
const std::vector<Language>& languages();

/// Switches the interface to `code` (one of languages()). Returns false, and changes nothing, for
/// an unknown code. Thread-safe with tr(): strings returned before stay valid.
bool set_language(std::string_view code);

/// The current language's code ("en" at start).
const std::string& language();

/// The catalogue code a locale name or a BCP 47 tag asks for: "ko_KR.UTF-8" → "ko", "ja-JP" → "ja",
/// "zh-Hans", "zh-CN", "zh_SG" → "zh_CN", "it-CH" → "it", "en_GB", "C", "POSIX" → "en"; "" when
/// no catalogue matches ("fr_FR", "zh-TW": traditional Chinese is not Simplified).
std::string resolve(std::string_view tag);

/// The language gettext would pick from the environment: the first of LANGUAGE's colon-separated
/// list that resolves, else LC_ALL, else LC_MESSAGES, else LANG; "en" when none does.
std::string from_environment();

#ifdef __EMSCRIPTEN__
/// The page's language: `?lang=` of its address when it resolves, else the first of the browser's
/// navigator.languages that does; "en" when none does.
std::string from_page();
#endif

/// The translation of `msgid` in the current language, or `msgid` itself (English, or a string the
/// catalogue lacks). The pointer stays valid for the program's life.
const char* tr(const char* msgid);

/// tr() with a message context (msgctxt `context`).
const char* trc(const char* context, const char* msgid);

/// Counts language switches: a cache of translated text (the lesson's steps) compares it with the
/// value it was built at.
unsigned generation();

/// Every translated string of the current language, concatenated: the font atlas requires their
/// characters when the language changes (fonts.h).
std::string all_text();

/// A parsed `.mo` catalogue: msgid (with "context\x04" prefix where it has one) → msgstr, plus the
/// header's Language field. Raises std::runtime_error naming `what` for a truncated file, a bad
/// magic number, an entry outside the file or an unsupported major revision.
struct Catalogue {
  std::string language;
  std::vector<std::pair<std::string, std::string>> entries;  ///< sorted by msgid
  const std::string* find(std::string_view key) const;
};
Catalogue parse_mo(std::string_view bytes, const std::string& what);

}  // namespace i18n

using i18n::tr;
using i18n::trc;

/// A named argument of trf (the fmt library's fmt::arg): arg("layer", 3).
template <class T>
auto arg(const char* name, const T& value) {
  return ::fmt::arg(name, value);
}

/// The translation of `msgid`, its {name} placeholders filled from `args` (arg(...)). A
/// translation whose placeholders do not match falls back to the English text (the catalogue
/// test, tests/i18n_check.py, refuses such a translation).
template <class... Args>
std::string trf(const char* msgid, const Args&... args) {
  try {
    return ::fmt::format(::fmt::runtime(tr(msgid)), args...);
  } catch (const ::fmt::format_error&) {
    return ::fmt::format(::fmt::runtime(msgid), args...);
  }
}

}  // namespace viewer
