// file_writers.cpp — PNG through stb_image_write (implementation in Debian's libstb), CSV and .npy by hand.
// Every file goes through deberta::OutputFile: a failed write, flush or close is "cannot write PATH:
// <reason>" (issue 59, class 5), never a report of success. The error messages are English (the
// exporters' reports, exporters.cpp).
#include "export/file_writers.h"

#include "deberta/output_file.h"
#include "deberta/tensor.h"  // Error

#include <stb_image_write.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace viewer {

std::string write_png_rgba(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
                           bool flip_rows) {
  const size_t stride = static_cast<size_t>(std::max(width, 0)) * 4;
  if (width <= 0 || height <= 0 || rgba.size() != stride * static_cast<size_t>(height))
    return "cannot write " + path + ": " + std::to_string(rgba.size()) + " bytes for " + std::to_string(width) + "×" +
           std::to_string(height) + " RGBA pixels";
  const uint8_t* rows = rgba.data();
  std::vector<uint8_t> flipped;
  if (flip_rows) {
    flipped.resize(rgba.size());
    for (int y = 0; y < height; ++y)
      std::copy_n(rgba.data() + static_cast<size_t>(y) * stride, stride,
                  flipped.data() + static_cast<size_t>(height - 1 - y) * stride);
    rows = flipped.data();
  }
  // stb encodes into memory; the file is written and closed (and checked) by OutputFile.
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, rows, static_cast<int>(stride)))
    return "cannot write " + path + ": the PNG encoder failed";
  try {
    deberta::write_whole_file(path, png);
  } catch (const deberta::Error& e) {
    return e.what();
  }
  return "";
}

std::string write_npy(const std::string& path, const deberta::Matrix& m) {
  // NPY format 1.0: magic, version, header length (uint16 LE), dict padded to 64 bytes, data.
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(m.rows()) + ", " +
                       std::to_string(m.cols()) + "), }";
  const size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  try {
    deberta::OutputFile out(path);
    out.write("\x93NUMPY\x01\x00", 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    const char len_le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(len_le, 2);
    out.write(header);
    out.write(m.data(), static_cast<size_t>(m.size()) * sizeof(double));
    out.close();
  } catch (const deberta::Error& e) {
    return e.what();
  }
  return "";
}

std::string write_csv(const std::string& path, const deberta::Matrix& m, const std::string& corner,
                      const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels) {
  std::ostringstream out;
  auto quote = [](const std::string& t) {
    std::string o = "\"";
    for (char ch : t) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
  };
  auto label = [](const std::vector<std::string>& v, int64_t i) {
    return i < static_cast<int64_t>(v.size()) ? v[static_cast<size_t>(i)] : std::string();
  };
  out << quote(corner);
  for (int64_t j = 0; j < m.cols(); ++j) out << "," << quote(label(col_labels, j));
  out << "\n";
  char buf[40];
  for (int64_t i = 0; i < m.rows(); ++i) {
    out << quote(label(row_labels, i));
    for (int64_t j = 0; j < m.cols(); ++j) {
      std::snprintf(buf, sizeof buf, ",%.17g", m(i, j));
      out << buf;
    }
    out << "\n";
  }
  try {
    deberta::write_whole_file(path, out.str());
  } catch (const deberta::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace viewer
