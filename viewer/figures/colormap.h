// colormap.h — the viewer's colour maps and number format, free of OpenGL and ImGui: the panels
// (heatmap.h), the figure exporters (figure_export.h) and the PNG writers share them.
#pragma once

#include "deberta/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace viewer {

/// Perceptual colour maps: viridis for probabilities and other non-negative values, a diverging
/// blue–white–red map (ColorBrewer RdBu) centred on 0 for signed scores.
enum class ColorMap { Viridis = 0, Diverging = 1 };

/// How values map to colours: [lo, hi] (diverging maps use lo = −hi so 0 is white).
struct ColorScale {
  ColorMap map = ColorMap::Viridis;
  double lo = 0, hi = 1;
  /// A diverging scale symmetric around 0 reaching `max_abs` (at least a tiny positive value).
  static ColorScale diverging(double max_abs);
  /// Viridis over [lo, hi].
  static ColorScale sequential(double lo, double hi);
};

/// RGBA packed as ImGui packs it (IM_COL32: red in the low byte, alpha in the high one) for value
/// `v` under `scale`; a value that is not finite is grey.
uint32_t color_of(const ColorScale& scale, double v);
/// Colour-mapped pixels of `m`, row-major RGBA bytes (4 per value).
std::vector<uint8_t> colorize(const deberta::Matrix& m, const ColorScale& scale);

/// Max |value| over the given maps (ignoring nulls); 1e-12 when all are zero.
double max_abs(const std::vector<const deberta::Matrix*>& maps);
/// Max value over the given maps.
double max_value(const std::vector<const deberta::Matrix*>& maps);

/// Text of a number in a compact fixed form ("+0.1234", "−1.2e-05"); `sign` = false drops the "+".
std::string fmt(double v, int digits = 4, bool sign = true);

}  // namespace viewer
