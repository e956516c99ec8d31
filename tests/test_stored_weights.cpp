// Weights kept in their stored precision (issue 60): a model loaded from an fp32, bf16 or fp16
// checkpoint keeps its matrices in that dtype and each engine widens them where it reads them.
// Widening is exact, so every tensor of the trace must be BIT FOR BIT that of the same checkpoint
// widened to float64 at load (`LoadOptions::widen_weights`, the path of every load before), on
// both engines, at 1 and 2 threads.
#include "test_util.h"

#include "deberta/backend.h"
#include "deberta/dump.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace deberta;
using test::fresh_temp_dir;
using test::source_path;
namespace fs = std::filesystem;

namespace {

// The nearest-below value of `v` in `dtype`, as that dtype's little-endian bytes: a checkpoint of
// fp32, bf16 or fp16 values made from a float64 one (truncation is enough: the test needs values
// of the dtype, not the closest ones). fp16: magnitudes below 2^-14 become zero, above 65504 clamp.
void append_value(double v, DType dtype, std::string* out) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (dtype == DType::F32) {
    out->append(reinterpret_cast<const char*>(&f), 4);
    return;
  }
  uint16_t half;
  if (dtype == DType::BF16) {
    half = static_cast<uint16_t>(bits >> 16);
  } else {  // F16: sign, exponent rebiased 127 → 15, the mantissa's top 10 bits
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
    const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
    if (exponent <= 0) half = sign;
    else if (exponent >= 31) half = static_cast<uint16_t>(sign | 0x7bff);
    else half = static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
  }
  out->append(reinterpret_cast<const char*>(&half), 2);
}

// Writes `tensors` as safetensors with every floating tensor in `dtype` (integers as I64).
void write_as(const fs::path& path, const TensorMap& tensors, DType dtype) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    const uint64_t begin = data.size();
    if (dtype_is_integer(t.dtype)) {
      data.append(reinterpret_cast<const char*>(t.i.data()), t.i.size() * 8);
    } else {
      for (double v : t.f) append_value(v, dtype, &data);
    }
    header[name] = {{"dtype", dtype_is_integer(t.dtype) ? "I64" : dtype_name(dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {begin, static_cast<uint64_t>(data.size())}}};
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text << data;
  REQUIRE(out.good());
}

// `source` (a model folder) rewritten with its weights in `dtype`, in a fresh folder.
fs::path model_in(const std::string& source, DType dtype, const std::string& name) {
  const fs::path dir = fresh_temp_dir(std::string("deberta_stored_") + name + "_" + dtype_name(dtype));
  fs::copy_file(fs::path(source) / "config.json", dir / "config.json");
  write_as(dir / "model.safetensors", read_safetensors((fs::path(source) / "model.safetensors").string()), dtype);
  return dir;
}

// Every tensor of `a` has the same shape, dtype and bytes in `b`, and neither has one more.
void check_bitwise(const TensorMap& a, const TensorMap& b) {
  CHECK(a.size() == b.size());
  for (const auto& entry : a) {
    const std::string& name = entry.first;  // (a structured binding cannot be captured by CAPTURE's lambda in C++17: clang refuses it)
    const Tensor& t = entry.second;
    CAPTURE(name);
    const auto it = b.find(name);
    REQUIRE(it != b.end());
    const Tensor& u = it->second;
    CHECK(t.shape == u.shape);
    CHECK(t.dtype == u.dtype);
    REQUIRE(t.f.size() == u.f.size());
    REQUIRE(t.i.size() == u.i.size());
    // (memcmp may not be given an empty vector's null data pointer)
    CHECK((t.f.empty() || std::memcmp(t.f.data(), u.f.data(), t.f.size() * sizeof(double)) == 0));
    CHECK((t.i.empty() || std::memcmp(t.i.data(), u.i.data(), t.i.size() * sizeof(int64_t)) == 0));
  }
}

// The whole trace (every [N, N] map, every layer's output, the EMD's, the MLM logits of every
// position, the task heads') of `model` on `inputs`.
TensorMap trace_of(const Model& model, const Inputs& inputs, const std::vector<int64_t>& positions) {
  const bool decoder = model.weights.lm_head.has_value() && !positions.empty();
  const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, decoder);
  return trace_to_tensors(model, trace, decoder ? positions : std::vector<int64_t>{}, decoder);
}

// Loads `dir` both ways and compares their traces on both engines at 1 and 2 threads; checks the
// stored model holds `dtype` and fewer bytes. Returns the number of tensors compared per run.
size_t compare_both_ways(const fs::path& dir, DType dtype, const Inputs& inputs, const std::vector<int64_t>& positions) {
  const Model stored = load_model(dir.string());
  const Model wide = load_model(dir.string(), {}, LoadOptions{true});
  CHECK(stored.weights.embeddings.word.dtype() == dtype);
  CHECK(stored.weights.layers.at(0).output.weight.dtype() == dtype);
  CHECK(wide.weights.embeddings.word.dtype() == DType::F64);
  CHECK(wide.weights.layers.at(0).output.weight.dtype() == DType::F64);
  CHECK(weight_bytes(stored.weights) < weight_bytes(wide.weights));
  size_t compared = 0;
  for (const Backend engine : {Backend::Fast, Backend::Reference}) {
    for (const int threads : {1, 2}) {
      CAPTURE(static_cast<int>(engine));
      CAPTURE(threads);
      const BackendScope scope(engine);
      set_num_threads(threads);
      const TensorMap a = trace_of(stored, inputs, positions), b = trace_of(wide, inputs, positions);
      check_bitwise(a, b);
      compared = a.size();
    }
  }
  set_num_threads(1);
  return compared;
}

}  // namespace

TEST_SUITE("stored_weights") {
  TEST_CASE("stored weights: every golden case from fp32, bf16 and fp16 checkpoints, bit for bit as widened at load") {
    // v1 (in_proj split per head), v2 (nGiE convolution, classifier), v3 (EMD, RTD head).
    for (const char* name : {"v1_basic", "v1_c2p_only", "v2_basic", "v2_cls_nli", "v2_conv_pad", "v3_emd", "v3_rtd"}) {
      const std::string source = source_path(std::string("notebooks_data/golden/") + name);
      const TensorMap golden = read_safetensors(source + "/golden.safetensors");
      const Inputs inputs = inputs_from_tensors(golden, name);
      const std::vector<int64_t> positions = masked_positions_from_tensors(golden, name);
      for (const DType dtype : {DType::F32, DType::BF16, DType::F16}) {
        CAPTURE(name);
        CAPTURE(dtype_name(dtype));
        CHECK(compare_both_ways(model_in(source, dtype, name), dtype, inputs, positions) > 10);
      }
    }
  }

  TEST_CASE("stored weights: deberta-tiny-512 at N = 100 (packed products) and N = 20 (W read in place)") {
    const std::string source = source_path("notebooks_data/models/deberta-tiny-512");
    for (const int64_t N : {100, 20}) {
      Inputs inputs;
      for (int64_t n = 0; n < N; ++n) inputs.input_ids.push_back(5 + (n * 7919) % 5000);
      const std::vector<int64_t> positions = {1, N / 2, N - 2};
      for (const DType dtype : {DType::F32, DType::BF16, DType::F16}) {
        CAPTURE(N);
        CAPTURE(dtype_name(dtype));
        CHECK(compare_both_ways(model_in(source, dtype, "tiny512"), dtype, inputs, positions) > 10);
      }
    }
  }

  TEST_CASE("stored weights: PyTorch checkpoints (fp16, bf16, fp32) narrowed back to their dtype, bit for bit") {
    for (const char* name : {"v1_basic_fp16", "v3_emd_fp16", "v3_emd_bf16", "v3_emd_fp32"}) {
      CAPTURE(name);
      const fs::path dir = source_path(std::string("notebooks_data/fixtures/checkpoints/") + name);
      const DType dtype = std::string(name).find("bf16") != std::string::npos ? DType::BF16
                          : std::string(name).find("fp16") != std::string::npos ? DType::F16
                                                                                : DType::F32;
      Inputs inputs;
      for (int64_t n = 0; n < 12; ++n) inputs.input_ids.push_back(1 + n % 7);
      CHECK(compare_both_ways(dir, dtype, inputs, {1, 3}) > 10);
    }
  }

  TEST_CASE("stored weights: the bundled fp32 model keeps fp32 and half its float64 bytes") {
    const Model m = load_model(source_path("notebooks_data/models/deberta-tiny"));
    CHECK(m.weights.embeddings.word.dtype() == DType::F32);
    Model wide = load_model(source_path("notebooks_data/models/deberta-tiny"), {}, LoadOptions{true});
    const double ratio = static_cast<double>(weight_bytes(m.weights)) / static_cast<double>(weight_bytes(wide.weights));
    CHECK(ratio < 0.52);  // matrices at 4 of 8 bytes; the float64 vectors are a fraction of a per cent
    CHECK(ratio > 0.5);
  }

  TEST_CASE("stored weights: StoredMatrix widens each dtype exactly, shares its bytes and refuses bad input") {
    // 1.5, -2^-24 (the least fp16 subnormal), 65504 (the greatest fp16) in fp16; 1 + 2^-7 in bf16.
    const unsigned char f16[] = {0x00, 0x3e, 0x01, 0x80, 0xff, 0x7b};
    const StoredMatrix h(DType::F16, 1, 3, AlignedBytes(f16, f16 + 6));
    CHECK(h(0, 0) == 1.5);
    CHECK(h(0, 1) == -std::ldexp(1.0, -24));
    CHECK(h(0, 2) == 65504.0);
    const unsigned char bf16[] = {0x81, 0x3f};
    CHECK(StoredMatrix(DType::BF16, 1, 1, AlignedBytes(bf16, bf16 + 2))(0, 0) == 1.0 + std::ldexp(1.0, -7));
    const Matrix m = Matrix::Random(5, 3);
    const StoredMatrix s = m, copy = s;
    CHECK(copy.data() == s.data());  // copies share
    CHECK(s.widened() == m);
    CHECK(s.gather_rows({4, 0}).widened().row(0) == m.row(4));
    CHECK(s.top_rows(2) == m.topRows(2));
    CHECK_THROWS_WITH_AS(StoredMatrix(DType::F32, 2, 2, AlignedBytes(15)), doctest::Contains("given 15 bytes"), Error);
    CHECK_THROWS_WITH_AS(StoredMatrix(DType::I32, 1, 1, AlignedBytes(4)), doctest::Contains("integer dtype"), Error);
    CHECK_THROWS_AS(s.top_rows(6), Error);
  }
}
