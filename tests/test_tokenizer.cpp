// Tokenizer tests: SentencePiece ids equal the Python sentencepiece library's for every fixture
// sentence; the GPT-2 byte-level BPE matches an independent Python implementation; DeBERTa's
// layout, special tokens and [MASK] handling; bad inputs raise Error with a clear message.
// Fixtures: notebooks_data/references/make_fixtures.py.
#include "test_util.h"

#include "deberta/file_limits.h"
#include "deberta/tokenizer.h"
#include "io/tokenizer_detail.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

using namespace deberta;

namespace {

std::string fixture(const std::string& relative) {
  return test::source_path("notebooks_data/fixtures/" + relative);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  std::stringstream buf;
  buf << in.rdbuf();
  return nlohmann::json::parse(buf.str());
}

std::string join(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}


}  // namespace

TEST_SUITE("tokenizer") {
  TEST_CASE("SentencePiece ids equal the Python library's for every fixture sentence") {
    const auto tok = load_tokenizer(fixture("spm"));
    CHECK(tok->kind() == "sentencepiece");
    const auto expected = read_json(fixture("spm/expected.json"));
    const auto& sentences = expected["sentences"];
    REQUIRE(sentences.size() >= 50);
    bool saw_long = false;
    for (const auto& s : sentences) {
      const std::string text = s["text"];
      saw_long = saw_long || text.size() >= 2000;
      std::vector<int64_t> want = {tok->cls_id()};
      for (const auto& id : s["ids"]) want.push_back(id.get<int64_t>());
      want.push_back(tok->sep_id());
      const Encoding e = tok->encode(text);
      CHECK_MESSAGE(e.ids == want, "text: \"" << text << "\"\n  ours:   " << join(e.ids) << "\n  python: " << join(want));
      CHECK(e.token_type_ids == std::vector<int64_t>(want.size(), 0));
      REQUIRE(e.tokens.size() == want.size());
      // Raw pieces as Python gives them (Python shows an unknown piece as its surface text).
      for (size_t k = 0; k < s["pieces"].size(); ++k)
        if (want[k + 1] != tok->unk_id()) CHECK(tok->piece(want[k + 1]) == s["pieces"][k].get<std::string>());
    }
    CHECK(saw_long);
  }

  TEST_CASE("SentencePiece special tokens come from the side files; [MASK] is an added token") {
    const auto tok = load_tokenizer(fixture("spm"));
    const auto expected = read_json(fixture("spm/expected.json"));
    CHECK(tok->pad_id() == 0);
    CHECK(tok->cls_id() == 1);
    CHECK(tok->sep_id() == 2);
    CHECK(tok->unk_id() == 3);
    CHECK(tok->mask_id() == expected["mask_id"].get<int64_t>());
    CHECK(tok->vocab_size() == expected["vocab_size"].get<int64_t>() + 1);
    CHECK(tok->piece(tok->mask_id()) == "[MASK]");
    CHECK(tok->display(tok->mask_id()) == "[MASK]");
    CHECK(tok->display(-5) == "<id -5>");
    CHECK(tok->display(tok->vocab_size() + 10) == "<id " + std::to_string(tok->vocab_size() + 10) + ">");

    // "The [MASK] sat." = "The" + [MASK] + " sat." (the mask swallows the space before it).
    const Encoding plain_the = tok->encode("The");
    const Encoding plain_sat = tok->encode(" sat.");
    const Encoding e = tok->encode("The [MASK] sat.");
    std::vector<int64_t> want = {tok->cls_id()};
    want.insert(want.end(), plain_the.ids.begin() + 1, plain_the.ids.end() - 1);
    want.push_back(tok->mask_id());
    want.insert(want.end(), plain_sat.ids.begin() + 1, plain_sat.ids.end() - 1);
    want.push_back(tok->sep_id());
    CHECK_MESSAGE(e.ids == want, "ours " << join(e.ids) << " want " << join(want));
    CHECK(tok->encode("[MASK][MASK]").ids == std::vector<int64_t>{1, tok->mask_id(), tok->mask_id(), 2});

    // Display: "▁" becomes a leading space.
    const Encoding hello = tok->encode("hello world");
    bool spaced = false;
    for (const std::string& t : hello.tokens) spaced = spaced || (!t.empty() && t[0] == ' ');
    CHECK(spaced);
    for (const std::string& t : hello.tokens) CHECK(t.find("\xE2\x96\x81") == std::string::npos);
  }

  TEST_CASE("pairs: [CLS] A [SEP] B [SEP] with token types") {
    const auto tok = load_tokenizer(fixture("spm"));
    const std::string a = "In the beginning.", b = "And the earth.";
    const Encoding ea = tok->encode(a), eb = tok->encode(b);
    const Encoding e = tok->encode(a, &b);
    std::vector<int64_t> want = ea.ids;
    want.insert(want.end(), eb.ids.begin() + 1, eb.ids.end());
    CHECK(e.ids == want);
    std::vector<int64_t> types(ea.ids.size(), 0);
    types.resize(want.size(), 1);
    CHECK(e.token_type_ids == types);
    CHECK(e.tokens.size() == e.ids.size());
  }

  TEST_CASE("GPT-2 byte-level BPE matches the independent Python tokenisation") {
    const auto tok = load_tokenizer(fixture("bpe"));
    CHECK(tok->kind() == "gpt2-bpe");
    const auto expected = read_json(fixture("bpe/expected.json"));
    REQUIRE(expected["sentences"].size() >= 20);
    for (const auto& s : expected["sentences"]) {
      const std::string text = s["text"];
      std::vector<int64_t> want = {tok->cls_id()};
      for (const auto& id : s["ids"]) want.push_back(id.get<int64_t>());
      want.push_back(tok->sep_id());
      const Encoding e = tok->encode(text);
      CHECK_MESSAGE(e.ids == want, "text: \"" << text << "\"\n  ours:   " << join(e.ids) << "\n  python: " << join(want));
      for (size_t k = 0; k < s["tokens"].size() && k + 1 < e.ids.size(); ++k)
        CHECK(tok->piece(e.ids[k + 1]) == s["tokens"][k].get<std::string>());
    }
    // DeBERTa v1's special tokens from vocab.json.
    CHECK(tok->piece(tok->cls_id()) == "[CLS]");
    CHECK(tok->piece(tok->sep_id()) == "[SEP]");
    CHECK(tok->piece(tok->pad_id()) == "[PAD]");
    CHECK(tok->piece(tok->unk_id()) == "[UNK]");
    CHECK(tok->piece(tok->mask_id()) == "[MASK]");
    // "Ġthe" is shown as " the"; the mask swallows the space before it.
    const Encoding e = tok->encode("over the [MASK] dog");
    CHECK(std::find(e.ids.begin(), e.ids.end(), tok->mask_id()) != e.ids.end());
    for (const std::string& t : e.tokens) CHECK(t.find("\xC4\xA0") == std::string::npos);  // no "Ġ"
    const auto mask_at = std::find(e.ids.begin(), e.ids.end(), tok->mask_id()) - e.ids.begin();
    CHECK(e.tokens.at(mask_at - 1).back() != ' ');
    CHECK(e.tokens.at(mask_at + 1) .front() == ' ');
  }

  TEST_CASE("tokenizer.json: Unigram equals SentencePiece, byte-level BPE equals vocab.json + merges.txt") {
    const auto uni = load_tokenizer(fixture("tokenizer_json_unigram"));
    CHECK(uni->kind() == "tokenizer.json (unigram)");
    const auto expected = read_json(fixture("tokenizer_json_unigram/expected.json"));
    REQUIRE(expected["sentences"].size() >= 30);
    CHECK(uni->mask_id() == expected["mask_id"].get<int64_t>());
    for (const auto& s : expected["sentences"]) {
      const std::string text = s["text"];
      std::vector<int64_t> want = {uni->cls_id()};
      for (const auto& id : s["ids"]) want.push_back(id.get<int64_t>());
      want.push_back(uni->sep_id());
      const Encoding e = uni->encode(text);
      CHECK_MESSAGE(e.ids == want, "text: \"" << text << "\"\n  ours:   " << join(e.ids) << "\n  python: " << join(want));
    }
    const auto spm = load_tokenizer(fixture("spm"));
    const std::string masked = "The [MASK] sat on the mat.";
    CHECK(uni->encode(masked).ids == spm->encode(masked).ids);

    const auto bpe_json = load_tokenizer(fixture("tokenizer_json_bpe"));
    const auto bpe = load_tokenizer(fixture("bpe"));
    const auto bpe_expected = read_json(fixture("bpe/expected.json"));
    for (const auto& s : bpe_expected["sentences"]) {
      const std::string text = s["text"];
      CHECK_MESSAGE(bpe_json->encode(text).ids == bpe->encode(text).ids, text);
    }
    CHECK(bpe_json->mask_id() == bpe->mask_id());
  }

  TEST_CASE("the bundled model's tokenizer loads") {
    const std::string dir = test::source_path("notebooks_data/models/deberta-tiny");
    REQUIRE_MESSAGE(has_tokenizer(dir), "the bundled model must ship its tokenizer: " << dir);
    const auto tok = load_tokenizer(dir);
    const Encoding e = tok->encode("The [MASK] is here.");
    CHECK(e.ids.front() == tok->cls_id());
    CHECK(e.ids.back() == tok->sep_id());
    CHECK(std::count(e.ids.begin(), e.ids.end(), tok->mask_id()) == 1);
  }

  TEST_CASE("prepare(): spm.model's second parse on demand or as a step of its own, the same ids either way (issue 55, item 4)") {
    // Text glued to a special token is encoded by the model without the dummy prefix, parsed by
    // prepare() (the web page's load calls it as a step of its own; encode calls it when needed).
    const std::string dir = test::source_path("notebooks_data/models/deberta-tiny");
    const std::vector<std::string> texts = {"The [MASK] is here.", "a [MASK].", "a[MASK]ing", "[MASK][MASK]!", "x[MASK]y"};
    const auto on_demand = load_tokenizer(dir);
    const auto stepped = load_tokenizer(dir);
    stepped->prepare();
    stepped->prepare();  // once is enough; a second call does nothing
    for (const auto& t : texts) CHECK_MESSAGE(on_demand->encode(t).ids == stepped->encode(t).ids, t);
    // Four threads asking for it at once, before any encode: one parse, the same ids.
    const auto raced = load_tokenizer(dir);
    std::vector<std::thread> threads;
    std::vector<std::vector<int64_t>> got(4);
    for (size_t k = 0; k < got.size(); ++k)
      threads.emplace_back([&, k] { got[k] = raced->encode(texts[k % texts.size()]).ids; });
    for (auto& th : threads) th.join();
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == on_demand->encode(texts[k % texts.size()]).ids);
    // The glued text really takes the second model: "[MASK]." without it gives [MASK] "▁" ".".
    const Encoding e = stepped->encode("a [MASK].");
    REQUIRE(e.ids.size() >= 4);
    CHECK(stepped->piece(e.ids[e.ids.size() - 2]) == ".");
  }

  TEST_CASE("bad inputs raise Error with a clear message") {
    const auto spm = load_tokenizer(fixture("spm"));
    const auto bpe = load_tokenizer(fixture("bpe"));
    for (const std::string& bad : {std::string("abc\xff"), std::string("\xc3"), std::string("\xed\xa0\x80"),
                                  std::string("\xc0\xaf"), std::string("ok\xf4\x90\x80\x80")}) {
      CAPTURE(bad.size());
      const std::string m1 = test::error_of([&] { spm->encode(bad); });
      CHECK_MESSAGE(m1.find("not valid UTF-8") != std::string::npos, m1);
      const std::string m2 = test::error_of([&] { bpe->encode(bad); });
      CHECK_MESSAGE(m2.find("not valid UTF-8") != std::string::npos, m2);
      const std::string good = "fine";
      const std::string m3 = test::error_of([&] { spm->encode(good, &bad); });
      CHECK_MESSAGE(m3.find("not valid UTF-8") != std::string::npos, m3);
    }
    CHECK(test::error_of([&] { spm->encode("abc\xff"); }).find("byte 0xff at offset 3") != std::string::npos);

    const std::string not_spm = test::error_of([] { load_tokenizer(fixture("spm_bad")); });
    CHECK_MESSAGE(not_spm.find("spm.model: not a SentencePiece model") != std::string::npos, not_spm);

    const std::string none = test::error_of([] { load_tokenizer(fixture("checkpoints")); });
    CHECK_MESSAGE(none.find("no tokenizer") != std::string::npos, none);
    CHECK_FALSE(has_tokenizer(fixture("checkpoints")));
    CHECK(has_tokenizer(fixture("spm")));
    CHECK(has_tokenizer(fixture("spm/spm.model")));  // a file: its folder is used
  }

  TEST_CASE("broken vocab.json / merges.txt / side files are named in the error") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "deberta_tok_bad";
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
    write("vocab.json", "{\"[CLS]\": 0, \"[SEP]\": 1, \"[UNK]\": 2,");
    write("merges.txt", "#version: 0.2\na b\n");
    std::string m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("vocab.json: not valid JSON") != std::string::npos, m);
    write("vocab.json", "{\"[CLS]\": 0, \"[SEP]\": 1, \"[UNK]\": 2}");
    write("merges.txt", "#version: 0.2\na b c\n");
    m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("merges.txt:2: expected two symbols") != std::string::npos, m);
    write("merges.txt", "a b\n");
    write("vocab.json", "{\"[SEP]\": 1, \"[UNK]\": 2}");
    m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("no CLS token \"[CLS]\"") != std::string::npos, m);
    write("vocab.json", "{\"[CLS]\": 0, \"[SEP]\": 1, \"[UNK]\": 2}");
    write("added_tokens.json", "[1, 2]");
    m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("added_tokens.json: expected an object") != std::string::npos, m);
    fs::remove(dir / "added_tokens.json");
    const auto tok = load_tokenizer(dir.string());
    CHECK(tok->mask_id() == 3);  // appended after the vocabulary
    CHECK(tok->encode("zz").ids == std::vector<int64_t>{0, 2, 2, 1});  // unknown bytes → [UNK]
    fs::remove_all(dir);
  }

  TEST_CASE("long inputs: Unigram Viterbi and BPE merges stay fast (issue 12)") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "deberta_tok_long";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A Unigram vocabulary with a piece of 1,024 bytes, the longest tokenizer.json may hold (issue 59,
    // class 6: longer ones are refused): the old Viterbi hashed every substring up to the longest
    // piece at every start (cubic); the trie walk is linear per start. A word of 16 such pieces.
    const std::string long_piece(1024, 'a');
    nlohmann::json vocab = nlohmann::json::array({{"[PAD]", 0.0}, {"[CLS]", 0.0}, {"[SEP]", 0.0}, {"[UNK]", 0.0},
                                                  {"\u2581", -1.0}, {"a", -5.0}, {"aa", -6.0}, {long_piece, -2.0}, {"b", -5.0}});
    nlohmann::json tj = {{"model", {{"type", "Unigram"}, {"unk_id", 3}, {"vocab", vocab}}},
                         {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", true}}}};
    std::ofstream(dir / "tokenizer.json") << tj.dump();
    const auto unigram = load_tokenizer(dir.string());
    auto t0 = std::chrono::steady_clock::now();
    std::string word;
    for (int k = 0; k < 16; ++k) word += long_piece;
    const Encoding e16 = unigram->encode(word);
    const double unigram_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("Unigram, one 16,384-character word: " << unigram_s << " s");
    CHECK(unigram_s < 60.0);  // a hang guard, not a benchmark
    CHECK(e16.ids.size() == 16 + 3);  // [CLS] ▁ 16 × <the long piece> [SEP]
    // [CLS] ▁ <the long piece> [SEP]: one piece (score -2) beats 512 "aa" (-3,072).
    const Encoding e = unigram->encode(long_piece);
    CHECK(e.ids == std::vector<int64_t>{1, 4, 7, 2});
    // The same word with a "b" after it: the long piece, then "b".
    const Encoding e2 = unigram->encode(long_piece + "b");
    CHECK(e2.ids == std::vector<int64_t>{1, 4, 7, 8, 2});

    // BPE: a 100,000-letter word is one pre-tokenizer chunk; the old merge loop rescanned the
    // chunk once per merge (quadratic: over a minute).
    const auto bpe = load_tokenizer(fixture("bpe"));
    std::string text;
    for (int k = 0; text.size() < 100000; ++k) text += "abcdefghij"[k % 10] == 'j' ? "the" : std::string(1, "abcdefghij"[k % 10]);
    t0 = std::chrono::steady_clock::now();
    const Encoding b = bpe->encode(text);
    const double bpe_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("BPE, one 100,000-character word: " << bpe_s << " s, " << b.ids.size() << " tokens");
    CHECK(bpe_s < 60.0);  // a hang guard, not a benchmark
    // Decoding the pieces gives the text back (merges only ever join neighbours).
    std::string back;
    for (size_t k = 1; k + 1 < b.ids.size(); ++k) back += bpe->display(b.ids[k]);
    CHECK(back == text);
    fs::remove_all(dir);
  }

  TEST_CASE("added tokens: the trie split equals the leftmost-longest scan and stays fast for 200k tokens (issue 28, class 4)") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "deberta_tok_added";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A tiny Unigram vocabulary over "a".."d" and the specials; the added tokens are random words
    // over the same letters, so they overlap each other and the text everywhere.
    nlohmann::json vocab = nlohmann::json::array({{"[PAD]", 0.0}, {"[CLS]", 0.0}, {"[SEP]", 0.0}, {"[UNK]", 0.0},
                                                  {"\u2581", -1.0}, {"a", -2.0}, {"b", -2.0}, {"c", -2.0}, {"d", -2.0}});
    uint64_t state = 12345;
    auto next = [&] { state = state * 6364136223846793005ULL + 1442695040888963407ULL; return state >> 33; };
    auto random_word = [&](size_t max_len) {
      std::string w;
      for (size_t n = 1 + next() % max_len; n > 0; --n) w += static_cast<char>('a' + next() % 4);
      return w;
    };
    auto write_added = [&](size_t count, size_t max_len) {
      nlohmann::json added = nlohmann::json::array();
      std::map<std::string, int64_t> tokens;
      for (size_t k = 0; k < count; ++k) {
        const std::string w = random_word(max_len) + "x" + random_word(3);  // "x" keeps them off the base vocabulary
        if (tokens.emplace(w, 9 + static_cast<int64_t>(tokens.size())).second)
          added.push_back({{"id", tokens[w]}, {"content", w}, {"special", false}});
      }
      nlohmann::json tj = {{"model", {{"type", "Unigram"}, {"unk_id", 3}, {"vocab", vocab}}},
                           {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", true}}},
                           {"added_tokens", added}};
      std::ofstream(dir / "tokenizer.json") << tj.dump();
      return tokens;
    };
    // Correctness: 300 added tokens, 200 texts; the ids of the added tokens found equal the naive
    // scan's (at each position, the longest token that starts there, else one byte of plain text).
    const auto tokens = write_added(300, 4);
    const auto tok = load_tokenizer(dir.string());
    int checked = 0;
    for (int t = 0; t < 200; ++t) {
      std::string text;
      for (int w = 0; w < 20; ++w) text += random_word(6) + (next() % 3 == 0 ? "x" : "");
      std::vector<int64_t> expected;
      for (size_t i = 0; i < text.size();) {
        size_t best = 0;
        int64_t id = -1;
        for (const auto& [w, wid] : tokens)
          if (w.size() > best && text.compare(i, w.size(), w) == 0) best = w.size(), id = wid;
        if (best == 0) { ++i; continue; }
        expected.push_back(id);
        i += best;
      }
      std::vector<int64_t> got;
      for (int64_t id : tok->encode(text).ids)
        if (id >= 9) got.push_back(id);
      CHECK_MESSAGE(got == expected, text);
      checked += static_cast<int>(expected.size());
    }
    CHECK(checked > 1000);  // the texts do contain many added tokens
    // Scale: 200,000 added tokens on a 24 KB text. The per-position scan over every token took
    // over 60 s; the trie walks at most the longest match per position.
    write_added(200000, 8);
    const auto many = load_tokenizer(dir.string());
    std::string text;
    while (text.size() < 24000) text += random_word(8) + "x ";
    const auto t0 = std::chrono::steady_clock::now();
    const Encoding e = many->encode(text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("200,000 added tokens, 24 KB text: " << seconds << " s, " << e.ids.size() << " ids");
    CHECK(seconds < 20.0);  // a hang guard, not a benchmark
    fs::remove_all(dir);
  }

  TEST_CASE("display() is valid UTF-8 even for a byte-level piece holding half a character (issue 28, classes 14, 17)") {
    // valid_utf8: well-formed text is unchanged; each byte that starts no well-formed sequence
    // becomes U+FFFD (overlong forms, surrogates, > U+10FFFF, truncated and stray bytes).
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(valid_utf8("plain \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80") == "plain \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80");
    CHECK(valid_utf8("a\xC3") == "a" + fffd);
    CHECK(valid_utf8("\xA9" "b") == fffd + "b");
    CHECK(valid_utf8("\xC0\xAF") == fffd + fffd);              // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == fffd + fffd + fffd);  // a surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // above U+10FFFF
    // A SentencePiece model whose piece "▁the" has a byte patched to 0xFF (the protobuf holds any
    // bytes): its label was the raw bytes, which broke JSON output, Python strings and cairo figures.
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "deberta_tok_bad_piece";
    fs::remove_all(dir);
    fs::copy(fixture("spm"), dir);
    std::string model;
    {
      std::ifstream in(dir / "spm.model", std::ios::binary);
      model.assign(std::istreambuf_iterator<char>(in), {});
    }
    const size_t at = model.find("\xE2\x96\x81the");
    REQUIRE(at != std::string::npos);
    model[at + 4] = '\xFF';  // the "h"
    std::ofstream(dir / "spm.model", std::ios::binary) << model;
    const auto tok = load_tokenizer(dir.string());
    int bad_pieces = 0;
    for (int64_t id = 0; id < tok->vocab_size(); ++id) {
      CHECK_NOTHROW(require_utf8(tok->display(id), "label"));
      if (valid_utf8(tok->piece(id)) == tok->piece(id)) continue;
      ++bad_pieces;
      CHECK(tok->display(id) == " t" + fffd + "e");  // "▁t\\xFFe"
    }
    CHECK(bad_pieces == 1);
    fs::remove_all(dir);
  }

  TEST_CASE("the bundled models' tokenizer.json gives spm.model's ids on every held-out line (the web edition reads it)") {
   for (const char* name : {"deberta-tiny", "deberta-tiny-512"}) {
    CAPTURE(name);
    const std::string dir = test::source_path(std::string("notebooks_data/models/") + name);
    const auto spm = load_tokenizer(dir);  // spm.model comes first on the desktop
    REQUIRE(spm->kind() == "sentencepiece");
    const auto json = tokenizer_detail::load_tokenizer_json(dir);
    std::ifstream in(test::source_path("notebooks_data/corpus/heldout.txt"));
    REQUIRE(in);
    std::string line;
    int lines = 0, differ = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      ++lines;
      const Encoding a = spm->encode(line), b = json->encode(line);
      if (a.ids != b.ids && ++differ <= 3) CHECK_MESSAGE(a.ids == b.ids, line);
    }
    const std::string masked = "the [MASK] of the sentence.";
    CHECK(spm->encode(masked).ids == json->encode(masked).ids);
    MESSAGE(lines << " held-out lines, " << differ << " differ");
    CHECK(lines > 9000);
    CHECK(differ == 0);
   }
  }

  TEST_CASE("the CJK fixture's tokenizer.json gives spm.model's ids on Korean, Japanese, Chinese and mixed text (web edition)") {
    const std::string dir = test::source_path("notebooks_data/fixtures/cjk_model");
    const auto spm = load_tokenizer(dir);
    REQUIRE(spm->kind() == "sentencepiece");
    const auto json = tokenizer_detail::load_tokenizer_json(dir);
    // Sentences of the fixture's training text, unseen ones, [MASK], Latin and Cyrillic beside them.
    for (const char* line : {"우리는 도서관에서 책을 읽는다.", "나는 책을 [MASK]. 私は本を読みます。我在看书。 Привет",
                             "ひらがなとカタカナを勉強しています。", "北京是中国的首都。", "새로운 문장, 新しい文, 新句子 abc"}) {
      CAPTURE(line);
      const Encoding a = spm->encode(line), b = json->encode(line);
      CHECK(a.ids == b.ids);
      CHECK(a.ids.size() > 3);
    }
  }

  TEST_CASE("hostile tokenizer files: deep JSON, special files, ids beyond the model's vocabulary (issue 12)") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "deberta_tok_hostile";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "tokenizer.json") << "{\"model\": " << std::string(50000, '[') << std::string(50000, ']') << "}";
    std::string m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("tokenizer.json: JSON nests deeper than 128 levels") != std::string::npos, m);
    // Brackets inside strings do not count; 100 real levels are fine for the depth check.
    CHECK_NOTHROW(check_json_depth("{\"a\": \"" + std::string(1000, '[') + "\"}", "x"));
    CHECK_NOTHROW(check_json_depth(std::string(100, '[') + std::string(100, ']'), "x"));
    CHECK_THROWS_AS(check_json_depth(std::string(129, '{'), "x"), Error);
    fs::remove(dir / "tokenizer.json");
    // spm.model that is /dev/zero: refused before a byte is read.
    fs::create_symlink("/dev/zero", dir / "spm.model");
    m = test::error_of([&] { load_tokenizer(dir.string()); });
    CHECK_MESSAGE(m.find("spm.model: not a regular file") != std::string::npos, m);
    fs::remove_all(dir);

    // The fixture spm has 1,000 pieces and [MASK] = 1000: a 1,001-row model fits, 1,000 does not.
    const auto spm = load_tokenizer(fixture("spm"));
    REQUIRE(spm->mask_id() == 1000);
    CHECK_NOTHROW(check_tokenizer_fits_model(*spm, 1001, "m"));
    m = test::error_of([&] { check_tokenizer_fits_model(*spm, 1000, "m"); });
    CHECK_MESSAGE(m.find("gives ids up to 1000 but the model's vocab_size is 1000") != std::string::npos, m);
    m = test::error_of([&] { load_tokenizer_for_model(fixture("spm"), 48); });
    CHECK_MESSAGE(m.find("vocab_size is 48") != std::string::npos, m);
  }

  TEST_CASE("deberta tokenize --json prints what encode gives; bad text is one clear line") {
    const std::string dir = fixture("spm");
    const test::CliRun run_out = test::run_cli("tokenize --model '" + dir + "' --text 'Hello [MASK] world' --pair 'x y' --json");
    const std::string& out = run_out.output;
    const int status = run_out.exit_code;
    REQUIRE_MESSAGE(status == 0, out);
    const auto j = nlohmann::json::parse(out);
    const std::string text = "Hello [MASK] world", pair = "x y";
    const Encoding e = load_tokenizer(dir)->encode(text, &pair);
    CHECK(j["ids"].get<std::vector<int64_t>>() == e.ids);
    CHECK(j["token_type_ids"].get<std::vector<int64_t>>() == e.token_type_ids);
    CHECK(j["tokens"].get<std::vector<std::string>>() == e.tokens);
    CHECK(out.find("{\"tokens\"") == 0);  // keys in the documented order

    const test::CliRun run_table = test::run_cli("tokenize --model '" + dir + "' --text 'Hello'");
    const std::string& table = run_table.output;
    const int table_status = run_table.exit_code;
    CHECK(table_status == 0);
    CHECK(table.find("[CLS]") != std::string::npos);

    const test::CliRun run_bad = test::run_cli("tokenize --model '" + dir + "' --text \"$(printf 'caf\\351')\"");
    const std::string& bad = run_bad.output;
    const int bad_status = run_bad.exit_code;
    CHECK(bad_status == 1);
    CHECK_MESSAGE(bad.find("--text: text is not valid UTF-8 (byte 0xe9 at offset 3)") != std::string::npos, bad);
    CHECK(std::count(bad.begin(), bad.end(), '\n') == 1);
  }
}
