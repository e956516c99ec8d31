// output_file.h — a file being written, whose every failure is an error naming its path (issue 59,
// class 5). A write is done when the close succeeds: stdio, ofstream, stb and cairo buffer, so a
// full disk shows at the flush or the close, not at the write. Every writer of the project (dump's
// safetensors, the viewer's PNG / CSV / .npy exports, figures, screenshots) writes through this.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace deberta {

class OutputFile {
 public:
  /// Opens (creates or truncates) `path` for writing. Error: "cannot write PATH: <reason>".
  explicit OutputFile(const std::string& path);
  /// Closes without checking when close() was not called (an exception is on its way).
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Writes `n` bytes. Error naming the path and the system's reason on a short write.
  void write(const void* data, size_t n);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  /// Flushes and closes; Error naming the path when the flush, the stream or the close failed.
  void close();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int error);
  std::string path_;
  std::FILE* file_ = nullptr;
};

/// Writes `bytes` to `path` through OutputFile. Error "cannot write PATH: <reason>".
void write_whole_file(const std::string& path, const std::string& bytes);

}  // namespace deberta
