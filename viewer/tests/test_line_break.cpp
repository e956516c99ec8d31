// test_line_break.cpp — line breaking by the language's rules (viewer/i18n/line_break.h; issue 54, item 3).
//   - the breaker on chosen strings (widths in character cells: a CJK character two, others one):
//     CJK lines break between characters and fill the line, numbers and "2 つ" stay whole, "I = H + P"
//     stays whole, Korean breaks at spaces, Japanese keeps 。 and small kana off a line's start;
//   - the lesson (every step's text, question, equation and working on the bundled model), the
//     Equation tab's rows and the catalogue strings of the lesson and the Equation tab, in ko, ja,
//     zh_CN and it, laid out with the viewer's own fonts (the atlas of ui/fonts.h, no window) at
//     several widths: no line may end inside a number or before the counter of a number, nor
//     inside a short formula that fits the line. The checks below find numbers and formulas on
//     their own (not with the breaker's rules).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "test_paths.h"  // DEBERTA_SOURCE_DIR
#include "i18n/i18n.h"
#include "i18n/line_break.h"
#include "lesson/lesson.h"
#include "state/state.h"
#include "ui/fonts.h"

#include "deberta/equations.h"
#include "deberta/explain.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>
#include <imgui.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using viewer::LineSpan;

namespace {

std::string source(const std::string& rel) { return std::string(DEBERTA_SOURCE_DIR) + "/" + rel; }

std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t k = 0; k < s.size();) {
    size_t n = 1;
    out.push_back(viewer::utf8_decode(s, k, &n));
    k += n;
  }
  return out;
}

/// A CJK character is two cells wide, every other character one.
float cells(uint32_t c) { return (c >= 0x1100 && c <= 0x115F) || c >= 0x2E80 ? 2.0f : 1.0f; }

std::vector<std::string> wrap(const std::string& text, const std::string& lang, float width,
                              const std::function<float(uint32_t)>& advance = cells) {
  std::vector<std::string> out;
  for (const LineSpan& l : viewer::wrap_lines(text, lang, width, advance)) out.push_back(text.substr(l.begin, l.end - l.begin));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += (s.empty() ? "" : " | ") + l;
  return s;
}

bool digit(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19); }
bool space(uint32_t c) { return c == ' ' || c == '\t' || c == '\n' || c == 0x3000; }
bool letter_or_ideograph(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0x3040 && c <= 0x30FF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xC0 && c <= 0x24F);
}
bool operator_char(uint32_t c) {
  for (uint32_t o : code_points("=+−-×·/*÷±≤≥<>≈→∘")) if (c == o) return true;
  return false;
}

/// What is wrong with the break between bytes [..., a_end) and [b_begin, ...) of `text` (a soft
/// break: only spaces between them), "" when nothing. `advance` and `width` decide whether the
/// formula around the break would have fitted a line of its own.
std::string bad_break(const std::string& text, size_t a_end, size_t b_begin, float width,
                      const std::function<float(uint32_t)>& advance) {
  const std::vector<uint32_t> before = code_points(std::string_view(text).substr(0, a_end));
  const std::vector<uint32_t> after = code_points(std::string_view(text).substr(b_begin));
  if (before.empty() || after.empty()) return "";
  const uint32_t x = before.back(), y = after.front();
  const bool x_in_number = digit(x) || ((x == '.' || x == ',') && before.size() > 1 && digit(before[before.size() - 2]));
  const bool spaced = b_begin > a_end;  // two numbers side by side ("[0, 7]") may part at the space
  if (x_in_number && digit(y) && !spaced) return "inside a number";
  const bool cjk = (y >= 0x3040 && y <= 0x30FF) || (y >= 0x4E00 && y <= 0x9FFF) || (y >= 0xAC00 && y <= 0xD7A3);
  if (digit(x) && (spaced ? cjk : letter_or_ideograph(y))) return "between a number and its counter";
  // Formulas: tokens (runs without spaces) joined by operators standing alone, e.g. "I = H + P".
  const auto tokens = [](const std::vector<uint32_t>& cps, bool from_end) {
    std::vector<std::vector<uint32_t>> out;
    std::vector<uint32_t> cur;
    const auto flush = [&] {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    };
    if (from_end) {
      for (size_t k = cps.size(); k-- > 0;) {
        if (space(cps[k])) { flush(); if (cps[k] == '\n') break; continue; }
        cur.insert(cur.begin(), cps[k]);
      }
    } else {
      for (uint32_t c : cps) {
        if (space(c)) { flush(); if (c == '\n') break; continue; }
        cur.push_back(c);
      }
    }
    flush();
    return out;  // nearest the break first
  };
  const auto is_op = [](const std::vector<uint32_t>& t) {
    if (t.empty() || t.size() > 2) return false;
    for (uint32_t c : t) if (!operator_char(c)) return false;
    return true;
  };
  const auto left = tokens(before, true), right = tokens(after, false);
  if (left.empty() || right.empty()) return "";
  if (!is_op(left[0]) && !is_op(right[0])) return "";
  // The formula: operands and operators alternating on both sides of the break.
  const auto width_of = [&](const std::vector<uint32_t>& t) {
    float w = 0;
    for (uint32_t c : t) w += advance(c);
    return w;
  };
  float w = 0;
  // A number and the counter after it ("0.25 です", "3 개") hold together too: the unit the line
  // could not break spans them.
  const auto counter = [&](const std::vector<uint32_t>& number, const std::vector<uint32_t>& word) {
    const uint32_t c = word.front();
    return digit(number.back()) && ((c >= 0x3040 && c <= 0x30FF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3));
  };
  const auto extend = [&](const std::vector<std::vector<uint32_t>>& side, bool leftwards) {
    w += width_of(side[0]) + advance(' ');
    for (size_t k = 1; k < side.size(); ++k) {
      const bool joined = is_op(side[k]) != is_op(side[k - 1]) ||
                          (leftwards ? counter(side[k], side[k - 1]) : counter(side[k - 1], side[k]));
      if (!joined) break;
      w += width_of(side[k]) + advance(' ');
    }
  };
  extend(left, true), extend(right, false);
  if (w - advance(' ') <= width)
    return "inside a formula that fits a line (" + std::to_string(static_cast<int>(w - advance(' '))) + " px)";
  return "";
}

/// Every soft break of `text` laid out at `width`: the problems found, one a line.
std::string check_layout(const std::string& text, const std::string& lang, float width,
                         const std::function<float(uint32_t)>& advance) {
  const std::vector<LineSpan> lines = viewer::wrap_lines(text, lang, width, advance);
  std::string problems;
  for (size_t k = 0; k + 1 < lines.size(); ++k) {
    const std::string_view gap(text.data() + lines[k].end, lines[k + 1].begin - lines[k].end);
    if (gap.find('\n') != std::string_view::npos) continue;  // the text's own line break
    const std::string why = bad_break(text, lines[k].end, lines[k + 1].begin, width, advance);
    if (!why.empty())
      problems += why + ": \"" + text.substr(lines[k].begin, lines[k].end - lines[k].begin) + "\" | \"" +
                  text.substr(lines[k + 1].begin, std::min<size_t>(40, text.size() - lines[k + 1].begin)) + "\" at " +
                  std::to_string(static_cast<int>(width)) + " px, in \"" + text.substr(0, 400) + "\"\n";
  }
  return problems;
}

}  // namespace

TEST_CASE("the breaker on chosen strings") {
  SUBCASE("Chinese and Japanese break between characters and fill the line") {
    const auto lines = wrap("注意力权重是每个键的概率分布，总和为一。", "zh_CN", 12);
    CAPTURE(joined(lines));
    REQUIRE(lines.size() >= 3);
    for (size_t k = 0; k + 1 < lines.size(); ++k) {
      float w = 0;
      for (uint32_t c : code_points(lines[k])) w += cells(c);
      CHECK(w >= 10);  // Dear ImGui left "far short of the margin"
      CHECK(w <= 12);
    }
  }
  SUBCASE("a number stays whole, and with its counter") {
    for (float width : {16.f, 20.f, 24.f, 30.f}) {
      CAPTURE(width);
      const std::string ja = "確率は P = 0.100500 です。2 つの項があります。";
      CHECK(check_layout(ja, "ja", width, cells) == "");
      for (const auto& l : wrap(ja, "ja", width)) {
        CAPTURE(l);
        CHECK(l != "2");
        CHECK(l.find("0.") != l.size() - 2);
      }
      CHECK(check_layout("層は 12 層で、ヘッドは 3 個です。値は 0,25 と 1.5 です。", "ja", width, cells) == "");
      CHECK(check_layout("이 모델은 4 개의 층과 192 차원을 씁니다.", "ko", width, cells) == "");
      CHECK(check_layout("这个模型有 12 层，每层 3 个头，值为 0.100500。", "zh_CN", width, cells) == "");
    }
    // "2 つ" on one line even where the line could end after the space.
    const auto lines = wrap("あいうえおかき 2 つ", "ja", 17);
    CAPTURE(joined(lines));
    CHECK(lines.back().find("2 つ") != std::string::npos);
  }
  SUBCASE("a short formula stays whole") {
    for (float width : {12.f, 16.f, 20.f, 24.f}) {
      CAPTURE(width);
      const std::string it = "Nel passo 11 la somma I = H + P entra in ogni strato; con s · Ã = 0.25 il punteggio cambia.";
      const auto lines = wrap(it, "it", width);
      CAPTURE(joined(lines));
      CHECK(check_layout(it, "it", width, cells) == "");
      bool whole = false;
      for (const auto& l : lines) whole |= l.find("I = H + P") != std::string::npos;
      CHECK(whole);
      CHECK(check_layout("ここで I = H + P を使います。", "ja", width, cells) == "");
    }
  }
  SUBCASE("a formula wider than the line breaks after its '=', not before an operator") {
    const std::string f = "Ã = c2c + c2p + p2c = 0.125 + 1.5 - 2.25 = -0.625";
    const auto lines = wrap(f, "en", 24);
    CAPTURE(joined(lines));
    REQUIRE(lines.size() >= 2);
    for (size_t k = 0; k + 1 < lines.size(); ++k) CHECK(lines[k].back() == '=');
  }
  SUBCASE("no break into a function's parenthesis or after a root sign") {
    for (const std::string lang : {"ja", "zh_CN", "ko", "it"})
      for (float width : {6.f, 8.f, 10.f, 12.f}) {
        CAPTURE(lang);
        CAPTURE(width);
        const auto lines = wrap("s = 1 / √(3 · 48) = 1/√(3d) = 0.0833333", lang, width);
        CAPTURE(joined(lines));
        for (const auto& l : lines) {
          CHECK((l.size() < 3 || l.compare(l.size() - 3, 3, "√") != 0));  // "√" never ends a line
          CHECK((l.back() != '/' || l[l.size() - 2] == ' '));             // nor the "/" of "1/√(3d)"
          CHECK(l.front() != '(');
        }
      }
  }
  SUBCASE("operators written without spaces stay with their operands") {
    for (const std::string lang : {"ko", "ja", "zh_CN", "it"})
      for (float width : {14.f, 18.f, 24.f}) {
        const auto lines = wrap("모델 항 c2c+c2p+p2c, H=192, 레이어 4개", lang, width);
        CAPTURE(lang);
        CAPTURE(joined(lines));
        bool whole = false;
        for (const auto& l : lines) whole |= l.find("c2c+c2p+p2c") != std::string::npos;
        CHECK(whole);
      }
  }
  SUBCASE("Korean breaks at spaces, not inside a word") {
    const std::string ko = "상대 위치 표는 각 헤드가 읽는 행을 정합니다";
    for (float width : {8.f, 11.f, 14.f, 20.f}) {
      const auto lines = wrap(ko, "ko", width);
      CAPTURE(joined(lines));
      std::string back;
      for (const auto& l : lines) back += (back.empty() ? "" : " ") + l;
      CHECK(back == ko);  // every break was at a space
    }
  }
  SUBCASE("Japanese: no line starts with 。、 or a small kana; no line ends with 「") {
    const std::string ja = "「アテンション」は、キーごとの重みです。ちょっと待ってください。";
    for (float width = 8; width <= 24; width += 1) {
      for (const auto& l : wrap(ja, "ja", width)) {
        CAPTURE(width);
        CAPTURE(l);
        const auto cps = code_points(l);
        for (uint32_t bad : code_points("。、」ょっ")) CHECK(cps.front() != bad);
        CHECK(cps.back() != code_points("「")[0]);
      }
    }
  }
  SUBCASE("mandatory breaks, spaces hang, a long word breaks somewhere") {
    CHECK(wrap("a\nb", "en", 80) == std::vector<std::string>{"a", "b"});
    CHECK(wrap("word word", "en", 4) == std::vector<std::string>{"word", "word"});
    CHECK(wrap("", "en", 10) == std::vector<std::string>{""});
    const auto lines = wrap("abcdefghij", "en", 4);
    CHECK(lines == std::vector<std::string>{"abcd", "efgh", "ij"});
  }
#ifdef DEBERTA_LINE_BREAK_FALLBACK
  SUBCASE("this build checks the page's approximation") { CHECK(!viewer::line_break_uses_unibreak()); }
#else
  SUBCASE("the opportunities come from UAX #14 on the desktop") { CHECK(viewer::line_break_uses_unibreak()); }
#endif
}

namespace {

/// The msgstr of every entry of `po` whose references include one of `files`, placeholders filled
/// with numbers and formulas ({x}, %d, %s, %g …).
std::vector<std::string> catalogue_strings(const std::string& po, const std::vector<std::string>& files) {
  std::ifstream in(po);
  REQUIRE(in);
  std::vector<std::string> out;
  std::string line, refs, msgstr;
  bool in_msgstr = false;
  const auto unquote = [](const std::string& s) {
    std::string r;
    const size_t a = s.find('"'), b = s.rfind('"');
    for (size_t k = a + 1; k < b; ++k) {
      if (s[k] == '\\' && k + 1 < b) {
        ++k;
        r += s[k] == 'n' ? '\n' : s[k] == 't' ? '\t' : s[k];
      } else {
        r += s[k];
      }
    }
    return r;
  };
  const auto flush = [&] {
    bool wanted = false;
    for (const auto& f : files) wanted |= refs.find(f) != std::string::npos;
    if (wanted && !msgstr.empty()) {
      std::string s = std::regex_replace(msgstr, std::regex(R"(\{[a-z_]+\})"), "0.100500");
      s = std::regex_replace(s, std::regex(R"(%(lld|d|zu))"), "12");
      s = std::regex_replace(s, std::regex(R"(%(\.\d)?[gf])"), "2.5");
      s = std::regex_replace(s, std::regex(R"(%s)"), "I = H + P");
      out.push_back(s);
    }
    refs.clear(), msgstr.clear(), in_msgstr = false;
  };
  while (std::getline(in, line)) {
    if (line.rfind("#:", 0) == 0) {
      if (in_msgstr) flush();
      refs += line;
    } else if (line.rfind("msgid", 0) == 0) {
      if (in_msgstr) flush();
    } else if (line.rfind("msgstr", 0) == 0) {
      in_msgstr = true;
      msgstr = unquote(line);
    } else if (in_msgstr && !line.empty() && line[0] == '"') {
      msgstr += unquote(line);
    } else if (line.empty() && in_msgstr) {
      flush();
    }
  }
  if (in_msgstr) flush();
  return out;
}

}  // namespace

TEST_CASE("the lesson and the Equation tab in ko, ja, zh_CN and it: no line ends inside a number or a short formula") {
  using namespace deberta;
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Model model = load_model(dir);
  const auto tok = load_tokenizer_for_model(dir, model.config.vocab_size);
  const Encoding enc = tok->encode(viewer::kDefaultText);
  Inputs inputs;
  inputs.input_ids = enc.ids;
  const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, true);
  const int64_t N = static_cast<int64_t>(enc.ids.size());

  for (const std::string lang : {"ko", "ja", "zh_CN", "it"}) {
    CAPTURE(lang);
    REQUIRE(viewer::i18n::set_language(lang));
    std::vector<std::string> texts;
    viewer::LessonInput in;
    in.model = &model, in.trace = &trace, in.emd = trace.emd ? &*trace.emd : nullptr;
    in.emd_note = trace.emd ? "" : why_no_emd(model);
    in.tokens = enc.tokens, in.layer = 1, in.head = 0;
    for (const viewer::LessonStep& st : viewer::build_lesson(in))
      for (const std::string* s : {&st.title, &st.equation, &st.text, &st.question, &st.explanation, &st.skip_reason})
        if (!s->empty()) texts.push_back(*s);
    const std::vector<std::pair<int64_t, int64_t>> cells_ij = {{0, 0}, {3, N - 1}, {N - 1, 2}};
    for (const auto& [i, j] : cells_ij)
      for (const ExplainStep& st : explanation_steps(explain_cell(model, trace, 1, 0, i, j)))
        for (const ExplainLine* l : {&st.equation_parts, &st.formula_parts, &st.numbers_parts})
          texts.push_back(viewer::explain_worded(*l));  // as the Equation tab draws them
    for (const std::string& s : catalogue_strings(source("viewer/i18n/po/" + lang + ".po"),
                                                  {"panel_equation.cpp", "panel_lesson.cpp", "lesson/lesson.cpp", "paper_quotes.h", "explain"}))
      texts.push_back(s);
    REQUIRE(texts.size() > 100);

    // The viewer's own fonts (the Japanese atlas draws Han in Japanese forms: ui/fonts.h).
    ImGuiContext* ctx = ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    {
      viewer::FontAtlas fonts;
      std::string all;
      for (const auto& t : texts) all += t;
      fonts.require(all);
      fonts.init();
      ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
      const auto advance = [font](uint32_t c) { return font->GetCharAdvance(static_cast<ImWchar>(c <= 0xFFFF ? c : 0xFFFD)); };
      size_t breaks = 0;
      for (float width : {150.f, 210.f, 290.f, 400.f, 560.f}) {
        for (const std::string& t : texts) {
          breaks += viewer::wrap_lines(t, lang, width, advance).size() - 1;
          const std::string problems = check_layout(t, lang, width, advance);
          CHECK_MESSAGE(problems.empty(), problems);
        }
      }
      MESSAGE(lang << ": " << texts.size() << " texts, " << breaks << " line breaks checked at 5 widths");
      CHECK(breaks > 1000);  // the check saw many breaks
    }
    ImGui::DestroyContext(ctx);
  }
  viewer::i18n::set_language("en");
}

TEST_CASE("the Equation tab's rows in ko, ja, zh_CN and it: every prose segment of the core translated") {
  using namespace deberta;
  // Cells of every kind the core words differently: v2's buckets and a window, the paper's p2c
  // index, p2p, §3.1's plain attention, padding, a masked head, no term at all.
  std::vector<CellExplanation> cells;
  CellExplanation e;
  e.i = 3, e.j = 5, e.n = 9, e.k = 32, e.window = 4, e.rel_pos = -2, e.rel_pos_raw = -18, e.c2p_row = 30, e.p2c_row = 30;
  e.d = 48, e.scale_factor = 3, e.scale = 1 / std::sqrt(144.0), e.prob = 0.25;
  for (Term t : kAllTerms) e.active[t] = true;
  cells.push_back(e);
  e.paper_p2c = true, e.window = 32, e.rel_pos = e.rel_pos_raw, e.valid = false;
  cells.push_back(e);
  e.valid = true, e.head_masked = true;
  cells.push_back(e);
  for (Term t : kAllTerms) e.active[t] = t == Term::c2c;
  e.scale_factor = 1, e.head_masked = false;
  cells.push_back(e);  // §3.1's standard attention
  for (Term t : kAllTerms) e.active[t] = false;
  cells.push_back(e);
  std::set<std::string> templates;
  size_t segments = 0;
  for (const CellExplanation& c : cells)
    for (const ExplainStep& st : explanation_steps(c))
      for (const ExplainLine* l : {&st.equation_parts, &st.formula_parts, &st.numbers_parts}) {
        CHECK(english_text(*l) == (l == &st.equation_parts ? st.equation : l == &st.formula_parts ? st.formula : st.numbers));
        for (const ExplainSegment& seg : *l)
          if (seg.prose) templates.insert(seg.text), ++segments;
      }
  CHECK(templates.size() >= 23);  // every template of explain.cpp is reached by one of the cells
  for (const std::string lang : {"ko", "ja", "zh_CN", "it"}) {
    REQUIRE(viewer::i18n::set_language(lang));
    for (const std::string& t : templates) {
      CAPTURE(lang);
      CAPTURE(t);
      CHECK(std::string(viewer::tr(t.c_str())) != t);  // in the catalogue, translated
    }
    // The words a translation gives back with its placeholders filled (no "{row}" left, no English).
    for (const CellExplanation& c : cells)
      for (const ExplainStep& st : explanation_steps(c)) {
        const std::string worded = viewer::explain_worded(st.numbers_parts) + viewer::explain_worded(st.formula_parts);
        CAPTURE(worded);
        CHECK(worded.find('{') == std::string::npos);
        CHECK(worded.find("of the relative table") == std::string::npos);
        CHECK(worded.find("over valid keys") == std::string::npos);
      }
  }
  viewer::i18n::set_language("en");
  MESSAGE(templates.size() << " prose templates, " << segments << " segments");
}

TEST_CASE("labelled_lines: the formulas of lesson steps 9 and 11 align by measured width in every language") {
  using namespace deberta;
  // The splitter on chosen strings.
  const auto two = viewer::labelled_lines("paper:  A = 1\nreleased code:   B = 2");
  REQUIRE(two.size() == 2);
  CHECK(two[0].label == "paper:");
  CHECK(two[0].formula == "A = 1");
  CHECK(two[1].label == "released code:");
  CHECK(two[1].formula == "B = 2");
  CHECK(viewer::labelled_lines("論文：  A\n公開コード：  B").size() == 2);  // a full-width colon
  CHECK(viewer::labelled_lines("paper: A = 1\ncode:  B").empty());        // one space after a colon: prose
  CHECK(viewer::labelled_lines("paper:  A = 1").empty());                 // one line
  CHECK(viewer::labelled_lines("w_ij = exp(Ã_ij / √(3d))").empty());

  const std::string dir = source("notebooks_data/models/deberta-tiny");
  const Model model = load_model(dir);
  const auto tok = load_tokenizer_for_model(dir, model.config.vocab_size);
  const Encoding enc = tok->encode(viewer::kDefaultText);
  Inputs inputs;
  inputs.input_ids = enc.ids;
  const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, true);
  for (const std::string lang : {"en", "ko", "ja", "zh_CN", "it"}) {
    CAPTURE(lang);
    REQUIRE(viewer::i18n::set_language(lang));
    viewer::LessonInput in;
    in.model = &model, in.trace = &trace, in.emd = trace.emd ? &*trace.emd : nullptr;
    in.emd_note = trace.emd ? "" : why_no_emd(model);
    in.tokens = enc.tokens, in.layer = 1, in.head = 0;
    std::vector<std::string> blocks;
    for (const viewer::LessonStep& st : viewer::build_lesson(in))
      if (st.title.rfind("9. ", 0) == 0 || st.title.rfind("11. ", 0) == 0) blocks.push_back(st.equation);
    REQUIRE(blocks.size() == 2);
    ImGuiContext* ctx = ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    {
      viewer::FontAtlas fonts;
      fonts.require(blocks[0] + blocks[1]);
      fonts.init();
      ImFont* mono = fonts.mono();  // the monospace face the steps' equations use
      const auto width = [mono](std::string_view s) { return mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, s.data(), s.data() + s.size()).x; };
      for (const std::string& b : blocks) {
        CAPTURE(b);
        const auto rows = viewer::labelled_lines(b);
        // Every catalogue keeps the "label:  formula" shape: the viewer can align the formulas.
        REQUIRE(rows.size() == 2);
        for (const auto& r : rows) {
          CHECK(!r.label.empty());
          CHECK(!r.formula.empty());
          CHECK(r.formula.front() != ' ');
        }
        // Where the catalogue aligned with spaces, the formulas' measured starts: they differ in
        // Chinese, Japanese and Korean (a CJK character is wider than a monospace cell).
        const float naive0 = width(b.substr(0, static_cast<size_t>(rows[0].formula.data() - b.data())));
        const size_t line2 = b.find('\n') + 1;
        const float naive1 = width(b.substr(line2, static_cast<size_t>(rows[1].formula.data() - b.data()) - line2));
        MESSAGE(lang << ": aligned with spaces, the formulas would start " << std::fabs(naive0 - naive1)
                     << " px apart; measured, at " << std::max(width(rows[0].label), width(rows[1].label)) + width("  ") << " px");
      }
    }
    ImGui::DestroyContext(ctx);
  }
  viewer::i18n::set_language("en");
}
