// web_stream.cpp — a model.safetensors the user picked, read straight from the browser's File, a
// tensor at a time (docs/web.md "Limits"), instead of being copied whole into the page's memory
// file system first.
//
// A page cannot read a File synchronously, and the loader (deberta::ModelLoadSteps) is synchronous
// C++, so the two meet half way:
//   1. index.html reads the file's first 8 bytes and its JSON header (`await file.slice(…)`), writes
//      an empty placeholder at the file's path (the loader looks for model.safetensors by name) and
//      hands the header over: `web_stream_open(path, size, header_bytes)` registers a `FileSlices`
//      source for the path (deberta::register_byte_source) and returns the buffer to fill.
//   2. The load's step for a tensor asks the source for its bytes; the first time they are not
//      there, and the source throws deberta::BytesPending (the step is left undone).
//   3. The page's frame (`web_stream_pump`) allocates a buffer for exactly that tensor's bytes and
//      asks index.html for them (`debertaReadSlice`: `await file.slice(a, b).arrayBuffer()`, copied
//      into the buffer); meanwhile the load's steps are not run (`web_stream_waiting`).
//   4. `web_stream_done(path, error)` marks the bytes there; the next frame's step widens them to
//      float64 (one tensor), and asks for the next tensor.
// So the page holds the float64 weights plus one tensor's raw bytes, never the whole file.
#include "deberta/safetensors.h"

#include <emscripten.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C" void web_wake(int frames);  // web_main.cpp

namespace {

/// The bytes of one browser File: its header (from step 1) and the slice fetched last.
class FileSlices final : public deberta::ByteSource {
 public:
  FileSlices(std::string path, uint64_t size, uint64_t header_bytes)
      : path_(std::move(path)), size_(size), header_(header_bytes) {}

  uint64_t size() const override { return size_; }

  const char* bytes(uint64_t offset, uint64_t n) override {
    if (!error_.empty()) {
      const std::string e = error_;
      error_.clear();  // a later load of the same file asks again
      throw deberta::Error(path_ + ": " + e);
    }
    if (offset + n <= header_.size()) return header_.data() + offset;
    if (ready_ && offset >= slice_at_ && offset + n <= slice_at_ + slice_.size()) return slice_.data() + (offset - slice_at_);
    want_at_ = offset, want_n_ = n, wanted_ = true;
    throw deberta::BytesPending(path_ + ": bytes " + std::to_string(offset) + "+" + std::to_string(n) + " are being read");
  }

  char* header_data() { return header_.data(); }
  bool waiting() const { return requested_ || wanted_; }

  /// Step 3: a buffer for the wanted bytes, and the page asked to fill it.
  void request() {
    if (!wanted_ || requested_) return;
    wanted_ = false;
    std::vector<char>().swap(slice_);  // the previous tensor's bytes go first
    ready_ = false;
    slice_.resize(want_n_);
    slice_at_ = want_at_;
    requested_ = true;
    EM_ASM({ debertaReadSlice(UTF8ToString($0), $1, $2, $3); }, path_.c_str(), static_cast<double>(slice_at_),
           static_cast<double>(slice_.size()), slice_.data());
  }

  /// Step 4: the page wrote the bytes (or says why it could not).
  void done(const std::string& error) {
    requested_ = false;
    if (error.empty())
      ready_ = true;
    else
      error_ = error;
  }

  /// No load is running: the last tensor's bytes are not needed any more (never while the page is
  /// still writing them).
  void release() {
    if (requested_ || slice_.empty()) return;
    std::vector<char>().swap(slice_);
    ready_ = wanted_ = false;
  }

 private:
  std::string path_;
  uint64_t size_;
  std::vector<char> header_;
  std::vector<char> slice_;
  uint64_t slice_at_ = 0, want_at_ = 0, want_n_ = 0;
  bool wanted_ = false, requested_ = false, ready_ = false;
  std::string error_;
};

std::map<std::string, std::shared_ptr<FileSlices>>& sources() {
  static std::map<std::string, std::shared_ptr<FileSlices>> s;
  return s;
}

}  // namespace

/// True while a source waits for bytes the page is reading (the load's steps then wait too).
bool web_stream_waiting() {
  for (const auto& [path, source] : sources())
    if (source->waiting()) return true;
  return false;
}

/// Once a frame, after the load's steps: asks the page for the bytes a step found missing; with no
/// load running (`loading` false), frees the last tensor's bytes.
void web_stream_pump(bool loading) {
  for (const auto& [path, source] : sources()) {
    if (loading)
      source->request();
    else
      source->release();
  }
}

extern "C" {

/// Step 1: registers the File of `size` bytes that index.html keeps for `path` and returns a buffer
/// of `header_bytes` bytes for its first bytes (8 + the JSON header's length), which the page
/// fills before it opens the folder. A file opened again replaces the previous source.
EMSCRIPTEN_KEEPALIVE char* web_stream_open(const char* path, double size, double header_bytes) {
  auto source = std::make_shared<FileSlices>(path, static_cast<uint64_t>(size), static_cast<uint64_t>(header_bytes));
  sources()[path] = source;
  deberta::register_byte_source(path, source);
  return source->header_data();
}

/// Step 4: the bytes asked for `path` are in the buffer (`error` empty), or `error` says why not
/// (the load then fails with it, naming the file).
EMSCRIPTEN_KEEPALIVE void web_stream_done(const char* path, const char* error) {
  const auto it = sources().find(path);
  if (it != sources().end()) it->second->done(error);
  web_wake(4);
}

}  // extern "C"
