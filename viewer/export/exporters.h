// exporters.h — the shown map and trace written to files: PNG, CSV, .npy of one map, and the
// whole trace as safetensors in `deberta dump`'s names. GL-free and ImGui-free (the Export panel,
// the headless driver's --export and the web edition call them).
#pragma once

#include "state/state.h"
#include "jobs/worker.h"

#include <string>

namespace viewer {

/// "deberta_L<layer>_H<head>_<quantity>": the file name (no extension) of the selected map's export.
std::string export_base_name(const ViewerState& s, Quantity q);
/// `dir` + "/" + `file` ("." and "" mean the current folder).
std::string join_path(const std::string& dir, const std::string& file);

// Each returns one status line: "wrote PATH …" on success, else the
// format, then the problem (nothing computed yet, a term switched off, the file's error).

/// The selected layer/head's map of `q` as a PNG figure: the figure of the view (figure_view.h's
/// figure_of_view, FigureKind::Map) drawn to pixels by write_figure_png (figure_export.h) — token
/// labels on both axes, the colour bar with its ticks and units, title and caption, 2 pixels a
/// point; the same PNG in the desktop and the page. Terms other than the probabilities come from
/// the layer in full (the worker's detail, or materialized now when it lags).
std::string export_map_png(const ViewerState& s, Quantity q, const std::string& path);
/// The same map as CSV: 17 digits, a header of "j token" key labels, "i token" row labels.
std::string export_map_csv(const ViewerState& s, Quantity q, const std::string& path);
/// The same map as NumPy .npy (float64, shape (N, N)).
std::string export_map_npy(const ViewerState& s, Quantity q, const std::string& path);
/// The shown result's whole trace, every layer in full (`full_trace`: L layers materialized now),
/// as safetensors with `deberta dump`'s tensor names and numbers.
std::string export_trace(const ViewerState& s, const std::string& path);

}  // namespace viewer
