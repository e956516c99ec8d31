// test_inputs.cpp — tokenize_input, the one input resolver of the CLI, the viewer and the Python
// module (deberta/inputs.h): what each kind of request becomes, and each refusal.
#include "test_util.h"

#include "deberta/inputs.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>

using namespace deberta;
using deberta::test::error_of;
using deberta::test::source_path;

TEST_SUITE("inputs") {
  TEST_CASE("a text, a pair, ids with token types and explicit positions resolve as the CLI documents") {
    const std::string dir = source_path("notebooks_data/models/deberta-tiny");
    const Model model = load_model(dir);
    const auto tok = load_tokenizer_for_model(dir, model.config.vocab_size);
    InputRequest q;
    q.text = "The LORD is my [MASK].";
    const TokenizedInput a = tokenize_input(model, tok.get(), q);
    const Encoding enc = tok->encode(q.text);
    CHECK(a.inputs.input_ids == enc.ids);
    CHECK(a.names == enc.tokens);
    REQUIRE(a.mask_positions.size() == 1);
    CHECK(a.inputs.input_ids[static_cast<size_t>(a.mask_positions[0])] == tok->mask_id());

    q.pair = "a shepherd";
    const TokenizedInput p = tokenize_input(model, tok.get(), q);
    const std::string pair = "a shepherd";
    CHECK(p.inputs.input_ids == tok->encode(q.text, &pair).ids);

    InputRequest ids;
    ids.ids = {1, 17, 4, 2};
    ids.positions = {2};
    const TokenizedInput b = tokenize_input(model, tok.get(), ids);
    CHECK(b.inputs.input_ids == ids.ids);
    CHECK(b.mask_positions == std::vector<int64_t>{2});
    CHECK(b.names[1] == tok->display(17));
    // Without a tokenizer the names are #id and the mask id must be given.
    ids.positions.clear();
    ids.mask_id = 4;
    const TokenizedInput c = tokenize_input(model, nullptr, ids);
    CHECK(c.names[1] == "#17");
    CHECK(c.mask_positions == std::vector<int64_t>{2});
  }

  TEST_CASE("each refusal is an InvalidInput naming the problem") {
    const std::string dir = source_path("notebooks_data/models/deberta-tiny");
    const Model model = load_model(dir);
    InputRequest none;
    CHECK_THROWS_AS(tokenize_input(model, nullptr, none), InvalidInput);
    InputRequest text;
    text.text = "hello";
    CHECK(error_of([&] { tokenize_input(model, nullptr, text, "bad spm.model"); }).find("tokenizer not loaded: bad spm.model") !=
          std::string::npos);
    InputRequest q;
    q.ids = {1, 2, 3};
    q.token_types = {0, 1};
    CHECK(error_of([&] { tokenize_input(model, nullptr, q); }).find("2 values for 3 ids") != std::string::npos);
    q.token_types.clear();
    q.ids = {1, model.config.vocab_size, 2};
    CHECK(error_of([&] { tokenize_input(model, nullptr, q); }).find("input_ids[1]") != std::string::npos);
    q.ids.assign(static_cast<size_t>(model.config.max_position_embeddings + 1), 5);
    CHECK(error_of([&] { tokenize_input(model, nullptr, q); }).find("more than max_position_embeddings") != std::string::npos);
    q.ids = {1, 2, 3};
    q.positions = {3};
    CHECK_THROWS_AS(tokenize_input(model, nullptr, q), Error);
    q.positions.clear();
    q.pair = "b";
    CHECK_THROWS_AS(tokenize_input(model, nullptr, q), InvalidInput);
  }
}
