// file_writers.h — the viewer's file formats: PNG (RGBA rows), CSV and NumPy .npy of a matrix.
//
// No ImGui, OpenGL or viewer state here: the exports (panel_export.cpp), the window screenshot
// (app.cpp) and the headless driver hand these functions plain pixels and matrices. Each returns
// "" on success or one line naming the file and the problem.
#pragma once

#include "deberta/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace viewer {

/// Writes `height` rows of `width` RGBA pixels (4 bytes each, rows packed, `rgba` holds
/// width·height·4 bytes) as a PNG. `flip_rows`: the first row in memory is the bottom of the image
/// (OpenGL's glReadPixels order). Errors: "cannot write PATH: reason" (stb's encoder failed, or a
/// write, the flush or the close failed: deberta::OutputFile), a size that does not match the buffer.
std::string write_png_rgba(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
                           bool flip_rows = false);

/// Writes `m [R, C]` as NumPy format 1.0: '<f8', C order, shape (R, C), the header padded to 64
/// bytes. Errors: "cannot write PATH: reason" (the open, a write, the flush or the close).
std::string write_npy(const std::string& path, const deberta::Matrix& m);

/// Writes `m [R, C]` as CSV with 17 significant digits: a header row (`corner`, then
/// `col_labels`), then one row per matrix row led by its `row_labels` entry. Labels are quoted,
/// quotes doubled. `row_labels` has R entries, `col_labels` C (missing ones are written empty).
/// Errors: "cannot write PATH: reason" (the open, a write, the flush or the close).
std::string write_csv(const std::string& path, const deberta::Matrix& m, const std::string& corner,
                      const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels);

}  // namespace viewer
