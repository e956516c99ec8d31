// headless.cpp — the headless driver (see headless.h).
#include "app/headless.h"

#include "deberta/backend.h"
#include "deberta/output_file.h"

#include "export/exporters.h"
#include "figures/figure_export.h"
#include "export/figure_view.h"
#include "panels/panels.h"
#include "ui/clip_check.h"
#include "ui/layout.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace viewer {

namespace {

/// The window a --panel name lives in.
const char* window_of_panel(const std::string& panel) {
  if (panel == "model") return "Model & text";
  if (panel == "tokens") return "Tokens";
  if (panel == "ablations" || panel == "ablation") return "Ablations";
  return "Explorer";
}

void print_state(const ViewerState& s) {
  std::printf("state: model=%s error=%s text=%s\n", s.model ? s.model->model.directory.c_str() : "(none)",
              s.model_error.c_str(), s.text.c_str());
}

/// Every export of the selected map (PNG, CSV, .npy of each computed quantity) and the trace.
std::vector<std::string> export_all(const ViewerState& s, const std::string& dir) {
  std::vector<std::string> lines;
  for (Quantity q : kAllQuantities) {  // every term of kAllTerms, then the score and the weights
    const std::string base = dir + "/" + quantity_name(q);
    if (!s.result || !computed(*s.result, q)) {  // a term this model (or ablation) does not compute: nothing to export
      std::printf("export: skipped %s (not computed in this run)\n", quantity_name(q));
      continue;
    }
    lines.push_back(export_map_png(s, q, base + ".png"));
    lines.push_back(export_map_csv(s, q, base + ".csv"));
    lines.push_back(export_map_npy(s, q, base + ".npy"));
  }
  lines.push_back(export_trace(s, dir + "/trace.safetensors"));
  return lines;
}

/// Where "show me" went: the tab, layer, head, cell and k now selected (for scripts and tests).
void print_show_me(const ViewerState& s) {
  std::printf("lesson: show me → tab=%s layer=%d head=%d cell=%d:%d k=%d\n", tab_name(s.tab), s.layer, s.head, s.qi, s.kj,
              s.distance_k);
}

/// Types `answer` into the lesson step and presses "check", then "show the working" (`reveal`) or
/// "show me" (`show_me`, pressed by the panel in the next frame), as the panel's buttons do; prints
/// the verdict and the working. Nothing without the step's questions (built when it is drawn).
void lesson_actions(ViewerState& s, const std::string& answer, bool reveal, bool show_me) {
  if (s.lesson.steps.empty()) return;
  const LessonStep& step = s.lesson.steps[static_cast<size_t>(s.lesson.step)];
  if (!answer.empty()) {
    std::snprintf(s.lesson.given, sizeof s.lesson.given, "%s", answer.c_str());
    const LessonVerdict v = judge_lesson_answer(step, answer);
    s.lesson.checked = v.kind == LessonVerdict::Right ? 1 : v.kind == LessonVerdict::Wrong ? -1 : -2;
    if (v.kind != LessonVerdict::NotAnswer) ++s.lesson.attempts;
    s.lesson.mistake = v.mistake;
    s.lesson.give_decimals = v.give_decimals;
    std::printf("lesson: step %d, answer %s: %s\n", s.lesson.step + 1, answer.c_str(), v.text().c_str());
  }
  if (show_me) s.lesson.press_show_me = true;
  if (!reveal) return;
  s.lesson.revealed = true;
  if (s.lesson.attempts == 0) {
    std::printf("lesson: the working shows only after an attempt (--lesson-answer)\n");
    return;
  }
  // What "show the working" shows, for scripts (a teacher's slides, the xdotool walkthrough).
  std::printf("lesson: step %d, the answer: %s\n", s.lesson.step + 1, step.applies ? lesson_answer_text(step).c_str() : "(does not apply)");
  for (const LessonMistake& m : step.mistakes) std::printf("lesson: step %d, mistake %.17g: %s\n", s.lesson.step + 1, m.value, m.name.c_str());
}

/// Sets the step's "what if" control to `spec` (NAME=VALUE: parse_what_if), as the panel's control
/// does, and prints the step's own number and the [MASK]'s top 3 in the run and with the change
/// (what_if_row). As in the panel, the control opens only once the working is shown (a right answer,
/// or an attempt and "show the working").
void lesson_what_if(ViewerState& s, const std::string& spec) {
  if (spec.empty() || s.lesson.steps.empty() || !s.result) return;
  const int n = s.lesson.step + 1;
  const LessonStep& step = s.lesson.steps[static_cast<size_t>(s.lesson.step)];
  if (!s.lesson.answer_visible(step)) {
    std::printf("lesson: step %d, the \"what if\" opens only with the working shown (--lesson-answer, then --lesson-reveal)\n", n);
    return;
  }
  std::string error;
  const std::optional<WhatIfValue> v = parse_what_if(step.what_if, spec, &error);
  if (!v) {
    std::printf("lesson: step %d, what if %s: %s\n", n, spec.c_str(), error.c_str());
    return;
  }
  // What the panel's control holds (its owner key as draw_what_if writes it), so the frame shows it too.
  s.lesson.what_if = *v;
  s.lesson.what_if_for = std::to_string(s.result->generation) + "/" + std::to_string(s.lesson.step) + "/" +
                         std::to_string(static_cast<int>(step.what_if.knob));
  const LayerDetail* full = detail_for(s, step.what_if.layer);
  try {
    const WhatIfRow r = what_if_row(s.result->model->model, s.result->trace, step.what_if, *v,
                                    full && full->has(step.what_if.layer) ? &full->trace : nullptr);
    const std::string now = what_if_value_text(step.what_if, *v);
    if (step.what_if.number != WhatIfNumber::None)
      std::printf("lesson: step %d, what if %s: %s: %.6g -> %.6g\n", n, now.c_str(), what_if_number_label(step.what_if).c_str(),
                  r.number_before, r.number_after);
    std::printf("lesson: step %d, what if %s: favourite key %d -> %d, largest change %.4g at key %d\n", n, now.c_str(),
                r.favourite_before, r.favourite_after, r.max_change, r.most_changed);
    const auto top = [&](const std::vector<deberta::TokenScore>& t) {
      std::string out;
      for (const auto& ts : t) {
        char p[32];
        std::snprintf(p, sizeof p, " %.4f", ts.probability);
        out += (out.empty() ? "" : ", ") + vocab_name(s.result->model.get(), ts.id) + p;
      }
      return out;
    };
    if (!r.predict_note.empty())
      std::printf("lesson: step %d, what if %s: %s\n", n, now.c_str(), r.predict_note.c_str());
    else
      std::printf("lesson: step %d, what if %s: [MASK] at %d: %s -> %s\n", n, now.c_str(), step.what_if.mask,
                  top(r.top_before).c_str(), top(r.top_after).c_str());
  } catch (const std::exception& e) {
    std::printf("lesson: step %d, what if %s: %s\n", n, spec.c_str(), e.what());
  }
}

}  // namespace

std::vector<ExportJob> read_export_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<ExportJob> jobs;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string at = path + ":" + std::to_string(n) + ": ";
    ExportJob j;
    size_t start = 0;
    while (start <= line.size()) {
      const size_t tab = line.find('\t', start);
      const std::string field = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
      start = tab == std::string::npos ? line.size() + 1 : tab + 1;
      if (field.empty()) continue;
      const size_t eq = field.find('=');
      if (eq == std::string::npos) throw std::runtime_error(at + "a field without '=': '" + field + "' (KEY=VALUE, tab-separated)");
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "model") j.model = value;
      else if (key == "export") j.export_dir = value;
      else if (key == "screenshot") j.screenshot = value;
      else if (key == "text") j.text = value;
      else if (key == "pair") j.pair = value;
      else if (key == "ids") j.ids = value;
      else if (key == "token_types") j.token_types = value;
      else if (key == "ablate") j.ablate = value;
      else if (key == "mask_id") {
        char* end = nullptr;
        const long v = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || v < -1 || v > 1L << 30)
          throw std::runtime_error(at + "mask_id wants an integer id (or -1), found '" + value + "'");
        j.mask_id = static_cast<int>(v);
      } else {
        throw std::runtime_error(at + "unknown key '" + key +
                                 "' (model, export, screenshot, text, pair, ids, token_types, mask_id, ablate)");
      }
    }
    if (j.model.empty() || j.export_dir.empty()) throw std::runtime_error(at + "a job needs model= and export=");
    try {
      if (!j.ablate.empty()) j.ablation = deberta::parse_ablation_flags(j.ablate);
    } catch (const std::exception& e) {
      throw std::runtime_error(at + "ablate: " + e.what());
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

HeadlessDriver::HeadlessDriver(HeadlessOptions options) : o_(std::move(options)) {}

void HeadlessDriver::before_frame(App& app, bool result_changed) {
  ViewerState& s = app.state;
  if (result_changed && ablation_requested_.time_since_epoch().count() != 0) {
    ablation_latency_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ablation_requested_).count();
    ablation_requested_ = {};
  }
  // --ablate acts like a switch flipped in a running viewer: after the first result, so the
  // worker re-runs from the first layer the ablation affects.
  if (!applied_args_ && !app.jobs.loading.valid() && (!s.model || settled(app))) {
    applied_args_ = true;
    if (!o_.ablation.is_default() && s.model && s.result) {
      s.ablation = o_.ablation;
      request_compute(app);
      ablation_requested_ = std::chrono::steady_clock::now();
    }
  }
}

void HeadlessDriver::set_input(ImGuiIO& io) const {
  if (!o_.headless) return;
  io.MousePos = ImVec2(o_.mouse_x, o_.mouse_y);
  if (o_.wheel != 0 && frames_after_ready_ == 1) io.MouseWheel += o_.wheel;
}

bool HeadlessDriver::after_render(App& app, int fb_w, int fb_h, const std::map<std::string, ImVec4>& window_rects) {
  if (!o_.headless) return false;
  if (!o_.export_list.empty()) return export_list_step(app, fb_w, fb_h);
  ViewerState& s = app.state;
  bool done = false;
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  bool ready = settled(app) && (applied_args_ || !s.model);
  if (ready && then_load_next_ < o_.then_load.size()) {
    // Try the next model; the frame counter restarts once that load has settled.
    print_state(s);
    start_load(app, o_.then_load[then_load_next_++]);
    frames_after_ready_ = 0;
    ready = false;
  } else if (ready && !o_.then_load.empty() && frames_after_ready_ == 0) {
    print_state(s);
  }
  if (ready && frames_after_ready_++ == 0 && s.result)
    std::printf("computed %d tokens in %.1f ms on the %s backend (encoder from layer %lld)%s%s\n", token_count(s),
                s.result->compute_ms, deberta::backend_name(deberta::backend()),
                static_cast<long long>(s.result->first_layer),
                ablation_latency_ms_ >= 0 ? (", ablation shown " + std::to_string(static_cast<int>(ablation_latency_ms_)) +
                                             " ms after the switch").c_str() : "",
                s.compute_error.empty() ? "" : (" — error: " + s.compute_error).c_str());
  const bool first = ready && frames_after_ready_ == 1;
  if (first && o_.lesson_show_me) s.lesson.press_show_me = true;
  if (ready && frames_after_ready_ == 3 && o_.lesson_show_me)
    print_show_me(s);
  if (first) lesson_actions(s, o_.lesson_answer, o_.lesson_reveal, false);
  if (first) lesson_what_if(s, o_.lesson_what_if);
  if (first && write_figures(s) && o_.screenshot.empty()) done = true;
  if (first) report_first(s);
  if (o_.tour) return exit_code_ != 0 || tour_step(app, ready, waited);
  if (!ready && waited > o_.timeout) {
    std::fprintf(stderr, "deberta-viewer: gave up waiting for the model/computation after %.0f s\n", waited);
    exit_code_ = 1;
    done = true;
  }
  if (o_.check_fit && frames_after_ready_ >= std::max(o_.frames, 3)) {
    report_clipped("");
    if (o_.screenshot.empty() && o_.log_text.empty()) done = true;
  }
  if (!o_.log_text.empty() && frames_after_ready_ >= std::max(o_.frames, 3)) {
    report_frame_log();
    if (o_.screenshot.empty()) done = true;
  }
  if (!o_.screenshot.empty() && frames_after_ready_ >= std::max(o_.frames, 3)) {
    take_screenshot(fb_w, fb_h, window_rects);
    done = true;
  }
  return done;
}

bool HeadlessDriver::write_figures(const ViewerState& s) {
  bool wrote = false;
  if (!o_.figure.empty() || !o_.figure_grid.empty()) {
    const std::vector<std::pair<std::string, bool>> figures = {{o_.figure, false}, {o_.figure_grid, true}};
    for (const auto& [path, grid] : figures) {
      if (path.empty()) continue;
      const std::string line = write_figure(figure_of_view(s, o_.figure_quantity, grid ? FigureKind::Grid : FigureKind::Map), path);
      std::printf("%s%s\n", line.rfind("figure:", 0) == 0 ? "" : "figure: ", line.c_str());
      if (line.rfind("wrote ", 0) != 0) exit_code_ = 1;
    }
    wrote = true;
  }
  if (!o_.figure_pipeline.empty() || !o_.figure_links.empty()) {
    for (const bool links : {false, true}) {
      const std::string& path = links ? o_.figure_links : o_.figure_pipeline;
      if (path.empty()) continue;
      std::string line, why;
      if (const std::optional<Diagram> d = links ? current_links(s, &why) : current_pipeline(s, &why)) {
        line = write_diagram(*d, path);
      } else {
        line = "figure: " + path + ": " + why;
      }
      std::printf("%s%s\n", line.rfind("figure:", 0) == 0 ? "" : "figure: ", line.c_str());
      if (line.rfind("wrote ", 0) != 0) exit_code_ = 1;
    }
    wrote = true;
  }
  return wrote;
}

void HeadlessDriver::report_first(const ViewerState& s) {
  if (!o_.export_dir.empty()) {
    for (const auto& l : export_all(s, o_.export_dir)) {
      std::printf("export: %s\n", l.c_str());
      if (l.rfind("wrote ", 0) != 0) exit_code_ = 1;
    }
  }
  // What the panels show in red, also on stderr.
  if (s.result)  // NaN / Inf: the warnings the CLI prints
    for (const std::string& w : s.result->warnings) std::fprintf(stderr, "deberta-viewer: warning: %s\n", w.c_str());
  if (!s.model_notice.empty()) std::fprintf(stderr, "deberta-viewer: warning: %s\n", s.model_notice.c_str());
  if (!s.input_error.empty()) std::fprintf(stderr, "deberta-viewer: input: %s\n", s.input_error.c_str());
  if (!s.compute_error.empty()) std::fprintf(stderr, "deberta-viewer: %s\n", s.compute_error.c_str());
  // The model asked for could not be loaded: the loader's message, and a failed run (the window
  // still draws what it can, for the screenshot).
  if (!s.model && !s.model_error.empty()) {
    std::fprintf(stderr, "deberta-viewer: %s\n", s.model_error.c_str());
    exit_code_ = 1;
  }
}

void HeadlessDriver::report_clipped(const std::string& where) {
  for (const ClippedLine& line : clipped_lines(ImGui::GetDrawData())) {
    std::printf("fit: %s%s\n", where.c_str(), describe(line).c_str());
    ++clipped_;
  }
  std::fflush(stdout);
}

void HeadlessDriver::report_frame_log() {
  if (const std::string& err = frame_text_log_error(); !err.empty()) {
    std::fprintf(stderr, "deberta-viewer: --log-text: %s\n", err.c_str());
    exit_code_ = 1;
  } else {
    std::printf("wrote %s\n", o_.log_text.c_str());
  }
}

bool HeadlessDriver::append_tour_log(const TourStop* current) {
  if (const std::string& err = frame_text_log_error(); !err.empty()) {
    std::fprintf(stderr, "deberta-viewer: --log-text: %s\n", err.c_str());
    exit_code_ = 1;
    return false;
  }
  std::ifstream in(frame_log_path(), std::ios::binary);
  std::ostringstream frame;
  frame << in.rdbuf();
  tour_log_ += std::string("#### tour: ") + tab_name(current->tab);
  if (current->lesson_step >= 0)
    tour_log_ += " step " + std::to_string(current->lesson_step + 1) + (current->show_me ? ", show me" : ", show the working");
  tour_log_ += "\n" + frame.str();
  return true;
}

void HeadlessDriver::write_tour_log() {
  std::remove(frame_log_path().c_str());
  try {
    deberta::write_whole_file(o_.log_text, tour_log_);
    std::printf("wrote %s\n", o_.log_text.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deberta-viewer: --log-text: %s\n", e.what());
    exit_code_ = 1;
  }
}

void HeadlessDriver::take_screenshot(int fb_w, int fb_h, const std::map<std::string, ImVec4>& window_rects) {
  std::string err;
  const auto rect = window_rects.find(window_of_panel(o_.panel));
  if (o_.crop && rect != window_rects.end()) {
    const ImVec4 r = rect->second;
    err = write_window_png(o_.screenshot, fb_h, static_cast<int>(r.x), static_cast<int>(r.y),
                           std::min(static_cast<int>(r.z), fb_w - static_cast<int>(r.x)),
                           std::min(static_cast<int>(r.w), fb_h - static_cast<int>(r.y)));
  } else {
    err = write_window_png(o_.screenshot, fb_h, 0, 0, fb_w, fb_h);
  }
  if (!err.empty()) {
    std::fprintf(stderr, "deberta-viewer: %s\n", err.c_str());
    exit_code_ = 1;
  } else {
    std::printf("wrote %s\n", o_.screenshot.c_str());
  }
}

bool HeadlessDriver::tour_step(App& app, bool ready, double waited) {
  ViewerState& s = app.state;
  if (tour_frames_ < 0) {  // the first result is shown: every tab, then the lesson's steps (added below)
    if (!ready) {
      if (waited <= o_.timeout) return false;
      std::fprintf(stderr, "deberta-viewer: gave up waiting for the model/computation after %.0f s\n", waited);
      exit_code_ = 1;
      return true;
    }
    for (int k = 0; k < static_cast<int>(Tab::Count); ++k) tour_.push_back({static_cast<Tab>(k)});
    start_layer_ = s.layer, start_head_ = s.head, start_emd_head_ = s.emd_head, start_qi_ = s.qi, start_kj_ = s.kj;
    start_k_ = s.distance_k;
    tour_frames_ = o_.frames;  // "the previous stop is done"
  }
  const double stop_waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - tour_stop_began_).count();
  if (!ready) {
    if (stop_waited <= o_.timeout) return false;
    std::fprintf(stderr, "deberta-viewer: tour: gave up waiting for stop %zu after %.0f s\n", tour_next_, stop_waited);
    exit_code_ = 1;
    return true;
  }
  ++tour_frames_;
  const TourStop* current = tour_next_ > 0 ? &tour_[tour_next_ - 1] : nullptr;
  if (current && current->lesson_step >= 0 && tour_frames_ == 1)  // the step was drawn once: its steps are built
    lesson_actions(s, "0", !current->show_me, current->show_me);
  if (current && current->show_me && tour_frames_ == 3)
    print_show_me(s);
  if (tour_frames_ < std::max(o_.frames, 3)) return false;
  if (o_.check_fit && current) {
    std::string where = tab_name(current->tab);
    if (current->lesson_step >= 0)
      where += " step " + std::to_string(current->lesson_step + 1) + (current->show_me ? ", show me" : ", show the working");
    report_clipped(where + ": ");
  }
  if (!o_.log_text.empty() && current && !append_tour_log(current)) return true;
  // The Lesson tab has been drawn, so its steps are known: a stop for each, twice.
  if (current && current->tab == Tab::Lesson && current->lesson_step < 0)
    for (int k = 0; k < static_cast<int>(s.lesson.steps.size()); ++k)
      for (const bool show_me : {false, true}) tour_.insert(tour_.begin() + static_cast<long>(tour_next_) + 2 * k + show_me, {Tab::Lesson, k, show_me});
  if (tour_next_ == tour_.size()) {
    std::printf("tour: %zu stops drawn\n", tour_.size());
    if (!o_.log_text.empty()) write_tour_log();
    return true;
  }
  const TourStop& next = tour_[tour_next_++];
  s.layer = start_layer_, s.head = start_head_, s.emd_head = start_emd_head_, s.qi = start_qi_, s.kj = start_kj_;
  s.distance_k = start_k_;
  s.tab = next.tab, s.switch_tab = true;
  if (next.lesson_step >= 0) s.lesson.start_step(next.lesson_step);
  std::printf("tour: %s", tab_name(next.tab));
  if (next.lesson_step >= 0) std::printf(" step %d, %s", next.lesson_step + 1, next.show_me ? "show me" : "show the working");
  std::printf("\n");
  std::fflush(stdout);  // a crash at this stop leaves its name as the last line
  tour_frames_ = 0;
  tour_stop_began_ = std::chrono::steady_clock::now();
  return false;
}

void HeadlessDriver::fail_job(const std::string& why) {
  std::printf("export-list: FAIL %s: %s\n", o_.export_list[job_next_ - 1].export_dir.c_str(), why.c_str());
  std::fflush(stdout);
  ++jobs_failed_;
  job_phase_ = -1;
}

bool HeadlessDriver::start_next_job(App& app) {
  ViewerState& s = app.state;
  if (job_next_ == 0)
    start_layer_ = s.layer, start_head_ = s.head, start_emd_head_ = s.emd_head, start_qi_ = s.qi, start_kj_ = s.kj,
    start_k_ = s.distance_k, start_tab_ = s.tab;
  if (job_next_ == o_.export_list.size()) {
    std::printf("export-list: %zu jobs, %d failed\n", o_.export_list.size(), jobs_failed_);
    if (jobs_failed_ > 0) exit_code_ = 1;
    return true;
  }
  const ExportJob& j = o_.export_list[job_next_++];
  s.layer = start_layer_, s.head = start_head_, s.emd_head = start_emd_head_, s.qi = start_qi_, s.kj = start_kj_;
  s.distance_k = start_k_;
  s.tab = start_tab_, s.switch_tab = true;
  s.text = j.text, s.pair = j.pair, s.ids_text = j.ids, s.token_types_text = j.token_types, s.mask_id = j.mask_id;
  s.model_error.clear(), s.input_error.clear(), s.compute_error.clear();
  std::error_code ec;
  std::filesystem::create_directories(j.export_dir, ec);
  if (ec || !std::filesystem::is_directory(j.export_dir, ec)) {
    fail_job("not a directory that can be created (" + (ec ? ec.message() : std::string("a file of that name exists")) + ")");
    return false;
  }
  start_load(app, j.model);
  job_phase_ = 0, job_frames_ = 0;
  job_began_ = std::chrono::steady_clock::now();
  return false;
}

bool HeadlessDriver::export_list_step(App& app, int fb_w, int fb_h) {
  ViewerState& s = app.state;
  const bool ready = settled(app);
  if (job_phase_ < 0) return ready && start_next_job(app);  // between jobs
  const ExportJob& j = o_.export_list[job_next_ - 1];
  if (!ready) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - job_began_).count();
    if (waited <= o_.timeout) return false;
    // The load or the computation still runs: the next job cannot start beside it.
    fail_job("gave up waiting for the model/computation after " + std::to_string(static_cast<int>(waited)) + " s");
    exit_code_ = 1;
    return true;
  }
  // A failed load keeps the previous model: never export that one under this job's name.
  if (!s.model_error.empty() || !s.model || s.model_path != j.model) {
    fail_job("cannot load the model: " + (s.model_error.empty() ? std::string("(another model is open)") : s.model_error));
    return false;
  }
  if (!s.input_error.empty() || !s.compute_error.empty()) {
    fail_job(s.input_error.empty() ? s.compute_error : "input: " + s.input_error);
    return false;
  }
  if (job_phase_ == 0) {
    if (s.result) for (const std::string& w : s.result->warnings) std::fprintf(stderr, "deberta-viewer: warning: %s\n", w.c_str());
    if (!s.model_notice.empty()) std::fprintf(stderr, "deberta-viewer: warning: %s\n", s.model_notice.c_str());
    job_phase_ = 1;
    // --ablate's switches, flipped after the first result as in a running viewer (before_frame).
    if (!j.ablation.is_default() && s.result) {
      s.ablation = j.ablation;
      request_compute(app);
      return false;
    }
  }
  if (job_phase_ == 1) job_phase_ = 2, job_frames_ = 0;
  // The exports after the first frame drawn with the result (as --export); a screenshot after
  // --frames frames, once ImGui's layout has settled.
  if (++job_frames_ < (j.screenshot.empty() ? 1 : std::max(o_.frames, 3))) return false;
  bool ok = true;
  for (const auto& l : export_all(s, j.export_dir)) {
    std::printf("export: %s\n", l.c_str());
    ok = ok && l.rfind("wrote ", 0) == 0;
  }
  if (!ok) {
    fail_job("an export failed (the lines above)");
    return false;
  }
  if (!j.screenshot.empty()) {
    if (const std::string err = write_window_png(j.screenshot, fb_h, 0, 0, fb_w, fb_h); !err.empty()) {
      fail_job(err);
      return false;
    }
  }
  std::printf("export-list: ok %s: %d tokens, %s%s\n", j.export_dir.c_str(), token_count(s), s.model->model.directory.c_str(),
              j.ablate.empty() ? "" : (", ablation " + j.ablate).c_str());
  std::fflush(stdout);
  job_phase_ = -1;
  return false;
}

bool HeadlessDriver::after_swap(const App& app, double frame_ms, double ui_ms) {
  if (o_.bench_frames <= 0 || frames_after_ready_ <= 3) return false;
  frame_ms_.push_back(frame_ms);
  ui_ms_.push_back(ui_ms);
  if (static_cast<int>(frame_ms_.size()) < o_.bench_frames) return false;
  std::vector<double> sorted = frame_ms_;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double v : sorted) mean += v;
  mean /= static_cast<double>(sorted.size());
  const double p95 = sorted[std::min(sorted.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(sorted.size())))];
  double ui_mean = 0;
  for (double v : ui_ms_) ui_mean += v;
  ui_mean /= static_cast<double>(ui_ms_.size());
  std::printf("frames %zu  tokens %d  panel %s  mean %.2f ms  p95 %.2f ms  (ImGui frame %.2f ms, GL render + swap %.2f ms)\n",
              sorted.size(), token_count(app.state), tab_name(app.state.tab), mean, p95, ui_mean, mean - ui_mean);
  return true;
}

}  // namespace viewer
