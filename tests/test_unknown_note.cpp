// test_unknown_note.cpp — the "unknown tokens" note (deberta/inputs.h, unknown_tokens_note; issue
// 41): its advice fits the model in use. A text the English bundled model does not know ([UNK])
// is sent to the multilingual bundled model; on the multilingual model itself, whose vocabulary has
// byte fallback, the note says the characters are spelled as bytes and never sends the reader to
// the model that is already open.
#include "test_util.h"

#include "deberta/inputs.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>

#include <string>

using namespace deberta;
using deberta::test::source_path;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
UnknownTokens counts_of(const std::string& dir, const std::string& text) {
  const auto tok = load_tokenizer(dir);
  return count_unknown_tokens(*tok, tok->encode(text).ids);
}
}  // namespace

TEST_SUITE("unknown_note") {
  TEST_CASE("mostly [UNK]: the note sends the reader to the multilingual model") {
    UnknownTokens c;
    c.unknown = 6, c.bytes = 0, c.total = 10;
    const std::string note = unknown_tokens_note(c);
    INFO(note);
    CHECK(has(note, "60 % of the input's tokens"));
    CHECK(has(note, "(6 [UNK] of 10)"));
    CHECK(has(note, "Open the multilingual bundled model"));
    CHECK_FALSE(has(note, "bytes"));
  }

  TEST_CASE("mostly byte pieces: the note says the characters are spelled as bytes, not which model to open") {
    UnknownTokens c;
    c.unknown = 1, c.bytes = 8, c.total = 20;
    const std::string note = unknown_tokens_note(c);
    INFO(note);
    CHECK(has(note, "45 % of the input's tokens"));
    CHECK(has(note, "(1 [UNK] and 8 byte pieces of 20)"));
    CHECK(has(note, "UTF-8 bytes"));
    CHECK(has(note, "knows them only from those bytes"));
    CHECK_FALSE(has(note, "multilingual"));
    CHECK_FALSE(has(note, "Open "));
  }

  TEST_CASE("at or under 10 % there is no note") {
    UnknownTokens c;
    c.unknown = 1, c.bytes = 0, c.total = 10;
    CHECK(unknown_tokens_note(c).empty());
    c.unknown = 0, c.bytes = 1;
    CHECK(unknown_tokens_note(c).empty());
  }

  TEST_CASE("the bundled models: Korean on the English model is sent to the multilingual one; runes on the "
            "multilingual model are spelled as bytes") {
    const std::string english = source_path("notebooks_data/models/deberta-tiny-512");
    const std::string multilingual = source_path("notebooks_data/models/deberta-tiny-multilingual");
    const UnknownTokens korean = counts_of(english, "나는 도서관에서 책을 읽었다.");
    const std::string on_english = unknown_tokens_note(korean);
    INFO("English model, Korean: " << on_english);
    CHECK(korean.unknown > 0);
    CHECK(korean.bytes == 0);  // no byte fallback in the English vocabulary
    CHECK(has(on_english, "Open the multilingual bundled model"));

    // Runic letters: no piece of the multilingual vocabulary has them, so they become byte pieces.
    const UnknownTokens runes = counts_of(multilingual, "ᚠᚢᚦᚨᚱᚲ ᚷᚹᚺᚾᛁᛃ");
    const std::string on_multilingual = unknown_tokens_note(runes);
    INFO("multilingual model, runes: " << on_multilingual);
    CHECK(runes.bytes > runes.unknown);
    REQUIRE_FALSE(on_multilingual.empty());
    CHECK(has(on_multilingual, "UTF-8 bytes"));
    CHECK_FALSE(has(on_multilingual, "multilingual"));
  }
}
