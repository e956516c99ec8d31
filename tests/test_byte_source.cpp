// A safetensors file read through a registered ByteSource (safetensors.h): the web page streams a
// model.safetensors from the browser's File that way (viewer/web/page/web_stream.cpp), a tensor's bytes
// arriving after the step that asked for them. The model must be the file's, bit for bit.
#include "deberta/map_weights.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "test_util.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace deberta;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The bytes of a string, served as the page serves a File: the first `header` bytes at once;
/// any other range only after it was asked for once (the first ask throws BytesPending, as the page
/// then fetches it). Counts what it was asked.
class SlowSource final : public ByteSource {
 public:
  SlowSource(std::string data, uint64_t header) : data_(std::move(data)), header_(header) {}
  uint64_t size() const override { return data_.size(); }
  const char* bytes(uint64_t offset, uint64_t n) override {
    ++calls;
    if (offset + n > header_ && !fetched_.count({offset, n})) {
      fetched_.insert({offset, n});
      ++pending;
      throw BytesPending("slow: " + std::to_string(offset) + "+" + std::to_string(n));
    }
    return data_.data() + offset;
  }
  int calls = 0, pending = 0;

 private:
  std::string data_;
  uint64_t header_;
  std::set<std::pair<uint64_t, uint64_t>> fetched_;
};

uint64_t header_end(const std::string& bytes) {
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(bytes[k]);
  return 8 + n;
}

}  // namespace

TEST_SUITE("byte source") {
  TEST_CASE("a model read through a byte source that answers each tensor one step late is the file's, bit for bit") {
    namespace fs = std::filesystem;
    const std::string src = test::source_path("notebooks_data/golden/v3_emd");
    const fs::path dir = test::fresh_temp_dir("deberta_byte_source");
    fs::copy_file(fs::path(src) / "config.json", dir / "config.json");
    // The file system holds an empty placeholder, as in the page: every byte comes from the source.
    std::ofstream(dir / "model.safetensors").close();
    const std::string weights = (dir / "model.safetensors").string();
    const std::string bytes = file_bytes(src + "/model.safetensors");
    auto source = std::make_shared<SlowSource>(bytes, header_end(bytes));
    register_byte_source(weights, source);

    ModelLoadSteps steps(dir.string());
    const SafetensorsReader reader(src + "/model.safetensors");
    const size_t used = tensors_used(load_config(src + "/config.json"), reader.index(), weights).size();
    int n_steps = 0;
    while (!steps.finished()) {
      const double before = steps.fraction();
      const int pending = source->pending;
      steps.step();
      ++n_steps;
      // A step whose bytes were pending changed nothing; the next one reads them.
      if (source->pending > pending) CHECK(steps.fraction() == before);
    }
    CHECK(source->pending == static_cast<int>(used));  // each tensor's bytes were late once
    CHECK(n_steps == 2 * static_cast<int>(used) + 1);  // so each tensor took two steps; then the weight map
    const Model streamed = steps.take();
    register_byte_source(weights, nullptr);
    CHECK(registered_byte_source(weights) == nullptr);

    const Model reference = load_model(src);
    Inputs in;
    in.input_ids = {1, 5, 9, 2, 7, 3};
    const ForwardTrace a = forward(streamed, in), b = forward(reference, in);
    CHECK(a.embedding_output == b.embedding_output);
    CHECK(a.decoder_output() == b.decoder_output());
    // Without the source, the placeholder is what it is: an empty file, refused.
    CHECK_THROWS_WITH_AS(ModelLoadSteps(dir.string()), doctest::Contains("model.safetensors"), Error);
    fs::remove_all(dir);
  }

  TEST_CASE("a byte source shorter than its header says is refused, naming the file") {
    const std::string src = test::source_path("notebooks_data/golden/v3_emd/model.safetensors");
    const std::string bytes = file_bytes(src);
    const std::string path = "/nowhere/model.safetensors";
    register_byte_source(path, std::make_shared<SlowSource>(bytes.substr(0, header_end(bytes) - 1), header_end(bytes)));
    CHECK_THROWS_WITH_AS(SafetensorsReader{path}, doctest::Contains("/nowhere/model.safetensors"), Error);
    // Its tensors cut short: the header's offsets lie past the end.
    register_byte_source(path, std::make_shared<SlowSource>(bytes.substr(0, bytes.size() - 8), header_end(bytes)));
    CHECK_THROWS_WITH_AS(SafetensorsReader{path}, doctest::Contains("/nowhere/model.safetensors"), Error);
    register_byte_source(path, nullptr);
  }
}
