// File formats: the safetensors reader's validation and the config parser's errors.
#include "test_util.h"

#include "deberta/config.h"
#include "deberta/map_weights.h"
#include "deberta/equations.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <filesystem>
#include <fstream>

using namespace deberta;

namespace {

// Builds safetensors bytes from a header JSON text and a data blob.
std::string make_file(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  return bytes + header + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

}  // namespace

TEST_SUITE("safetensors") {
  TEST_CASE("round trip of F64 and I64 tensors with metadata") {
    TensorMap t;
    Matrix m(2, 3);
    m << 1, 2, 3, 4, 5, 6.5;
    t["a"] = Tensor::from_matrix(m);
    IndexMatrix idx(1, 2);
    idx << -7, 9;
    t["b"] = Tensor::from_index(idx);
    const std::string path = "/tmp/deberta_test_roundtrip.safetensors";
    write_safetensors(path, t, {{"case", "x"}});
    const TensorMap back = read_safetensors(path);
    REQUIRE(back.size() == 2);
    CHECK(to_matrix(back.at("a"), "a") == m);
    CHECK(to_index_matrix(back.at("b"), "b") == idx);
  }

  TEST_CASE("F32, F16 and BF16 widen exactly") {
    const std::string data = f32_bytes({1.5f, -0.1f}) + std::string("\x00\x3c\x00\xc0", 4) + std::string("\x80\x3f", 2);
    const std::string header =
        R"({"f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"h":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},)"
        R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}})";
    const TensorMap t = parse_safetensors(make_file(header, data), "mem");
    CHECK(t.at("f").f[0] == 1.5);
    CHECK(t.at("f").f[1] == static_cast<double>(-0.1f));
    CHECK(t.at("h").f[0] == 1.0);
    CHECK(t.at("h").f[1] == -2.0);
    CHECK(t.at("b").f[0] == 1.0);
    CHECK(half_to_double(0x0001) == std::ldexp(1.0, -24));  // smallest subnormal
    CHECK(half_to_double(0x7bff) == 65504.0);
  }

  // widen_floats converts halves by their bits, with no table (issue 60, item 4): every one of the
  // 65,536 halves must widen to the value half_to_double computes from the definition (the same
  // sign, zeros and subnormals included; NaN to NaN), and every bfloat16 likewise.
  TEST_CASE("widen_floats: all 65,536 fp16 and bf16 values, and fp32 bit patterns, equal their definition") {
    std::vector<uint16_t> all(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) all[bits] = static_cast<uint16_t>(bits);
    std::vector<double> wide(all.size());
    for (DType dtype : {DType::F16, DType::BF16}) {
      widen_floats(dtype, reinterpret_cast<const unsigned char*>(all.data()), static_cast<int64_t>(all.size()), wide.data());
      int64_t wrong = 0;
      for (uint32_t bits = 0; bits < 65536; ++bits) {
        const double expected = dtype == DType::F16 ? half_to_double(all[bits]) : bfloat16_to_double(all[bits]);
        const bool same = std::isnan(expected) ? std::isnan(wide[bits])
                                                : wide[bits] == expected && std::signbit(wide[bits]) == std::signbit(expected);
        if (!same && wrong++ < 5) MESSAGE(dtype_name(dtype) << " bits " << bits << ": " << wide[bits] << " vs " << expected);
      }
      CHECK(wrong == 0);
    }
    // fp32 (four at a time with AVX): 2^20 spread bit patterns, subnormals, zeros, Inf and NaN among
    // them, and lengths that leave a remainder of one to three.
    std::vector<uint32_t> f32;
    for (uint32_t k = 0; k < (1u << 20); ++k) f32.push_back(k * 4099u + (k >> 7));
    for (uint32_t special : {0u, 0x80000000u, 1u, 0x807fffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u}) f32.push_back(special);
    for (const size_t n : {f32.size(), f32.size() - 1, f32.size() - 3}) {
      std::vector<double> wide32(n);
      widen_floats(DType::F32, reinterpret_cast<const unsigned char*>(f32.data()), static_cast<int64_t>(n), wide32.data());
      int64_t wrong = 0;
      for (size_t k = 0; k < n; ++k) {
        float v;
        std::memcpy(&v, &f32[k], sizeof v);
        const double expected = v;
        wrong += std::isnan(expected) ? !std::isnan(wide32[k])
                                      : !(wide32[k] == expected && std::signbit(wide32[k]) == std::signbit(expected));
      }
      CHECK(wrong == 0);
    }
  }

  TEST_CASE("malformed files are refused with the file name and the problem") {
    auto refuses = [](const std::string& bytes, const std::string& needle) {
      CAPTURE(needle);
      CHECK_THROWS_WITH_AS(parse_safetensors(bytes, "bad.safetensors"), doctest::Contains(needle.c_str()), Error);
      CHECK_THROWS_WITH_AS(parse_safetensors(bytes, "bad.safetensors"), doctest::Contains("bad.safetensors"), Error);
    };
    refuses("", "shorter than the 8-byte header");
    refuses(make_file("{}", "").substr(0, 6), "shorter than the 8-byte header");
    std::string huge(8, '\0');
    const uint64_t big = 1ull << 40;
    std::memcpy(huge.data(), &big, 8);
    refuses(huge, "exceeds the 100 MB limit");
    std::string longer(8, '\0');
    const uint64_t len = 50;
    std::memcpy(longer.data(), &len, 8);
    refuses(longer + "{}", "larger than the file");
    refuses(make_file("not json", ""), "not JSON");
    refuses(make_file("[1,2]", ""), "not a JSON object");
    refuses(make_file(R"({"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", "abcd"), "unknown dtype");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd"), "needs 8");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", "abcd"), "past the end");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
                      "abcdefgh"),
            "overlap");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", "abcd"),
            "overflows 64 bits");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"), "non-negative");
    refuses(make_file(R"({"a":{"dtype":"F32","shape":[1]}})", "abcd"), "data_offsets");
    refuses(make_file(R"({"a":5})", ""), "not an object");
    CHECK_THROWS_WITH_AS(read_safetensors("/nonexistent/x.safetensors"), doctest::Contains("cannot open"), Error);
  }
}

TEST_SUITE("config") {
  using nlohmann::json;
  const json base = {{"model_type", "deberta-v2"}, {"hidden_size", 32}, {"num_hidden_layers", 2},
                     {"num_attention_heads", 2}, {"intermediate_size", 64}, {"vocab_size", 10},
                     {"relative_attention", true}, {"pos_att_type", "p2c|c2p"}, {"max_relative_positions", -1},
                     {"max_position_embeddings", 24}};

  TEST_CASE("defaults and both pos_att_type forms") {
    ModelConfig c = parse_config(base, "config.json");
    CHECK(c.version == ModelVersion::V2);
    CHECK(c.max_relative_positions == 24);  // < 1 means max_position_embeddings
    CHECK(c.relative_span() == 24);
    CHECK(c.has_c2p());
    CHECK(c.has_p2c());
    CHECK(c.reference_scale_factor() == 3);
    CHECK(c.conv_act == Activation::Tanh);  // v2 default conv_act
    CHECK(c.position_biased_input);         // HF default
    json list = base;
    list["pos_att_type"] = {"c2p"};
    list["position_buckets"] = 8;
    c = parse_config(list, "config.json");
    CHECK(c.pos_att_type == std::vector<std::string>{"c2p"});
    CHECK(c.relative_span() == 8);
    CHECK(c.reference_scale_factor() == 2);
    json v1 = base;
    v1["model_type"] = "deberta";
    v1["pos_att_type"] = "c2p|p2c|p2p";
    c = parse_config(v1, "config.json");
    CHECK(c.reference_scale_factor() == 4);  // v1: 1 + len(pos_att_type)
  }

  TEST_CASE("pos_att_type as Hugging Face reads it: empty string parts count, list entries verbatim") {
    json v1 = base;
    v1["model_type"] = "deberta";
    struct Row { json value; std::vector<std::string> entries; double v1_scale; bool c2p, p2c; };
    const Row rows[] = {
        {"", {""}, 2, false, false},                          // "".split("|") == [""]
        {"c2p|p2c|", {"c2p", "p2c", ""}, 4, true, true},
        {"c2p||p2c", {"c2p", "", "p2c"}, 4, true, true},
        {" C2P | P2C ", {"c2p", "p2c"}, 3, true, true},       // strings: lower-cased and stripped
        {json::array({"C2P", "P2C"}), {"C2P", "P2C"}, 3, false, false},  // lists: verbatim
        {json::array({"c2p", "x2y"}), {"c2p", "x2y"}, 3, true, false},   // unknown entries ignored
    };
    for (const Row& row : rows) {
      CAPTURE(row.value.dump());
      v1["pos_att_type"] = row.value;
      const ModelConfig c = parse_config(v1, "config.json");
      CHECK(c.pos_att_type == row.entries);
      CHECK(c.reference_scale_factor() == row.v1_scale);
      CHECK(c.has_c2p() == row.c2p);
      CHECK(c.has_p2c() == row.p2c);
      json v2 = v1;
      v2["model_type"] = "deberta-v2";
      // v2: 1 + [c2p] + [p2c]; ["C2P", "P2C"] names neither, so scale 1.
      CHECK(parse_config(v2, "config.json").reference_scale_factor() == 1.0 + row.c2p + row.p2c);
    }
    v1.erase("pos_att_type");
    CHECK(parse_config(v1, "config.json").pos_att_type.empty());  // absent: None -> []
    v1["pos_att_type"] = nullptr;
    CHECK(parse_config(v1, "config.json").pos_att_type.empty());
  }

  TEST_CASE("bad configs name the file and the problem") {
    auto refuses = [&](json j, const char* needle) {
      CAPTURE(needle);
      CHECK_THROWS_WITH_AS(parse_config(j, "my/config.json"), doctest::Contains(needle), Error);
      CHECK_THROWS_WITH_AS(parse_config(j, "my/config.json"), doctest::Contains("my/config.json"), Error);
    };
    json j = base;
    j["model_type"] = "bert";
    refuses(j, "unknown model_type 'bert'");
    j = base;
    j["num_attention_heads"] = 3;
    refuses(j, "not divisible by num_attention_heads");
    j = base;
    j["pos_att_type"] = 7;
    refuses(j, "'pos_att_type' must be");
    j = base;
    j["model_type"] = "deberta";
    j["talking_head"] = true;
    refuses(j, "talking_head = true");
    j = base;
    j["position_buckets"] = 1;
    refuses(j, "position_buckets = 1");
    j = base;  // m − 1 = b / 2 is accepted: it fails only on an input with |i − j| > b/2 (below)
    j["relative_attention"] = true;
    j["position_buckets"] = 8;
    j["max_relative_positions"] = 5;
    CHECK(parse_config(j, "config.json").max_relative_positions == 5);
    j["max_relative_positions"] = 1;  // well defined with buckets: every |i − j| > b/2 lands on b/2
    CHECK(parse_config(j, "config.json").max_relative_positions == 1);
    j["relative_attention"] = false;  // relative settings are not checked without relative attention
    j["position_buckets"] = 1;
    CHECK_NOTHROW(parse_config(j, "config.json"));
    j = base;  // conv_groups is read only by the conv layer: without one it may be anything (as in HF)
    j["conv_kernel_size"] = 0;
    j["conv_groups"] = 7;
    CHECK(parse_config(j, "config.json").conv_kernel_size == 0);
    j["conv_kernel_size"] = 3;
    refuses(j, "conv_groups = 7 must divide");
    j = base;
    j["attention_head_size"] = int64_t{1} << 22;
    j["num_attention_heads"] = 64;
    refuses(j, "implausibly large");
    j = base;
    j["hidden_size"] = -4;
    refuses(j, "hidden_size must be positive");
    j = base;
    j["hidden_size"] = "big";
    refuses(j, "'hidden_size' must be an integer");
    j = base;
    j["relative_attention"] = 1;
    refuses(j, "'relative_attention' must be true or false");
    j = base;
    j["hidden_act"] = "swoosh";
    refuses(j, "unknown activation 'swoosh'");
    j = base;
    j["conv_kernel_size"] = 2;
    refuses(j, "conv_kernel_size must be odd");
    j = base;  // an unknown norm_rel_ebd entry is ignored (with a warning), as HF ignores it
    j["norm_rel_ebd"] = "batch_norm|layer_norm";
    CHECK(parse_config(j, "config.json").norm_rel_layer_norm());
    refuses(json::array(), "not a JSON object");
    // Found by fuzz_config: numbers far outside int64 (as float or unsigned) must not be cast.
    j = base;
    j["vocab_size"] = 7.7777777777777777e300;
    refuses(j, "'vocab_size' must be an integer of reasonable size");
    j = base;
    j["vocab_size"] = 18446744073709551615ull;
    refuses(j, "'vocab_size' must be an integer of reasonable size");
    j = base;
    j["hidden_size"] = 32.5;
    refuses(j, "'hidden_size' must be an integer");
    CHECK_THROWS_WITH_AS(load_config("/nonexistent/config.json"), doctest::Contains("cannot open"), Error);
  }

  TEST_CASE("a v1 checkpoint listing p2p loads without p2p projections (HF writes them only for c2p / p2c)") {
    // Found by notebooks_data/crosscheck/hf_random.py: pos_att_type "c2p|p2p" in a Hugging Face v1
    // checkpoint has pos_proj (c2p) but no pos_q_proj; HF never computes p2p, only counts it in the scale.
    namespace fs = std::filesystem;
    const fs::path src = test::source_path("notebooks_data/golden/v1_c2p_only");
    const fs::path dir = test::fresh_temp_dir("deberta_v1_p2p_listed");
    fs::copy_file(src / "model.safetensors", dir / "model.safetensors");
    json cfg = json::parse(std::ifstream(src / "config.json"));
    cfg["pos_att_type"] = "c2p|p2p";
    std::ofstream(dir / "config.json") << cfg.dump();
    const Model m = load_model(dir.string());
    CHECK(m.weights.layers[0].attention.pos_query.empty());
    CHECK(!m.weights.layers[0].attention.pos_key.empty());
    CHECK(m.config.reference_scale_factor() == 3.0);  // v1: 1 + len(["c2p", "p2p"])
    fs::remove_all(dir);
  }
}

TEST_SUITE("config") {
  TEST_CASE("an omitted key takes the default of the config class model_type names (transformers v4.27; issue 28)") {
    using nlohmann::json;
    // DebertaV2Config(): vocab 128100, hidden 1536, 24 layers, 24 heads, intermediate 6144.
    const ModelConfig v2 = parse_config(json{{"model_type", "deberta-v2"}}, "v2.json");
    CHECK(v2.hidden_size == 1536);
    CHECK(v2.num_hidden_layers == 24);
    CHECK(v2.num_attention_heads == 24);
    CHECK(v2.intermediate_size == 6144);
    CHECK(v2.vocab_size == 128100);
    CHECK(v2.attention_head_size == 64);
    // A v2 config that names its width but not its heads runs with 24 heads, as Hugging Face does
    // (it used to run with 12: silently different numbers).
    const ModelConfig heads = parse_config(json{{"model_type", "deberta-v2"}, {"hidden_size", 48}}, "v2.json");
    CHECK(heads.num_attention_heads == 24);
    CHECK(heads.attention_head_size == 2);
    // DebertaConfig(): deberta-base sizes.
    const ModelConfig v1 = parse_config(json{{"model_type", "deberta"}}, "v1.json");
    CHECK(v1.hidden_size == 768);
    CHECK(v1.num_hidden_layers == 12);
    CHECK(v1.num_attention_heads == 12);
    CHECK(v1.intermediate_size == 3072);
    CHECK(v1.vocab_size == 50265);
  }
}

TEST_SUITE("config") {
  TEST_CASE("every activation name of transformers v4.27.1's ACT2FN is accepted, with its values; no other (issue 28, class 19)") {
    // Values from torch (float64) of HF's ClippedGELUActivation(-10, 10) (gelu_10).
    const std::vector<double> x = {-12.0, -3.0, -0.5, 0.0, 0.3, 0.707107, 2.0, 11.0, 30.0};
    const std::map<std::string, std::vector<double>> want = {
        {"gelu_10", {-0.0, -0.00404969409489031, -0.15426876936299344, 0.0, 0.1853734266566858, 0.5375781016227487,
                     1.9544997361036416, 10.0, 10.0}}};
    Matrix m(1, static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) m(0, static_cast<int64_t>(i)) = x[i];
    for (const auto& entry : want) {
      const std::string& name = entry.first;  // (CAPTURE's lambda may not capture a structured binding)
      const std::vector<double>& values = entry.second;
      CAPTURE(name);
      const Matrix y = activation(m, parse_activation(name, "config.json"));
      for (size_t i = 0; i < x.size(); ++i) CHECK(std::abs(y(0, static_cast<int64_t>(i)) - values[i]) <= 1e-15);
    }
    for (const char* name : {"gelu", "gelu_python", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "quick_gelu",
                             "relu", "relu6", "tanh", "sigmoid", "silu", "swish", "mish", "linear"})
      CHECK_NOTHROW(parse_activation(name, "config.json"));
    // HF refuses the rest with a KeyError; so do we, naming the file and the value.
    CHECK_THROWS_WITH_AS(parse_activation("gelu_11", "config.json"), doctest::Contains("config.json: unknown activation 'gelu_11'"),
                         Error);
    // Names later transformers releases added (gelu_accurate, laplace, relu2) are KeyErrors in
    // v4.27.1, and microsoft/DeBERTa's ACT2FN knows none of them: refused too.
    for (const char* later : {"gelu_accurate", "laplace", "relu2"}) {
      const std::string expected = std::string("unknown activation '") + later + "'";
      CHECK_THROWS_WITH_AS(parse_activation(later, "config.json"), doctest::Contains(expected.c_str()), Error);
    }
  }
}

TEST_SUITE("config") {
  TEST_CASE("relative settings the references compute are computed; the one they cannot is refused per input (class 20)") {
    // A model with m − 1 = b/2 = 4: inputs of up to 5 tokens never need a log bucket.
    Model model = load_model(test::source_path("notebooks_data/golden/v3_emd"));
    model.config.position_buckets = 8;
    model.config.max_relative_positions = 5;
    model.weights.rel_embeddings = model.weights.rel_embeddings.top_rows(16);  // 2k = 2 · 8 rows
    model.weights_changed();
    Inputs in;
    in.input_ids = {1, 5, 6, 7, 2};
    CHECK_NOTHROW(forward(model, in));
    in.input_ids = {1, 5, 6, 7, 8, 2};
    CHECK_THROWS_WITH_AS(forward(model, in), doctest::Contains("distances beyond 4 cannot be log-bucketed"), Error);
    Ablation microsoft;  // microsoft's clamp to ±(m − 1) first: defined for any length
    microsoft.relative_positions = RelativePositionRule::Microsoft;
    CHECK_NOTHROW(forward(model, in, microsoft));
    // Issue 44, class 11: with no term reading the positions (c2c only) the reference has a result:
    // computed, the unreadable buckets written as the reference writes them (INT64_MIN), and equal to
    // the same forward under microsoft's rule, which never forms them.
    Ablation c2c_only;
    c2c_only.terms[Term::c2p] = c2c_only.terms[Term::p2c] = c2c_only.terms[Term::p2p] = false;
    ForwardTrace hf_trace;
    CHECK_NOTHROW(hf_trace = forward(model, in, c2c_only, TraceLevel::Full, false));
    CHECK(hf_trace.context.rel_pos(5, 0) == std::numeric_limits<int64_t>::min());
    CHECK(hf_trace.context.rel_pos(0, 5) == std::numeric_limits<int64_t>::min());
    CHECK(hf_trace.context.rel_pos(4, 0) == 4);
    Ablation c2c_only_microsoft = c2c_only;
    c2c_only_microsoft.relative_positions = RelativePositionRule::Microsoft;
    const ForwardTrace ms_trace = forward(model, in, c2c_only_microsoft, TraceLevel::Full, false);
    CHECK((hf_trace.layers.back().output - ms_trace.layers.back().output).cwiseAbs().maxCoeff() == 0.0);
    // The paper's p2c index negates the buckets: INT64_MIN stays as it is (no signed overflow; the
    // sanitizer build checks it).
    Ablation c2c_paper = c2c_only;
    c2c_paper.p2c_index = P2CIndex::Paper;
    const ForwardTrace paper_trace = forward(model, in, c2c_paper, TraceLevel::Full, false);
    CHECK(paper_trace.context.p2c_row(0, 5) == hf_trace.context.c2p_row(0, 5));
    // m = 1 with buckets: every |i − j| > b/2 takes bucket ±b/2.
    model.config.max_relative_positions = 1;
    CHECK(log_bucket_position(7, 8, 1) == 4);
    CHECK(log_bucket_position(-7, 8, 1) == -4);
    CHECK_NOTHROW(forward(model, in));
  }
}

TEST_SUITE("model load in steps") {
  // ModelLoadSteps (model_io.h): the web edition loads one tensor a frame; load_model is the same
  // class run to completion, so both must give the same model, bit for bit.
  TEST_CASE("one tensor a step, exactly the tensors map_weights reads, the bits of load_model (v1, v2 conv, v3 EMD)") {
    for (const std::string name : {"v1_basic", "v2_conv_pad", "v3_emd", "v3_rtd"}) {
      CAPTURE(name);
      const std::string dir = test::source_path("notebooks_data/golden/" + name);
      const Model reference = load_model(dir);

      // The plan: every index name is either read or reported unused, never both.
      const SafetensorsReader reader(dir + "/model.safetensors");
      const std::vector<std::string> used = tensors_used(reference.config, reader.index(), dir + "/model.safetensors");
      const std::set<std::string> used_set(used.begin(), used.end());
      CHECK(used_set.size() == used.size());
      for (const std::string& n : reference.weights.unused) CHECK_MESSAGE(!used_set.count(n), n);
      CHECK(used.size() + reference.weights.unused.size() == reader.index().size());

      ModelLoadSteps steps(dir);
      CHECK_THROWS_WITH_AS(steps.take(), doctest::Contains("not loaded yet"), Error);
      CHECK(steps.next_stage().rfind("tensor 1 of " + std::to_string(used.size()) + " (", 0) == 0);
      int64_t n_steps = 0;
      double last = steps.fraction();
      CHECK(last == 0.0);
      while (!steps.finished()) {
        steps.step();
        ++n_steps;
        CHECK(steps.fraction() > last);  // every step reads values (or, last, maps them)
        last = steps.fraction();
      }
      CHECK(n_steps == static_cast<int64_t>(used.size()) + 1);  // one per tensor, then the weight map
      CHECK(steps.fraction() == 1.0);
      CHECK(steps.next_stage() == "done");
      const Model stepped = steps.take();

      Inputs in;
      in.input_ids = {1, 5, 9, 2, 7, 3};
      const ForwardTrace a = forward(stepped, in), b = forward(reference, in);
      CHECK(a.embedding_output == b.embedding_output);
      CHECK(a.decoder_output() == b.decoder_output());
      CHECK(stepped.weights.unused == reference.weights.unused);
    }
  }

  // non_finite_count reads fp16, bf16 and fp32 bits without widening them (issue 55, item 4): it
  // must count what widening and std::isfinite count, on every special value of each dtype.
  TEST_CASE("non_finite_count by bits equals the widened values' count (fp16, bf16, fp32)") {
    const std::vector<uint16_t> f16 = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7c01, 0x7e00, 0xffff, 0x3c00};
    const std::vector<uint16_t> bf16 = {0x0000, 0x0001, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7f81, 0x7fc0, 0xffff, 0x3f80};
    const std::vector<uint32_t> f32 = {0, 1, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0x7fc00000, 0xffffffff, 0x3f800000};
    auto check = [](DType dtype, const unsigned char* bytes, size_t size, int64_t expected) {
      Tensor t;
      t.dtype = dtype;
      t.shape = {static_cast<int64_t>(size / dtype_size(dtype))};
      t.stored.assign(bytes, bytes + size);
      std::vector<double> wide(static_cast<size_t>(t.numel()));
      widen_floats(dtype, t.stored.data(), t.numel(), wide.data());
      int64_t widened = 0;
      for (double v : wide) widened += !std::isfinite(v);
      CHECK(widened == expected);
      CHECK(non_finite_count(t) == expected);
    };
    check(DType::F16, reinterpret_cast<const unsigned char*>(f16.data()), f16.size() * 2, 5);
    check(DType::BF16, reinterpret_cast<const unsigned char*>(bf16.data()), bf16.size() * 2, 5);
    check(DType::F32, reinterpret_cast<const unsigned char*>(f32.data()), f32.size() * 4, 5);
  }

  // LoadOptions::position_work (issue 55, item 4): the position table built after the weight map in
  // pieces of bounded work, a few rows of one product a step (ModelWorkspace::positions_step); the
  // products are row-independent, so the table must be the bits of the one-call build.
  TEST_CASE("the position table in pieces of bounded work: more steps, the same bits") {
    for (const std::string name : {"v1_basic", "v2_conv_pad", "v3_emd"}) {
      CAPTURE(name);
      const std::string dir = test::source_path("notebooks_data/golden/" + name);
      const Model reference = load_model(dir);
      const std::shared_ptr<const PositionTable> whole = reference.workspace.positions(reference);
      REQUIRE(whole);
      LoadOptions options;
      options.position_work = 1;  // one row a step
      ModelLoadSteps steps(dir, {}, options);
      int64_t position_steps = 0;
      while (!steps.finished()) {
        const bool in_table = steps.next_stage() == "position table";
        steps.step();
        position_steps += in_table;
        if (in_table && !steps.finished()) CHECK(steps.fraction() == 0.75);
      }
      const Model stepped = steps.take();
      const std::shared_ptr<const PositionTable> pieces = stepped.workspace.positions(stepped);
      REQUIRE(pieces);
      // One step for the relative table, then a row of one product a step.
      int64_t rows = 0;
      REQUIRE(pieces->K_r.size() == whole->K_r.size());
      REQUIRE(pieces->Q_r.size() == whole->Q_r.size());
      for (size_t l = 0; l < whole->K_r.size(); ++l) {
        CHECK(pieces->K_r[l] == whole->K_r[l]);
        CHECK(pieces->Q_r[l] == whole->Q_r[l]);
        rows += whole->K_r[l].rows() + whole->Q_r[l].rows();
      }
      CHECK(rows > 0);
      CHECK(position_steps == 1 + rows);
      Inputs in;
      in.input_ids = {1, 5, 9, 2, 7, 3};
      CHECK(forward(stepped, in).decoder_output() == forward(reference, in).decoder_output());
    }
  }

  // LoadOptions::read_piece (issue 55, item 4): a long floating tensor read a piece a step (the page's
  // base-model embedding table); the bytes, the model and the NaN / Inf counts must be those of a
  // whole read, with one step per piece.
  TEST_CASE("a long tensor in pieces: a step a piece, the same bits, NaN counted across pieces") {
    namespace fs = std::filesystem;
    const fs::path src = test::source_path("notebooks_data/golden/v3_emd");
    const fs::path dir = test::fresh_temp_dir("deberta_steps_pieces");
    fs::copy_file(src / "config.json", dir / "config.json");
    TensorMap t = read_safetensors((src / "model.safetensors").string());
    // Two NaNs in the word embeddings, in its first and last pieces.
    const std::string words = t.count("deberta.embeddings.word_embeddings.weight") ? "deberta.embeddings.word_embeddings.weight"
                                                                                    : "embeddings.word_embeddings.weight";
    REQUIRE(t.count(words));
    REQUIRE(t.at(words).f.size() > 16);
    t.at(words).f.front() = std::nan("");
    t.at(words).f.back() = -std::numeric_limits<double>::infinity();
    write_safetensors((dir / "model.safetensors").string(), t);
    const Model reference = load_model(dir.string());
    REQUIRE(!reference.weights.warnings.empty());

    LoadOptions options;
    options.read_piece = 70;  // rounded down to 64 bytes: 8 float64 values a piece
    ModelLoadSteps steps(dir.string(), {}, options);
    const SafetensorsReader reader((dir / "model.safetensors").string());
    int64_t expected_steps = 1;  // the weight map
    for (const std::string& n : tensors_used(reference.config, reader.index(), (dir / "model.safetensors").string())) {
      const uint64_t size = reader.byte_size(n);
      expected_steps += dtype_is_integer(reader.index().at(n).dtype) || size <= 64 ? 1 : static_cast<int64_t>((size + 63) / 64);
    }
    int64_t n_steps = 0;
    bool saw_part = false;
    double last = steps.fraction();
    while (!steps.finished()) {
      saw_part = saw_part || steps.next_stage().find(", part 2 of ") != std::string::npos;
      steps.step();
      ++n_steps;
      CHECK(steps.fraction() > last);
      last = steps.fraction();
    }
    CHECK(saw_part);
    CHECK(n_steps == expected_steps);
    const Model stepped = steps.take();
    CHECK(stepped.weights.warnings == reference.weights.warnings);
    bool named = false;
    for (const std::string& w : stepped.weights.warnings)
      named = named || (w.find(words) != std::string::npos && w.find("holds 2 NaN/Inf") != std::string::npos);
    CHECK(named);
    Inputs in;
    in.input_ids = {1, 5, 9, 2, 7, 3};  // neither the first nor the last row of the table: finite
    const ForwardTrace a = forward(stepped, in), b = forward(reference, in);
    CHECK(a.embedding_output == b.embedding_output);
    CHECK(a.decoder_output() == b.decoder_output());

    // A range outside the tensor, and an integer tensor, are refused, naming the file and the tensor.
    Tensor piece = reader.index().at(words);
    SafetensorsReader r2((dir / "model.safetensors").string());
    const std::string outside = "are outside tensor '" + words + "'";
    CHECK_THROWS_WITH_AS(r2.load_stored_range(words, &piece, 0, reader.byte_size(words) + 8),
                         doctest::Contains(outside.c_str()), Error);
    // Every piece in turn gives the bytes of one whole read.
    Tensor whole = reader.index().at(words);
    r2.load(words, &whole, true);
    const unsigned char* memory = nullptr;
    for (uint64_t from = 0; from < reader.byte_size(words); from += 24) {
      r2.load_stored_range(words, &piece, from, std::min(reader.byte_size(words), from + 24));
      CHECK(piece.stored.size() >= std::min(reader.byte_size(words), from + 24));
      // Room for the whole tensor from the first piece on: the pieces never move it.
      if (!memory) memory = piece.stored.data();
      CHECK(piece.stored.data() == memory);
    }
    CHECK(piece.stored.size() == whole.stored.size());
    CHECK(std::memcmp(piece.stored.data(), whole.stored.data(), whole.stored.size()) == 0);
  }

  TEST_CASE("a missing or misshapen tensor is refused before any value is read") {
    namespace fs = std::filesystem;
    const fs::path src = test::source_path("notebooks_data/golden/v3_emd");
    const fs::path dir = test::fresh_temp_dir("deberta_steps_missing");
    fs::copy_file(src / "config.json", dir / "config.json");
    TensorMap t = read_safetensors((src / "model.safetensors").string());
    t.erase(t.count("deberta.encoder.layer.0.output.dense.bias") ? "deberta.encoder.layer.0.output.dense.bias"
                                                                  : "encoder.layer.0.output.dense.bias");
    write_safetensors((dir / "model.safetensors").string(), t);
    // The constructor plans from the header alone: the error comes before the first step.
    CHECK_THROWS_WITH_AS(ModelLoadSteps(dir.string()),
                         doctest::Contains("missing 1 required tensor(s): encoder.layer.0.output.dense.bias"), Error);
    CHECK_THROWS_WITH_AS(ModelLoadSteps(dir.string()), doctest::Contains("model.safetensors"), Error);
    fs::remove_all(dir);
  }

  TEST_CASE("a moved model keeps its position tables; a copied one rebuilds them (model.h)") {
    Model m = load_model(test::source_path("notebooks_data/golden/v3_emd"));
    const auto table = m.workspace.positions(m);
    REQUIRE(table != nullptr);
    Model moved = std::move(m);
    CHECK(moved.workspace.positions(moved) == table);  // the same object: not rebuilt
    const Model copy = moved;
    const auto rebuilt = copy.workspace.positions(copy);
    CHECK(rebuilt != table);
    REQUIRE(rebuilt->K_r.size() == table->K_r.size());
    for (size_t l = 0; l < table->K_r.size(); ++l) CHECK(rebuilt->K_r[l] == table->K_r[l]);
  }
}
