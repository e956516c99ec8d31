# i18n_sources.sh — sourced by scripts/update_po.sh and tests/i18n_check.py's shell step: the
# viewer sources whose strings the reader sees (the interface and the lesson), and xgettext's
# keywords (viewer/i18n/i18n.h). Not listed, on purpose: main.cpp and headless.cpp (the CLI's messages
# and the headless modes' output stay English for scripts) and figure_export.cpp (figures for slides
# and papers keep the paper's English labels).
I18N_SOURCES=(
  viewer/app/app.cpp viewer/ui/layout.cpp viewer/ui/widgets.cpp viewer/state/state.cpp viewer/state/state.h viewer/jobs/worker.cpp
  viewer/lesson/lesson.cpp viewer/lesson/lesson.h viewer/figures/diagrams.cpp viewer/ui/heatmap.cpp viewer/ui/fonts.cpp viewer/export/exporters.cpp
  viewer/export/file_writers.cpp viewer/ui/quote_widget.h viewer/lesson/paper_quotes.h viewer/panels/panels.h
  viewer/panels/panel_model.cpp viewer/panels/panel_tokens.cpp viewer/panels/panel_distance.cpp viewer/panels/panel_grid.cpp
  viewer/panels/panel_head.cpp viewer/panels/panel_equation.cpp viewer/panels/panel_predictions.cpp viewer/panels/panel_ablation.cpp
  viewer/panels/panel_compare.cpp viewer/panels/panel_lesson.cpp viewer/panels/panel_export.cpp viewer/panels/panel_diagrams.cpp
  viewer/web/page/web_main.cpp
)
XGETTEXT_ARGS=(
  --from-code=UTF-8 --language=C++ --keyword=tr --keyword=trc:1c,2 --keyword=trf:1 --keyword=N_
  --add-comments=TRANSLATORS: --package-name=deberta-explorer --msgid-bugs-address=docs/i18n.md
  --sort-by-file --no-wrap
)

# The page's own strings (viewer/web/site/index.html: the loading line, the dead ends, the Open button)
# are marked with tr("…") / trf("…", {…}) in its script. xgettext reads JavaScript, not HTML:
# i18n_extract OUT [--extract-all] writes the template of the viewer's strings and the page's, the
# page's read from a copy of index.html whose lines outside <script> are blanked (the line numbers,
# and so the template's references, stay index.html's).
I18N_PAGE=viewer/web/site/index.html
i18n_extract() {
  local out=$1 all=${2:-} js
  # --extract-all also meets empty and binary literals, of which xgettext warns: those warnings go.
  local quiet=/dev/stderr
  [[ -n "$all" ]] && quiet=/dev/null
  xgettext "${XGETTEXT_ARGS[@]}" $all -o "$out" "${I18N_SOURCES[@]}" 2>"$quiet"
  js=$(mktemp --suffix=.js)
  awk '/<script[ >]/ {inside=1; print ""; next} /<\/script>/ {inside=0; print ""; next} {print inside ? $0 : ""}' \
    "$I18N_PAGE" > "$js"
  xgettext --from-code=UTF-8 --language=JavaScript --keyword=tr --keyword=trf:1 --add-comments=TRANSLATORS: \
    --no-wrap $all --join-existing -o "$out" "$js" 2>"$quiet"
  sed -i -E "/^#: /s|[^ ]*\.js:|$I18N_PAGE:|g" "$out"
  rm -f "$js"
}
