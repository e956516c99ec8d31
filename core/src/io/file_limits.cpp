// file_limits.cpp — see file_limits.h.
#include "deberta/file_limits.h"

#include "deberta/tensor.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fstream>

namespace deberta {

void require_regular_file(const std::string& path) {
  struct stat st {};
  if (path.empty()) throw FileNotFound("empty path: give a file name");
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw FileNotFound(path + ": cannot open: no such file");
    throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file (a FIFO, device or socket is not read)");
}

bool path_exists(const std::string& path) {
  if (path.empty()) throw FileNotFound("empty path: give a file or folder name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
}

std::string read_whole_file(const std::string& path, uint64_t max_bytes) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open");
  const std::streamoff end = in.tellg();
  if (end < 0) throw Error(path + ": cannot read");
  const uint64_t size = static_cast<uint64_t>(end);
  if (size > max_bytes)
    throw Error(path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes >> 20) +
                " MB this file may hold");
  in.seekg(0);
  std::string data(static_cast<size_t>(size), '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) throw Error(path + ": read error");
  return data;
}

void check_json_depth(const std::string& text, const std::string& source, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (in_string) {
      if (c == '\\') ++k;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw Error(source + ": JSON nests deeper than " + std::to_string(max_depth) + " levels (byte " +
                    std::to_string(k) + ")");
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced text is the parser's to report
    }
  }
}

}  // namespace deberta
