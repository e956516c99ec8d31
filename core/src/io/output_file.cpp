// output_file.cpp — OutputFile: stdio with every result checked (fwrite, fflush, ferror, fclose).
#include "deberta/output_file.h"

#include "deberta/tensor.h"  // Error

#include <cerrno>
#include <cstring>

namespace deberta {

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path.empty()) throw Error("cannot write an empty path");
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) fail(errno);
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::fail(int error) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  throw Error("cannot write " + path_ + ": " + (error ? std::strerror(error) : "write error"));
}

void OutputFile::write(const void* data, size_t n) {
  if (!file_) throw Error("cannot write " + path_ + ": already closed");
  errno = 0;
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) fail(errno);
}

void OutputFile::close() {
  if (!file_) throw Error("cannot write " + path_ + ": already closed");
  errno = 0;
  if (std::fflush(file_) != 0 || std::ferror(file_)) fail(errno);
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) throw Error("cannot write " + path_ + ": " + std::strerror(errno));
}

void write_whole_file(const std::string& path, const std::string& bytes) {
  OutputFile out(path);
  out.write(bytes);
  out.close();
}

}  // namespace deberta
