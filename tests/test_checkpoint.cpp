// Checkpoint tests: PyTorch state dicts (zip fp32/fp16/bf16, legacy fp32) made by
// notebooks_data/references/make_fixtures.py from the golden models give exactly the forward outputs of the
// same weights rounded to that dtype; views (strides, offsets, shared and expanded storages) load
// element for element; hostile or broken files are refused with a message naming the problem.
#include "test_util.h"

#include "deberta/checkpoint.h"
#include "deberta/map_weights.h"
#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace deberta;

namespace {

const std::string kFixtures = "notebooks_data/fixtures/checkpoints/";

std::string fixture(const std::string& relative) { return test::source_path(kFixtures + relative); }

/// A model from a golden case's config and the given tensors.
Model model_from(const std::string& golden_case, TensorMap tensors, const std::string& source) {
  Model m;
  m.directory = test::source_path("notebooks_data/golden/" + golden_case);
  m.weights_path = source;
  m.config = load_config(m.directory + "/config.json");
  m.weights = map_weights(m.config, std::move(tensors), source);
  return m;
}

/// Every output tensor of `deberta dump` for the golden inputs of `golden_case`.
TensorMap dump_outputs(const Model& model, const std::string& golden_case) {
  const std::string golden_path = test::source_path("notebooks_data/golden/" + golden_case + "/golden.safetensors");
  const TensorMap golden = read_safetensors(golden_path);
  const Inputs inputs = inputs_from_tensors(golden, golden_path);
  const auto positions = masked_positions_from_tensors(golden, golden_path);
  const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, !positions.empty());
  return trace_to_tensors(model, trace, positions, golden.count("mlm.logits") > 0);
}

/// CHECKs that two dumps are bitwise identical (tolerance 0), tensor by tensor.
void check_identical(const TensorMap& ours, const TensorMap& reference) {
  CHECK(ours.size() == reference.size());
  for (const auto& kv : reference) {
    const auto& name = kv.first;
    const auto& ref = kv.second;
    auto it = ours.find(name);
    REQUIRE_MESSAGE(it != ours.end(), "missing output " << name);
    test::check_close(name, it->second, ref, 0.0);
  }
}

/// Rounds every float tensor to float32 and back (exact round-to-nearest-even).
TensorMap rounded_to_f32(TensorMap tensors) {
  for (auto& [name, t] : tensors)
    for (double& v : t.f) v = static_cast<double>(static_cast<float>(v));
  return tensors;
}


}  // namespace

TEST_SUITE("checkpoint") {
  TEST_CASE("fp32 .bin (zip and legacy) gives bitwise the outputs of F32-rounded safetensors") {
    for (const std::string golden_case : {"v1_basic", "v3_emd"}) {
      CAPTURE(golden_case);
      const std::string st = test::source_path("notebooks_data/golden/" + golden_case + "/model.safetensors");
      const TensorMap reference =
          dump_outputs(model_from(golden_case, rounded_to_f32(read_safetensors(st)), st), golden_case);
      for (const std::string kind : {"fp32", "legacy"}) {
        CAPTURE(kind);
        const std::string bin = fixture(golden_case + "_" + kind + "/pytorch_model.bin");
        TensorMap tensors = read_pytorch_checkpoint(bin);
        for (const auto& kv : tensors) { const auto& name = kv.first; const auto& t = kv.second; CHECK_MESSAGE(t.dtype == DType::F32, name); }
        check_identical(dump_outputs(model_from(golden_case, std::move(tensors), bin), golden_case), reference);
        // The same through the directory loader (config.json + pytorch_model.bin).
        const Model loaded = load_model(fixture(golden_case + "_" + kind));
        check_identical(dump_outputs(loaded, golden_case), reference);
      }
    }
  }

  TEST_CASE("fp16 and bf16 .bin give exactly the outputs of the weights rounded to that dtype") {
    for (const std::string dir : {"v1_basic_fp16", "v3_emd_fp16", "v3_emd_bf16"}) {
      CAPTURE(dir);
      const std::string golden_case = dir.substr(0, dir.rfind('_'));
      const std::string ref_path = fixture(dir + "/reference.safetensors");
      const TensorMap reference = dump_outputs(model_from(golden_case, read_safetensors(ref_path), ref_path), golden_case);
      const std::string bin = fixture(dir + "/pytorch_model.bin");
      TensorMap tensors = read_pytorch_checkpoint(bin);
      const DType want = dir.find("bf16") != std::string::npos ? DType::BF16 : DType::F16;
      for (const auto& kv : tensors) { const auto& name = kv.first; const auto& t = kv.second; CHECK_MESSAGE(t.dtype == want, name); }
      check_identical(dump_outputs(model_from(golden_case, std::move(tensors), bin), golden_case), reference);
    }
  }

  TEST_CASE("a task-model checkpoint (deberta. prefix, extra heads) loads and lists its unused tensors") {
    const Model model = load_model(fixture("v3_emd_task"));
    const auto& unused = model.weights.unused;
    for (const char* name : {"pooler.dense.weight", "classifier.weight"})
      CHECK_MESSAGE(std::find(unused.begin(), unused.end(), name) != unused.end(), name << " not listed as unused");
    const std::string st = test::source_path("notebooks_data/golden/v3_emd/model.safetensors");
    const TensorMap reference = dump_outputs(model_from("v3_emd", rounded_to_f32(read_safetensors(st)), st), "v3_emd");
    check_identical(dump_outputs(model, "v3_emd"), reference);
  }

  TEST_CASE("views: strides, storage offsets, shared and expanded storages, every dtype") {
    const TensorMap expected = read_safetensors(fixture("views_expected.safetensors"));
    for (const std::string file : {"views.bin", "views_legacy.bin"}) {
      CAPTURE(file);
      const TensorMap ours = read_pytorch_checkpoint(fixture(file));
      CHECK(ours.size() == expected.size());
      for (const auto& kv : expected) {
        const auto& name = kv.first;
        const auto& ref = kv.second;
        auto it = ours.find(name);
        REQUIRE_MESSAGE(it != ours.end(), "missing tensor " << name);
        test::check_close(name, it->second, ref, 0.0);
      }
      CHECK(ours.at("half").dtype == DType::F16);
      CHECK(ours.at("bfloat").dtype == DType::BF16);
      CHECK(ours.at("double").dtype == DType::F64);
      CHECK(ours.at("ids").dtype == DType::I64);
      CHECK(ours.at("ids").i.at(3) == (int64_t{1} << 40));
      CHECK(ours.at("scalar").shape.empty());
      CHECK(ours.at("empty").shape == std::vector<int64_t>{0, 4});
    }
  }

  TEST_CASE("keep_stored: every floating tensor as the file's bytes, the widened read's values bit for bit (issue 60)") {
    // Contiguous tensors, strided and offset views, shared and expanded storages (views*.bin), and
    // whole fp16 / bf16 / fp32 checkpoints: the stored bytes widened (float_values) are the doubles
    // the default read gives, in the same row-major order; integers are int64 both ways.
    for (const std::string file : {"views.bin", "views_legacy.bin", "views_byteorder.bin", "v3_emd_fp16/pytorch_model.bin",
                                   "v3_emd_bf16/pytorch_model.bin", "v3_emd_fp32/pytorch_model.bin", "v1_basic_legacy/pytorch_model.bin"}) {
      CAPTURE(file);
      const TensorMap widened = read_pytorch_checkpoint(fixture(file));
      const TensorMap stored = read_pytorch_checkpoint(fixture(file), {}, /*keep_stored=*/true);
      REQUIRE(stored.size() == widened.size());
      for (const auto& kv : widened) {
        const std::string& name = kv.first;
        const Tensor& w = kv.second;
        CAPTURE(name);
        REQUIRE(stored.count(name) == 1);
        const Tensor& t = stored.at(name);
        CHECK(t.dtype == w.dtype);
        CHECK(t.shape == w.shape);
        if (dtype_is_integer(w.dtype)) {
          CHECK(t.i == w.i);
          CHECK(t.stored.empty());
          continue;
        }
        CHECK(t.f.empty());
        CHECK(t.stored.size() == static_cast<size_t>(w.numel() * dtype_size(w.dtype)));
        const std::vector<double> values = float_values(t, name);
        REQUIRE(values.size() == w.f.size());
        CHECK((values.empty() || std::memcmp(values.data(), w.f.data(), values.size() * sizeof(double)) == 0));
      }
    }
  }

  TEST_CASE("a .bin model keeps its weights in the file's precision and gives the same outputs (issue 60)") {
    // load_model reads a .bin with keep_stored: the matrices hold fp16 / bf16 bytes (no float64 copy
    // of the checkpoint), and every output is the reference's bit for bit.
    for (const std::string dir : {"v3_emd_fp16", "v3_emd_bf16"}) {
      CAPTURE(dir);
      const std::string ref_path = fixture(dir + "/reference.safetensors");
      const TensorMap reference = dump_outputs(model_from("v3_emd", read_safetensors(ref_path), ref_path), "v3_emd");
      const Model loaded = load_model(fixture(dir));
      const DType want = dir.find("bf16") != std::string::npos ? DType::BF16 : DType::F16;
      CHECK(loaded.weights.embeddings.word.dtype() == want);
      CHECK(loaded.weights.layers.at(0).attention.query.weight.dtype() == want);
      check_identical(dump_outputs(loaded, "v3_emd"), reference);
    }
  }

  TEST_CASE("a zip with the <prefix>/byteorder record of current torch.save loads (issue 12)") {
    // views_byteorder.bin = views.bin (written by torch) + views/byteorder = "little" after data.pkl.
    const TensorMap expected = read_safetensors(fixture("views_expected.safetensors"));
    const TensorMap ours = read_pytorch_checkpoint(fixture("views_byteorder.bin"));
    CHECK(ours.size() == expected.size());
    for (const auto& kv : expected) {  // no structured binding inside doctest macros (clang 14)
      const std::string& name = kv.first;
      const Tensor& ref = kv.second;
      auto it = ours.find(name);
      REQUIRE_MESSAGE(it != ours.end(), "missing tensor " << name);
      test::check_close(name, it->second, ref, 0.0);
    }
  }

  TEST_CASE("duplicate state-dict keys: the last value wins, as in torch.load (issue 12)") {
    // duplicate_keys.bin sets "w" to storage 0 ([0..5]), then "v", then "w" to storage 1 ([6..11]).
    const TensorMap ours = read_pytorch_checkpoint(fixture("duplicate_keys.bin"));
    CHECK(ours.size() == 2);
    REQUIRE(ours.count("w") == 1);
    CHECK(ours.at("w").f == std::vector<double>{6, 7, 8, 9, 10, 11});
    REQUIRE(ours.count("v") == 1);
    CHECK(ours.at("v").f == std::vector<double>{0, 1});
  }

  TEST_CASE("progress reports bytes read up to the total") {
    uint64_t last_done = 0, last_total = 0, calls = 0;
    bool monotonic = true;
    read_pytorch_checkpoint(fixture("v1_basic_fp32/pytorch_model.bin"), [&](uint64_t done, uint64_t total) {
      monotonic = monotonic && done >= last_done;
      last_done = done;
      last_total = total;
      ++calls;
    });
    CHECK(calls > 0);
    CHECK(monotonic);
    CHECK(last_done == last_total);
    CHECK(last_total > 100000);  // ~200 KB of fp32 weights
  }

  TEST_CASE("hostile and broken files are refused with a clear message") {
    // bad/README.txt: "file<TAB>text the message must contain", written by make_fixtures.py.
    std::ifstream list(fixture("bad/README.txt"));
    REQUIRE(list);
    std::string line;
    int cases = 0;
    while (std::getline(list, line)) {
      if (line.empty() || line[0] == '#') continue;
      const auto tab = line.find('\t');
      REQUIRE(tab != std::string::npos);
      const std::string file = line.substr(0, tab), expected = line.substr(tab + 1);
      CAPTURE(file);
      const std::string message = test::error_of([&] { read_pytorch_checkpoint(fixture("bad/" + file)); });
      CHECK_MESSAGE(message.find(expected) != std::string::npos, "message: " << message);
      CHECK_MESSAGE(message.find(file) != std::string::npos, "message does not name the file: " << message);
      ++cases;
    }
    CHECK(cases >= 18);
  }

  TEST_CASE("the os.system pickle is refused before anything is called") {
    const std::string message = test::error_of([] { read_pytorch_checkpoint(fixture("bad/os_system.bin")); });
    CHECK(message.find("os_system.bin: pickle global os.system is not allowed") != std::string::npos);
  }

  TEST_CASE("a missing file is an Error, not a crash") {
    CHECK_THROWS_AS(read_pytorch_checkpoint(fixture("no_such_file.bin")), Error);
  }
}
