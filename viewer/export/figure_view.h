// figure_view.h — the one place where the viewer's state becomes a figure description
// (figure_export.h's FigureSpec): the Export tab, the headless --figure / --figure-grid / --export
// and the map PNG all call figure_of_view, then hand the spec to a writer.
#pragma once

#include "figures/figure_export.h"
#include "state/state.h"

namespace viewer {

/// Which figure of the view: the selected layer/head's map, or every layer × head on one scale.
enum class FigureKind { Map, Grid };

/// The figure of quantity `q` in the shown result, captioned with the model, the text, where
/// (layer, head; or all layers × heads), the term and the ablation. Map: the selected layer/head
/// (probabilities from the result's trace, another term from the worker's detail or materialized
/// now); a masked head is drawn crossed out. Grid: `columns` = heads, one row title per layer, one
/// shared scale; terms other than the probabilities come from every layer materialized now.
/// Scale: viridis over [0, max] for the probabilities, else diverging around 0 over max |value|.
/// When there is nothing to draw, `problem` says why ("nothing computed yet", "c2p is not computed
/// in this run (term switched off)", a materialization error) and `maps` is empty.
FigureSpec figure_of_view(const ViewerState& s, Quantity q, FigureKind kind);

}  // namespace viewer
