// The extended differential check of tokenizer.json against Hugging Face's tokenizers library
// (issue 59, item 2). A fixed-seed generator writes a few hundred tokenizer.json files — Unigram
// and WordPiece models with duplicate pieces, with and without "unk_id", with byte fallback;
// added tokens with every flag (rstrip, lstrip, single_word, normalized, special) and ids that are
// the library's, collide with a vocabulary piece or lie beyond the vocabulary; normalizers and
// pre-tokenizers whose regex patterns use constructs where Oniguruma (the library's engine) and
// PCRE2 (ours) differ (^ $ \h \H \v (?m) \A \z \Z \R …) or that we refuse — and texts with every
// kind of line break and whitespace. For each file and text, our ids must equal the library's,
// or we must refuse (the file when it is read, or the text when it is encoded) with a message
// naming the file. Anything else — other ids, ids where the library refuses — fails the test.
//
// The library runs once on all cases (tests/hf_tokenizers/reference.js, mode "cases"); it is
// installed by the ctest fixture hf_tokenizers_install. A missing library is a failure, never a
// skip. The seed is fixed, so every run writes the same files.
#include "test_util.h"

#include "deberta/tokenizer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace deberta;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// splitmix64: the generator's only source of choices.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool percent(int p) { return static_cast<int>(below(100)) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

const std::string kSpace = "\xE2\x96\x81";  // ▁

/// Regex patterns: Oniguruma's meaning where PCRE2's differs (anchors at every line, \h a hex
/// digit, \v VT, (?m) dot-all), constructs both read alike, and constructs we refuse.
const std::vector<std::string> kPatterns = {
    "^\\w+", "\\w+$", "^", "$", "^$", "^.", ".$", "\\h+", "\\H+", "[\\h]+", "[^\\h\\s]+", "\\v", "[\\v]+",
    "(?m)a.b", "(?m:.+)", "(?m).+", "(?i)[a-c]+", "(?i)A(?-i)b", ".+", "\\A\\w+", "\\w+\\z", "\\w+\\Z",
    "\\s+", "\\S+", "\\R", "\\r?\\n", "[^\\n]+", "\\d+", "[[:alpha:]]+", "\\p{L}+", "\\b", "a{2,}", "(?<=a)b",
    "(?=b)", " ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+", "[\\x{0B}-\\x{0D}]", "\\x{2028}|\\x{85}",
    "(?m:^a)", "(?-m).+", "x*", "e*|b",
    // Refused by our reader (Oniguruma reads them another way, or PCRE2 cannot):
    "(?s)a.b", "\\V", "\\Qa.b\\E", "[a[bc]]", "[a-z&&b]", "[\\H]"};

/// Text pieces the texts are made of: letters, spaces and every line break and whitespace kind,
/// digits and hex letters (for \h), the added tokens' contents, "▁".
const std::vector<std::string> kTextParts = {
    "a", "b", "c", "d", "A", "B", "ab", "abc", " ", " ", "  ", "\n", "\r\n", "\r", "\t", "\x0B", "\x0C",
    "\xC2\x85", "\xE2\x80\xA8", "\xC2\xA0", "\xC3\xA9", "e\xCC\x81", "0", "1", "F", "x", "-", ".", "[MASK]",
    "[NEW]", "<x>", "[CLS]", kSpace, "aa", "dd"};

/// Unigram pieces (besides the specials) the vocabularies are drawn from.
const std::vector<std::string> kPieces = {
    "a", "b", "c", "d", "A", "B", "ab", "abc", "cd", "aa", kSpace, kSpace + "a", kSpace + "ab", kSpace + "b",
    kSpace + "c", kSpace + "d", "x", "0", "1", "F", ".", "-", "\xC3\xA9", "e", "\n", "\t", " ", "[NEW]", "<x>",
    kSpace + kSpace, "dd", "B" + kSpace};

json maybe_regex(Rng& rng) { return {{"Regex", rng.pick(kPatterns)}}; }

json normalizer(Rng& rng, int depth = 0) {
  switch (rng.below(depth ? 8 : 10)) {
    case 0: return {{"type", "Lowercase"}};
    case 1: return {{"type", "Strip"}, {"strip_left", rng.percent(50)}, {"strip_right", rng.percent(50)}};
    case 2: return {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}};
    case 3: return {{"type", "Replace"}, {"pattern", maybe_regex(rng)}, {"content", rng.percent(50) ? "-" : ""}};
    case 4: return {{"type", "NFC"}};
    case 5: return {{"type", "NFKC"}};
    case 6: return {{"type", "Prepend"}, {"prepend", kSpace}};
    case 7: return {{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}};
    case 8: return {{"type", "Sequence"}, {"normalizers", {normalizer(rng, 1), normalizer(rng, 1)}}};
    default: return nullptr;
  }
}

json metaspace(Rng& rng) {
  static const std::vector<std::string> schemes = {"always", "first", "never"};
  json m = {{"type", "Metaspace"}, {"replacement", kSpace}, {"prepend_scheme", rng.pick(schemes)}, {"split", rng.percent(75)}};
  return m;
}

json pre_tokenizer(Rng& rng, int depth = 0) {
  static const std::vector<std::string> behaviors = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
  switch (rng.below(depth ? 6 : 8)) {
    case 0:
    case 1: return metaspace(rng);
    case 2: return {{"type", "WhitespaceSplit"}};
    case 3:
    case 4:
      return {{"type", "Split"}, {"pattern", maybe_regex(rng)}, {"behavior", rng.pick(behaviors)}, {"invert", rng.percent(20)}};
    case 5:
      if (rng.percent(50)) return {{"type", "Punctuation"}};
      if (rng.percent(10)) return {{"type", "Digits"}};  // without individual_digits: both refuse the file
      return {{"type", "Digits"}, {"individual_digits", rng.percent(50)}};
    case 6: return {{"type", "Sequence"}, {"pretokenizers", {pre_tokenizer(rng, 1), metaspace(rng)}}};
    default: return nullptr;
  }
}

/// One generated case: the file's JSON, and the texts it is run on.
struct Case {
  json root;
  std::vector<std::string> lines;
};

Case make_case(Rng& rng, size_t index) {
  Case c;
  json& root = c.root;
  root["version"] = "1.0";
  root["truncation"] = nullptr;
  root["padding"] = nullptr;
  root["post_processor"] = nullptr;
  root["decoder"] = nullptr;
  // The model: its vocabulary's pieces and ids, what added tokens are numbered against.
  std::map<std::string, int64_t> ids;  // piece → the library's id (the last entry of a duplicate)
  int64_t size = 0;
  const bool wordpiece = rng.percent(15);
  if (wordpiece) {
    json vocab = json::object();
    for (const char* p : {"[UNK]", "[CLS]", "[SEP]", "a", "b", "##b", "##c", "ab", "c", "d", "##d", ".", "x", "##a", "A", "-"}) {
      if (size > 2 && rng.percent(20)) continue;
      vocab[p] = size;
      ids[p] = size++;
    }
    root["model"] = {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                     {"max_input_chars_per_word", rng.percent(70) ? 100 : 4}, {"vocab", vocab}};
  } else {
    json vocab = json::array();
    auto add = [&](const std::string& piece, double score) {
      vocab.push_back(json::array({piece, score}));
      ids[piece] = size++;
    };
    for (const char* p : {"[UNK]", "[CLS]", "[SEP]"}) add(p, 0.0);
    const size_t n = 6 + rng.below(14);
    for (size_t k = 0; k < n; ++k) add(rng.pick(kPieces), -0.5 - static_cast<double>(rng.below(800)) / 97.0);
    const bool bytes = rng.percent(25);
    if (bytes)
      for (const char* b : {"<0x61>", "<0x0A>", "<0xC3>", "<0xA9>", "<0x20>", "<0x0B>", "<0xE2>", "<0x80>", "<0xA8>"})
        if (rng.percent(70)) add(b, -9.0 - static_cast<double>(rng.below(100)) / 53.0);
    if (rng.percent(20)) {  // a piece listed twice, another score
      const std::string again = vocab[3 + rng.below(n)][0];
      add(again, -0.25 - static_cast<double>(rng.below(800)) / 89.0);
    }
    root["model"] = {{"type", "Unigram"}, {"vocab", vocab}};
    if (rng.percent(80)) root["model"]["unk_id"] = 0;
    if (bytes) root["model"]["byte_fallback"] = true;
  }
  root["normalizer"] = normalizer(rng);
  root["pre_tokenizer"] = pre_tokenizer(rng);
  if (index % 2 == 0) {  // every pattern in turn, in a Split or a Replace, whatever else was drawn
    static const std::vector<std::string> behaviors = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const json pattern = {{"Regex", kPatterns[(index / 2) % kPatterns.size()]}};
    if (index % 6 == 4) {
      root["normalizer"] = {{"type", "Replace"}, {"pattern", pattern}, {"content", rng.percent(50) ? "|" : ""}};
    } else {
      const json split = {{"type", "Split"}, {"pattern", pattern}, {"behavior", rng.pick(behaviors)}, {"invert", rng.percent(20)}};
      root["pre_tokenizer"] = rng.percent(50) ? split : json{{"type", "Sequence"}, {"pretokenizers", {split, metaspace(rng)}}};
    }
  }
  if (wordpiece && rng.percent(60)) root["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
  // Added tokens: the specials as real files list them, then others with random flags and ids.
  json added = json::array();
  auto token = [](int64_t id, const std::string& content, bool special) {
    return json{{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                {"normalized", false}, {"special", special}};
  };
  for (const char* s : {"[UNK]", "[CLS]", "[SEP]"}) added.push_back(token(ids[s], s, true));
  int64_t next = size;
  std::map<std::string, int64_t> given;
  std::vector<std::string> contents = {"[MASK]"};  // [MASK] always: our reader knows it by name
  static const std::vector<std::string> extra = {"[NEW]", "<x>", "ab", "b", "d d", "\n", "[NEW]"};
  for (size_t k = rng.below(4); k > 0; --k) contents.push_back(rng.pick(extra));
  for (const std::string& content : contents) {
    int64_t expected;
    if (ids.count(content)) expected = ids[content];
    else if (given.count(content)) expected = given[content];
    else expected = next;
    int64_t id = expected;
    const size_t how = rng.below(30);
    if (how == 0) id = static_cast<int64_t>(rng.below(static_cast<size_t>(size)));  // collides with a piece
    else if (how == 1) id = next + 1 + static_cast<int64_t>(rng.below(5));          // beyond
    json t = token(id, content, rng.percent(50));
    for (const char* flag : {"rstrip", "lstrip", "single_word", "normalized"})
      if (rng.percent(content == "[MASK]" && std::string(flag) == "lstrip" ? 50 : 4)) t[flag] = true;
    added.push_back(t);
    given.emplace(content, expected);
    next = std::max(next, expected + 1);
  }
  root["added_tokens"] = added;
  // Texts: short runs of the parts, and one empty text now and then.
  const size_t lines = 10;
  for (size_t l = 0; l < lines; ++l) {
    std::string text;
    for (size_t k = rng.below(14); k > 0; --k) text += rng.pick(kTextParts);
    c.lines.push_back(text);
  }
  return c;
}

/// Every "Regex" pattern of a file's components.
void patterns_of(const json& node, std::vector<std::string>* out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items())
      if (key == "Regex" && value.is_string()) out->push_back(value.get<std::string>());
      else patterns_of(value, out);
  } else if (node.is_array()) {
    for (const auto& value : node) patterns_of(value, out);
  }
}

/// What our reader did with one text: ids (without [CLS] … [SEP]) or a refusal's message.
struct Ours {
  bool refused = false;
  std::string message;
  std::vector<int64_t> ids;
};

std::string join(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

/// The verdict on one text of one file: "" when ours equals the library's ids or is a refusal
/// naming `file`; otherwise what is wrong. `theirs` is the library's ids or {"error": …}.
std::string judge(const Ours& ours, const json& theirs, const std::string& file) {
  if (ours.refused)
    return ours.message.find(file) != std::string::npos ? "" : "a refusal that does not name " + file + ": " + ours.message;
  if (theirs.is_object())
    return "the library refuses the text (" + theirs.value("error", std::string("?")) + "), ours gives ids " + join(ours.ids);
  const std::vector<int64_t> want = theirs.get<std::vector<int64_t>>();
  if (ours.ids != want) return "ours " + join(ours.ids) + ", the library " + join(want);
  return "";
}

/// Runs reference.js once from case `start[0]`'s line `start[1]` (mode "cases"): its answer lines
/// parsed, the process's exit status and the first line of its standard error that says why.
struct LibraryRun {
  std::vector<json> items;
  int status = 0;
  std::string why;
};

LibraryRun run_library_from(json job, size_t first, size_t first_line) {
  job["start"] = {first, first_line};
  const fs::path dir = fs::temp_directory_path();
  const std::string stem = "deberta_hf_generated_" + std::to_string(getpid());
  const fs::path job_path = dir / (stem + ".json"), err_path = dir / (stem + ".err");
  std::ofstream(job_path, std::ios::binary) << job.dump();
  const std::string modules = std::string(DEBERTA_HF_TOKENIZERS_DIR) + "/node_modules";
  REQUIRE_MESSAGE(fs::exists(modules + "/tokenizers/package.json"),
                  "the reference library is not installed in " << modules
                      << " (ctest runs tests/hf_tokenizers/install.sh first: run the suite through ctest)");
  const std::string cmd = "RUST_BACKTRACE=0 NODE_PATH='" + modules + "' /usr/bin/node '" +
                          test::source_path("tests/hf_tokenizers/reference.js") + "' '" + job_path.string() + "' 2>'" +
                          err_path.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  LibraryRun run;
  run.status = pclose(pipe);
  std::ifstream err_in(err_path);
  for (std::string line; std::getline(err_in, line);)
    if (run.why.empty() && (line.find("panicked") != std::string::npos || line.find("reference.js") != std::string::npos))
      run.why = line, std::getline(err_in, line), run.why += " " + line;
  fs::remove(job_path);
  fs::remove(err_path);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) run.items.push_back(json::parse(line));
  return run;
}

/// The library's answer for every case: {"load_error": …} or {"results": [ids or {"error": …}
/// per line]}. A text on which the library aborts the process (a Rust panic: it has no answer)
/// is {"error": "the library panicked: …"}, and the run resumes after it.
std::vector<json> run_library(const std::vector<json>& cases, size_t* panics) {
  json job = {{"mode", "cases"}, {"cases", cases}};
  std::vector<json> answer(cases.size());
  size_t k = 0, l = 0;  // the next item expected
  auto advance = [&] {
    if (++l >= cases[k]["lines"].size()) ++k, l = 0;
  };
  while (k < cases.size()) {
    const LibraryRun run = run_library_from(job, k, l);
    for (const json& item : run.items) {
      const size_t c = item["case"].get<size_t>();
      REQUIRE(c == k);
      if (item.contains("load_error")) {
        answer[c] = {{"load_error", item["load_error"]}};
        ++k, l = 0;
        continue;
      }
      REQUIRE(item["line"].get<size_t>() == l);
      if (!answer[c].contains("results")) answer[c] = {{"results", json::array()}};
      answer[c]["results"].push_back(item.contains("ids") ? item["ids"] : json{{"error", item["error"]}});
      advance();
    }
    if (k >= cases.size()) break;
    REQUIRE_MESSAGE(run.status != 0, "reference.js stopped at case " << k << " line " << l << " without an error");
    REQUIRE_MESSAGE(run.why.find("panicked") != std::string::npos, "reference.js failed: " << run.why);
    ++*panics;
    if (!answer[k].contains("results")) answer[k] = {{"results", json::array()}};
    answer[k]["results"].push_back({{"error", "the library panicked: " + run.why}});
    advance();
  }
  return answer;
}

}  // namespace

TEST_SUITE("tokenizer_hf_generated") {
  TEST_CASE("the verdict fails other ids, ids where the library refuses, and a refusal that does not name the file") {
    // The plant: a differing id, ids where the library refused, a refusal without the file's name
    // are each a failure; equal ids and a refusal naming the file pass.
    const std::string file = "/tmp/x/tokenizer.json";
    Ours ids;
    ids.ids = {4, 5};
    CHECK(judge(ids, json::array({4, 5}), file).empty());
    CHECK(judge(ids, json::array({4, 6}), file) == "ours 4 5, the library 4 6");
    CHECK(judge(ids, json::array({4}), file) == "ours 4 5, the library 4");
    CHECK(judge(ids, json{{"error", "Encountered an unknown token"}}, file).find("the library refuses the text") == 0);
    Ours refused;
    refused.refused = true;
    refused.message = file + ": added token \"b\": \"rstrip\": true is not supported";
    CHECK(judge(refused, json::array({4, 6}), file).empty());
    CHECK(judge(refused, json{{"error", "x"}}, file).empty());
    refused.message = "tokenizer.json: something";  // names no file
    CHECK(judge(refused, json::array({4}), file).find("a refusal that does not name") == 0);
  }

  TEST_CASE("issue 59 item 2: 600 generated tokenizer.json files: our ids equal the library's, or we refuse naming the file") {
    constexpr size_t kCases = 600;
    Rng rng{59};
    const fs::path root = test::fresh_temp_dir("deberta_tok_generated_" + std::to_string(getpid()));
    std::vector<Case> cases;
    std::vector<json> job;
    for (size_t k = 0; k < kCases; ++k) {
      cases.push_back(make_case(rng, k));
      const fs::path dir = root / ("case" + std::to_string(k));
      fs::create_directories(dir);
      std::ofstream(dir / "tokenizer.json", std::ios::binary) << cases.back().root.dump();
      job.push_back({{"folder", dir.string()}, {"lines", cases.back().lines}});
    }
    size_t panics = 0;
    const std::vector<json> theirs = run_library(job, &panics);
    REQUIRE(theirs.size() == kCases);
    size_t read = 0, refused_files = 0, library_refused_files = 0, compared = 0, equal = 0, refused_texts = 0,
           library_refused_texts = 0, failures = 0;
    std::map<std::string, size_t> reasons;  // our refusals at load, by their reason's start
    std::map<std::string, std::pair<size_t, size_t>> by_pattern;  // pattern → (texts with equal ids, files refused)
    for (size_t k = 0; k < kCases; ++k) {
      const std::string dir = (root / ("case" + std::to_string(k))).string();
      const std::string file = dir + "/tokenizer.json";
      std::unique_ptr<Tokenizer> tok;
      std::string load_error;
      try {
        tok = load_tokenizer(dir);
      } catch (const Error& e) {
        load_error = e.what();
      }
      const bool library_reads = !theirs[k].contains("load_error");
      std::vector<std::string> patterns;
      patterns_of(cases[k].root, &patterns);
      library_refused_files += !library_reads;
      if (!tok) {
        ++refused_files;
        std::string reason = load_error.substr(std::min(load_error.size(), file.size() + 2));
        // The reason without the values that vary: "added token \"[NEW]\": \"rstrip\": true …" → "added token: rstrip".
        std::string kind = reason.substr(0, reason.find_first_of("\"/(0123456789"));
        for (const char* what : {"rstrip", "lstrip", "single_word", "normalized", "declares id", "is missing", "is not supported",
                                 "unk_id"})
          if (reason.find(what) != std::string::npos) kind += std::string(kind.empty() ? "" : ": ") + what;
        reasons[kind]++;
        for (const std::string& p : patterns) by_pattern[p].second++;
        if (load_error.find(file) == std::string::npos && ++failures <= 10)
          FAIL_CHECK("case " << k << ": refused without naming the file: " << load_error << "\n" << cases[k].root.dump());
        continue;
      }
      ++read;
      if (!library_reads) {
        if (++failures <= 10)
          FAIL_CHECK("case " << k << ": the library refuses the file (" << theirs[k]["load_error"].get<std::string>()
                             << "), ours reads it\n" << cases[k].root.dump());
        continue;
      }
      const json& results = theirs[k]["results"];
      REQUIRE(results.size() == cases[k].lines.size());
      for (size_t l = 0; l < cases[k].lines.size(); ++l) {
        Ours ours;
        try {
          const std::vector<int64_t> all = tok->encode(cases[k].lines[l]).ids;
          REQUIRE(all.size() >= 2);
          ours.ids.assign(all.begin() + 1, all.end() - 1);
        } catch (const Error& e) {
          ours.refused = true;
          ours.message = e.what();
        }
        ++compared;
        refused_texts += ours.refused;
        library_refused_texts += results[l].is_object();
        const std::string verdict = judge(ours, results[l], file);
        equal += !ours.refused && verdict.empty();
        if (!ours.refused && verdict.empty())
          for (const std::string& p : patterns) by_pattern[p].first++;
        if (!verdict.empty() && ++failures <= 10)
          FAIL_CHECK("case " << k << " text " << json(cases[k].lines[l]).dump() << ": " << verdict << "\n" << cases[k].root.dump());
      }
    }
    std::string why;
    for (const auto& [reason, count] : reasons) why += "\n  " + std::to_string(count) + " × " + reason;
    MESSAGE(kCases << " files: " << read << " read, " << refused_files << " refused by us (the library refuses "
                   << library_refused_files << "); " << compared << " texts: " << equal << " equal ids, " << refused_texts
                   << " refused by us (the library refuses " << library_refused_texts << ", " << panics
                   << " of them by a panic that aborts it); " << failures
                   << " failures. Our refusals at load:" << why);
    std::string per_pattern;
    size_t patterns_compared = 0;
    for (const auto& [pattern, counts] : by_pattern) {
      per_pattern += " /" + pattern + "/ " + std::to_string(counts.first) + "|" + std::to_string(counts.second);
      patterns_compared += counts.first > 0;
    }
    MESSAGE("per regex pattern, texts with equal ids | files refused:" << per_pattern);
    CHECK(failures == 0);
    // Every pattern of kPatterns is in some file; all but the six refused ones give compared ids.
    size_t present = 0;
    for (const std::string& p : kPatterns) present += by_pattern.count(p);
    CHECK(present == kPatterns.size());
    CHECK(patterns_compared + 6 >= kPatterns.size());
    // The generator covers what it is for: most files are read and compared, some refused.
    CHECK(read * 2 > kCases);
    CHECK(equal > 1500);
    CHECK(refused_files > 20);
    // ... and each kind of added-token refusal and the missing field come up (the flags and ids
    // the library would treat otherwise), as do texts the library refuses (no unk_id).
    auto refused_for = [&](const std::string& what) {
      size_t n = 0;
      for (const auto& [reason, count] : reasons) n += reason.find(what) != std::string::npos ? count : 0;
      return n;
    };
    for (const char* what : {"rstrip", "lstrip", "single_word", "normalized", "declares id", "is missing", "regex"}) {
      CAPTURE(what);
      CHECK(refused_for(what) > 0);
    }
    CHECK(library_refused_texts > 100);
    fs::remove_all(root);
  }
}
