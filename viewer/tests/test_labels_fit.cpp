// test_labels_fit.cpp — the diagrams' labels fit their boxes in every language (issue 54, item 5).
//
// The Pipeline diagram (figures/diagrams.h) of several models and runs — the bundled model, the
// multilingual one, a base-sized config (wide numbers: V = 128100, N = 512), the paper's p2c index,
// a run without position terms, one with p2p, no EMD, no MLM head, a table no term reads — worded in
// en, ko, ja, zh_CN and it (`translated`), measured with the viewer's own fonts (the atlas of
// ui/fonts.h for that language, no window) at the sizes the Pipeline tab draws: the tab's room at
// 1280×800, 1440×900 and 1920×1080 (the layout of ui/layout.cpp: the left column a third of the
// width within [360, 480] units, the Tokens strip, the tab row and the buttons' row above the
// diagram) and the interface sizes normal and large. Every box's title and detail must fit the box
// at the size box_font gives (the tab's own sizing): no label shrunk to the 8 px floor and clipped,
// and, at the normal size, none smaller than 0.7 × the size the tab starts from (a label that must
// shrink more than that is too long for its box, whatever the floor; at the large size the panel is
// narrower and the labels shrink more, by design). The diagram's heading fits its width too.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "test_paths.h"  // DEBERTA_SOURCE_DIR
#include "figures/diagrams.h"
#include "i18n/i18n.h"
#include "ui/fonts.h"

#include "deberta/model.h"
#include "deberta/model_io.h"

#include <doctest/doctest.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string source(const std::string& rel) { return std::string(DEBERTA_SOURCE_DIR) + "/" + rel; }

struct Run {
  std::string name;
  deberta::ModelConfig config;
  deberta::ResolvedAttention att;
  int n = 0;
  bool emd = true, lm_head = true;
};

deberta::ResolvedAttention attention_of(const deberta::ModelConfig& c) {
  deberta::ResolvedAttention a;
  a.terms[deberta::Term::c2c] = true;
  for (const std::string& t : c.pos_att_type) {
    if (t == "c2p") a.terms[deberta::Term::c2p] = true;
    if (t == "p2c") a.terms[deberta::Term::p2c] = true;
  }
  a.scale_factor = 1.0 + a.terms[deberta::Term::c2p] + a.terms[deberta::Term::p2c];
  a.k = c.relative_span();
  a.window = a.k;
  return a;
}

std::vector<Run> runs() {
  std::vector<Run> out;
  for (const char* dir : {"notebooks_data/models/deberta-tiny", "notebooks_data/models/deberta-tiny-multilingual"}) {
    const deberta::Model m = deberta::load_model(source(dir));
    const deberta::ResolvedAttention att = attention_of(m.config);
    const Run plain{dir, m.config, att, 33};
    out.push_back(plain);
    Run paper = plain;
    paper.name += ", the paper's p2c index, no EMD";
    paper.att.p2c_index = deberta::P2CIndex::Paper, paper.emd = false;
    out.push_back(paper);
    Run none = plain;  // the relative table is there, no term reads it
    none.name += ", no position term (§3.1), no MLM head";
    none.att.terms[deberta::Term::c2p] = none.att.terms[deberta::Term::p2c] = false, none.att.scale_factor = 1;
    none.lm_head = false;
    out.push_back(none);
    Run p2p = plain;
    p2p.name += ", p2p on, c2p off";
    p2p.att.terms[deberta::Term::p2p] = true, p2p.att.terms[deberta::Term::c2p] = false;
    out.push_back(p2p);
  }
  // A base-sized model: the widest numbers (DeBERTa-v3-large's sizes, 512 tokens).
  Run base = out.front();
  base.name = "a large config, 512 tokens";
  base.config.hidden_size = 1024, base.config.num_attention_heads = 16, base.config.num_hidden_layers = 24;
  base.config.intermediate_size = 4096, base.config.vocab_size = 128100, base.config.type_vocab_size = 2;
  base.config.position_biased_input = true;
  base.n = 512;
  out.push_back(base);
  return out;
}

/// The Pipeline tab's room at a window of `w` × `h` pixels and interface factor `k` (ui/layout.cpp:
/// the left column, the Tokens strip, the Explorer's padding; above the diagram the tab row, the
/// separator and the row of the hint and the export buttons).
ImVec2 pipeline_room(float w, float h, float k, float font_px) {
  const float left_w = std::clamp(w * 0.33f, 360.0f * k, 480.0f * k);
  const float tokens_h = std::clamp(h * 0.11f, 70.0f * k, 110.0f * k);
  const float row = font_px + 2 * 3 * k + 5 * k;  // a button's height and the item spacing
  return ImVec2(w - left_w - 2 * 8 * k, h - tokens_h - 2 * 6 * k - 2 * row - 8 * k);
}

}  // namespace

TEST_CASE("every label of the Pipeline diagram fits its box in en, ko, ja, zh_CN and it at the sizes the tab draws") {
  const std::vector<Run> all = runs();
  REQUIRE(all.size() == 9);
  const std::vector<std::string> langs = {"en", "ko", "ja", "zh_CN", "it"};
  for (const std::string& lang : langs) {
    CAPTURE(lang);
    REQUIRE(viewer::i18n::set_language(lang));
    std::vector<viewer::Diagram> diagrams;
    std::string text;
    for (const Run& r : all) {
      diagrams.push_back(viewer::pipeline_diagram(r.config, r.att, r.n, r.emd, r.lm_head, true));
      text += diagrams.back().title;
      for (const auto& b : diagrams.back().boxes) text += b.title + b.detail;
    }
    // Worded in the language: the English diagram's words are not there.
    if (lang != "en") {
      if (lang != "it") CHECK(text.find("Embedding") == std::string::npos);  // Italian keeps the loanword
      CHECK(text.find("shared by all layers") == std::string::npos);
      CHECK(text.find("over keys j") == std::string::npos);
    }
    ImGuiContext* ctx = ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    {
      viewer::FontAtlas fonts;
      fonts.require(text);
      fonts.init();
      ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
      REQUIRE(fonts.missing().empty());
      const auto width = [font](const std::string& s, float px) { return font->CalcTextSizeA(px, FLT_MAX, 0, s.c_str()).x; };
      float smallest = 1e9f, smallest_ratio = 1e9f;
      std::string smallest_at;
      int boxes = 0;
      for (const float k : {1.0f, 1.25f}) {
        const float fs = 15.0f * k;  // the sans face's size (ui/fonts.h)
        for (const auto& [w, h] : std::vector<std::pair<float, float>>{{1280, 800}, {1440, 900}, {1920, 1080}}) {
          const ImVec2 room = pipeline_room(w, h, k, fs);
          for (size_t r = 0; r < all.size(); ++r) {
            const viewer::Diagram& d = diagrams[r];
            const float sc = viewer::diagram_scale(d, room.x, room.y);
            CAPTURE(all[r].name);
            CAPTURE(w);
            CAPTURE(k);
            const float hp = viewer::heading_px(d, sc, fs, width);
            CHECK_MESSAGE(20 * sc + width(d.title, hp) <= (d.width - 20) * sc + 0.01f, "the heading is wider than the diagram: " << d.title);
            CHECK_MESSAGE(hp >= 0.8f * fs, "the heading shrunk to " << hp << " px: " << d.title);
            for (const viewer::DiagramBox& b : d.boxes) {
              const viewer::BoxFont f = viewer::box_font(b, sc, fs, width);
              const float start = std::clamp(11.0f * sc, fs * 0.85f, fs * 1.1f);
              CAPTURE(b.title);
              CAPTURE(b.detail);
              CHECK_MESSAGE(f.fits, "clipped: drawn at 8 px, still wider or taller than the box");
              if (k == 1.0f) CHECK_MESSAGE(f.title_px >= 0.7f * start, "shrunk to " << f.title_px << " px from " << start << " px");
              ++boxes;
              if (f.title_px / start < smallest_ratio)
                smallest_ratio = f.title_px / start, smallest = f.title_px,
                smallest_at = b.title + " at " + std::to_string(static_cast<int>(w)) + " px, size " + std::to_string(k);
            }
          }
        }
      }
      MESSAGE(lang << ": " << boxes << " boxes measured; the most shrunk: " << smallest << " px (" << smallest_ratio
                   << " of its size), " << smallest_at);
    }
    ImGui::DestroyContext(ctx);
  }
  viewer::i18n::set_language("en");
}

TEST_CASE("the diagrams' figure for slides keeps the paper's English; the tab's words follow the language") {
  const deberta::Model m = deberta::load_model(source("notebooks_data/models/deberta-tiny"));
  const deberta::ResolvedAttention att = attention_of(m.config);
  REQUIRE(viewer::i18n::set_language("ja"));
  const viewer::Diagram english = viewer::pipeline_diagram(m.config, att, 9, true, true);
  const viewer::Diagram ja = viewer::pipeline_diagram(m.config, att, 9, true, true, true);
  viewer::i18n::set_language("en");
  const viewer::Diagram en_tab = viewer::pipeline_diagram(m.config, att, 9, true, true, true);
  REQUIRE(english.boxes.size() == ja.boxes.size());
  CHECK(english.boxes[0].title == "Embedding");
  CHECK(ja.boxes[0].title == "埋め込み");
  CHECK(english.caption.find("Click a box") == 0);
  CHECK(ja.caption.find("Click a box") == std::string::npos);
  // The same layout in both: only the words differ.
  for (size_t b = 0; b < english.boxes.size(); ++b) {
    CHECK(english.boxes[b].x == ja.boxes[b].x);
    CHECK(english.boxes[b].w == ja.boxes[b].w);
    CHECK(english.boxes[b].target == ja.boxes[b].target);
    CHECK(english.boxes[b].title == en_tab.boxes[b].title);  // English in the tab is the figure's English
  }
  // Symbols and shapes stay as the paper writes them.
  std::string all;
  for (const auto& b : ja.boxes) all += b.title + "\n" + b.detail + "\n";
  CAPTURE(all);
  for (const char* kept : {"Q_c[i] K_c[j]ᵀ", "K_r = P W_{k,r}", "I_0 = H + P", "I_{t+1}", "softmax(Ã / √(3d))", "2k = 64"})
    CHECK(all.find(kept) != std::string::npos);
}
