// test_inputs.cpp — tokenize_input, the one input resolver of the CLI, the viewer and the Python
// module (deberta/inputs.h): what each kind of request becomes, and each refusal.
#include "test_util.h"

#include "deberta/inputs.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

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
    // Too long where the embeddings read absolute positions (position_biased_input; issue 59, class 8).
    const Model pbi = load_model(source_path("notebooks_data/golden_extra/v1_mlm_pbi"));
    REQUIRE(pbi.config.position_biased_input);
    q.ids.assign(static_cast<size_t>(pbi.config.max_position_embeddings + 1), 5);
    CHECK(error_of([&] { tokenize_input(pbi, nullptr, q); }).find("more than max_position_embeddings") != std::string::npos);
    q.ids = {1, 2, 3};
    q.positions = {3};
    CHECK_THROWS_AS(tokenize_input(model, nullptr, q), Error);
    q.positions.clear();
    q.pair = "b";
    CHECK_THROWS_AS(tokenize_input(model, nullptr, q), InvalidInput);
  }

  TEST_CASE("issue 59 class 8: inputs longer than max_position_embeddings compute unless a position past the table is read") {
    // v2_basic: position_biased_input false, relative attention (k = 32, 8 buckets), 64 positions.
    // Round 4 refused 100 tokens; Hugging Face computes them (nothing reads an absolute position).
    namespace fs = std::filesystem;
    const fs::path source = source_path("notebooks_data/golden/v2_basic");
    const Model model = load_model(source.string());
    REQUIRE_FALSE(model.config.position_biased_input);
    REQUIRE(model.config.max_position_embeddings == 64);
    Inputs in;
    for (int64_t t = 0; t < 100; ++t) in.input_ids.push_back(1 + (t * 7) % (model.config.vocab_size - 1));
    InputRequest q;
    q.ids = in.input_ids;
    CHECK(tokenize_input(model, nullptr, q).inputs.size() == 100);  // the resolver lets it through
    const ForwardTrace long_trace = forward(model, in);
    const Matrix& out = long_trace.layers.back().output;
    REQUIRE(out.rows() == 100);
    CHECK(out.allFinite());
    // The same bits as the same weights with a table long enough (128): max_position_embeddings is
    // read by nothing here, so the result at 100 tokens is the reference's at any table length.
    const fs::path dir = deberta::test::fresh_temp_dir("deberta_len_rule");
    nlohmann::json config = nlohmann::json::parse(std::ifstream(source / "config.json"));
    config["max_position_embeddings"] = 128;
    std::ofstream(dir / "config.json") << config.dump();
    fs::copy_file(source / "model.safetensors", dir / "model.safetensors");
    const Model longer = load_model(dir.string());
    const ForwardTrace ref_trace = forward(longer, in);  // kept: a reference into a temporary would dangle
    const Matrix& ref = ref_trace.layers.back().output;
    CHECK((out.array() == ref.array()).all());
    fs::remove_all(dir);
    // Refused where a position past the table is read: the EMD's I = H + P (v3_emd, 32 positions)
    // when the decoder runs; its encoder alone computes.
    const Model emd = load_model(source_path("notebooks_data/golden/v3_emd"));
    REQUIRE(runs_emd(emd));
    Inputs long_emd;
    long_emd.input_ids.assign(33, 5);
    CHECK(error_of([&] { forward(emd, long_emd, {}, TraceLevel::Full, true); }).find("33 tokens, more than max_position_embeddings = 32") !=
          std::string::npos);
    CHECK(forward(emd, long_emd).layers.back().output.rows() == 33);
  }
}
