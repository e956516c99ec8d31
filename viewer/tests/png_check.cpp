// png_check.cpp — checks a screenshot of the viewer: its size, that it is not blank (many distinct
// colours), and that a heatmap region is really a map (many distinct saturated colours, not flat).
//
//   viewer_png_check FILE.png --size 1280x800 [--region X,Y,W,H] [--min-colors N] [--min-map-colors N]
//
// Exit 0 when every check passes, 1 otherwise (each failed check is printed).
// stb_image's implementation is in Debian's libstb: do not define STB_IMAGE_IMPLEMENTATION.
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.png --size WxH [--region X,Y,W,H] [--min-colors N] [--min-map-colors N]\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  int want_w = 0, want_h = 0, rx = -1, ry = -1, rw = 0, rh = 0, min_colors = 200, min_map_colors = 24;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string opt = argv[a];
    if (opt == "--size") std::sscanf(argv[a + 1], "%dx%d", &want_w, &want_h);
    else if (opt == "--region") std::sscanf(argv[a + 1], "%d,%d,%d,%d", &rx, &ry, &rw, &rh);
    else if (opt == "--min-colors") min_colors = std::atoi(argv[a + 1]);
    else if (opt == "--min-map-colors") min_map_colors = std::atoi(argv[a + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", opt.c_str());
      return 2;
    }
  }
  int w = 0, h = 0, ch = 0;
  unsigned char* px = stbi_load(path, &w, &h, &ch, 3);
  if (!px) {
    std::printf("FAIL: cannot read %s as an image (%s)\n", path, stbi_failure_reason());
    return 1;
  }
  int failures = 0;
  if (want_w && (w != want_w || h != want_h)) {
    std::printf("FAIL: size %dx%d, expected %dx%d\n", w, h, want_w, want_h);
    ++failures;
  }
  auto rgb = [&](int x, int y) {
    const unsigned char* p = px + (static_cast<size_t>(y) * w + x) * 3;
    return (p[0] << 16) | (p[1] << 8) | p[2];
  };
  std::set<int> all;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) all.insert(rgb(x, y));
  std::printf("%s: %dx%d, %zu distinct colours\n", path, w, h, all.size());
  if (static_cast<int>(all.size()) < min_colors) {
    std::printf("FAIL: only %zu distinct colours (want >= %d): blank or broken rendering\n", all.size(), min_colors);
    ++failures;
  }
  if (rw > 0 && rh > 0) {
    if (rx < 0 || ry < 0 || rx + rw > w || ry + rh > h) {
      std::printf("FAIL: region %d,%d,%d,%d outside the image\n", rx, ry, rw, rh);
      ++failures;
    } else {
      // Saturated colours (|max − min| channel > 40) exclude the grey UI and white/grey text.
      std::set<int> sat;
      double sum = 0, sum2 = 0;
      for (int y = ry; y < ry + rh; ++y)
        for (int x = rx; x < rx + rw; ++x) {
          const int c = rgb(x, y);
          const int r = c >> 16, g = (c >> 8) & 255, b = c & 255;
          const int mx = std::max(r, std::max(g, b)), mn = std::min(r, std::min(g, b));
          if (mx - mn > 40) sat.insert(c);
          const double lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
          sum += lum, sum2 += lum * lum;
        }
      const double n = static_cast<double>(rw) * rh;
      const double sd = std::sqrt(std::max(sum2 / n - (sum / n) * (sum / n), 0.0));
      std::printf("region %d,%d %dx%d: %zu distinct saturated colours, luminance s.d. %.1f\n", rx, ry, rw, rh, sat.size(), sd);
      if (static_cast<int>(sat.size()) < min_map_colors) {
        std::printf("FAIL: heatmap region has %zu saturated colours (want >= %d): no map drawn there\n", sat.size(),
                    min_map_colors);
        ++failures;
      }
      if (sd < 8.0) {
        std::printf("FAIL: heatmap region is flat (luminance s.d. %.1f < 8)\n", sd);
        ++failures;
      }
    }
  }
  stbi_image_free(px);
  if (failures == 0) std::printf("PASS\n");
  return failures ? 1 : 0;
}
