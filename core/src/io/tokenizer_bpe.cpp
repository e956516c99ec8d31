// tokenizer_bpe.cpp — DeBERTa v1: GPT-2 byte-level BPE from `vocab.json` + `merges.txt`.
//
// 1. Pre-tokenise with GPT-2's pattern (PCRE2 with Unicode properties):
//      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// 2. Spell each chunk's UTF-8 bytes in GPT-2's byte-to-unicode alphabet (printable bytes stand for
//    themselves, the others — space, control bytes, … — map to U+0100 onwards: space → "Ġ").
// 3. Merge adjacent symbols, always the pair with the lowest merge rank first, until none applies.
// 4. Look each symbol up in the vocabulary; a missing one becomes [UNK].
#include "io/tokenizer_detail.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <queue>
#include <sstream>
#include <unordered_map>

namespace deberta::tokenizer_detail {

namespace {

const char kGpt2Pattern[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// GPT-2's bytes_to_unicode: byte → UTF-8 spelling of its stand-in code point.
const std::array<std::string, 256>& byte_alphabet() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = encode_utf8(printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++));
    }
    return t;
  }();
  return table;
}

/// The inverse: stand-in code point → byte.
const std::unordered_map<char32_t, unsigned char>& byte_alphabet_inverse() {
  static const std::unordered_map<char32_t, unsigned char> inverse = [] {
    std::unordered_map<char32_t, unsigned char> m;
    for (int b = 0; b < 256; ++b) {
      size_t pos = 0;
      m[next_code_point(byte_alphabet()[b], &pos)] = static_cast<unsigned char>(b);
    }
    return m;
  }();
  return inverse;
}

struct Pcre2CodeFree {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};
struct Pcre2MatchFree {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

class ByteLevelBpe final : public BasicTokenizer {
 public:
  ByteLevelBpe(BpeModel model, SpecialTokens specials, const std::string& source, std::string kind)
      : vocab_(std::move(model.vocab)), kind_(std::move(kind)) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    regex_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                               &err, &offset, nullptr));
    if (!regex_) throw Error("GPT-2 pre-tokenisation pattern does not compile (PCRE2 error " + std::to_string(err) + ")");
    for (const auto& [piece, id] : vocab_) {
      if (id < 0) throw Error(source + ": negative id for \"" + piece + "\"");
      by_id_[id] = piece;
    }
    for (size_t r = 0; r < model.merges.size(); ++r)
      ranks_.emplace(model.merges[r].first + " " + model.merges[r].second, static_cast<int64_t>(r));
    specials_ = std::move(specials);
    resolve_specials(source);
  }

  std::string kind() const override { return kind_; }

 protected:
  std::vector<int64_t> encode_plain(const std::string& text) const override {
    std::vector<int64_t> ids;
    std::unique_ptr<pcre2_match_data, Pcre2MatchFree> match(pcre2_match_data_create_from_pattern(regex_.get(), nullptr));
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    for (size_t at = 0; at < text.size();) {
      const int rc = pcre2_match(regex_.get(), subject, text.size(), at, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
      size_t begin = text.size(), end = text.size();
      if (rc > 0) {
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
        begin = ov[0];
        end = ov[1];
      }
      if (begin > at) add_chunk(text.substr(at, begin - at), &ids);  // cannot happen with this pattern
      if (end <= begin) break;
      add_chunk(text.substr(begin, end - begin), &ids);
      at = end;
    }
    return ids;
  }
  int64_t base_size() const override { return by_id_.empty() ? 0 : by_id_.rbegin()->first + 1; }
  std::string base_piece(int64_t id) const override {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? "<id " + std::to_string(id) + ">" : it->second;
  }
  // Maps the byte alphabet back to bytes; a piece that is part of a multi-byte character (not
  // UTF-8 on its own) is shown as its <0xNN> bytes.
  std::string base_display(int64_t id) const override {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return "<id " + std::to_string(id) + ">";
    const std::string& piece = it->second;
    std::string bytes;
    for (size_t pos = 0; pos < piece.size();) {
      const char32_t cp = next_code_point(piece, &pos);
      auto b = byte_alphabet_inverse().find(cp);
      if (b == byte_alphabet_inverse().end()) return piece;  // not a byte-level piece (e.g. "[CLS]")
      bytes += static_cast<char>(b->second);
    }
    if (is_utf8(bytes)) return bytes;
    std::string shown;
    for (unsigned char c : bytes) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", c);
      shown += buf;
    }
    return shown;
  }
  std::optional<int64_t> base_id(const std::string& piece) const override {
    auto it = vocab_.find(piece);
    if (it == vocab_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void add_chunk(const std::string& chunk, std::vector<int64_t>* ids) const {
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      if (auto it = cache_.find(chunk); it != cache_.end()) {
        ids->insert(ids->end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const std::vector<std::string> symbols = merge(chunk);
    std::vector<int64_t> out;
    for (const std::string& s : symbols) {
      auto it = vocab_.find(s);
      out.push_back(it == vocab_.end() ? unk_id_ : it->second);
    }
    ids->insert(ids->end(), out.begin(), out.end());
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() > 100000) cache_.clear();
    cache_.emplace(chunk, std::move(out));
  }

  /// Step 3 for one chunk. Each pass merges every occurrence of the lowest-ranked adjacent pair,
  /// left to right (as GPT-2's bpe()); the candidate pairs wait in a priority queue ordered by
  /// (rank, position), so a chunk of n bytes costs O(n log n), not O(n^2) rescans.
  std::vector<std::string> merge(const std::string& chunk) const {
    const size_t n = chunk.size();
    std::vector<std::string> sym(n);
    std::vector<size_t> next(n), prev(n);
    std::vector<uint32_t> version(n, 0);
    std::vector<char> alive(n, 1);
    for (size_t k = 0; k < n; ++k) {
      sym[k] = byte_alphabet()[static_cast<unsigned char>(chunk[k])];
      next[k] = k + 1;  // n = none
      prev[k] = k == 0 ? n : k - 1;
    }
    struct Candidate {
      int64_t rank;
      size_t left, right;
      uint32_t left_version, right_version;
      bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    auto push = [&](size_t left) {
      if (left >= n || next[left] >= n) return;
      const size_t right = next[left];
      auto it = ranks_.find(sym[left] + " " + sym[right]);
      if (it != ranks_.end()) queue.push({it->second, left, right, version[left], version[right]});
    };
    auto valid = [&](const Candidate& c) {
      return alive[c.left] && alive[c.right] && next[c.left] == c.right && version[c.left] == c.left_version &&
             version[c.right] == c.right_version;
    };
    for (size_t k = 0; k + 1 < n; ++k) push(k);
    std::vector<Candidate> pass;
    while (!queue.empty()) {
      // One pass: every queued occurrence of the best pair, taken before any of them is merged
      // (pairs the merges create wait for the next pass, whatever their rank).
      const int64_t rank = queue.top().rank;
      pass.clear();
      while (!queue.empty() && queue.top().rank == rank) {
        pass.push_back(queue.top());
        queue.pop();
      }
      for (const Candidate& c : pass) {
        if (!valid(c)) continue;  // stale: a neighbour was merged since it was queued
        sym[c.left] += sym[c.right];
        sym[c.right].clear();
        alive[c.right] = 0;
        ++version[c.left];
        next[c.left] = next[c.right];
        if (next[c.left] < n) prev[next[c.left]] = c.left;
        if (prev[c.left] < n) push(prev[c.left]);
        push(c.left);
      }
    }
    std::vector<std::string> out;
    for (size_t k = 0; k < n; k = next[k]) out.push_back(std::move(sym[k]));
    return out;
  }

  std::map<std::string, int64_t> vocab_;
  std::map<int64_t, std::string> by_id_;
  std::unordered_map<std::string, int64_t> ranks_;
  std::string kind_;
  std::unique_ptr<pcre2_code, Pcre2CodeFree> regex_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

std::string read_file(const std::filesystem::path& path) { return read_whole_file(path.string(), kMaxTokenizerFileBytes); }

}  // namespace

std::unique_ptr<Tokenizer> make_byte_level_bpe(BpeModel model, SpecialTokens specials, const std::string& source,
                                               const std::string& kind) {
  return std::make_unique<ByteLevelBpe>(std::move(model), std::move(specials), source, kind);
}

std::unique_ptr<Tokenizer> load_gpt2_bpe(const std::string& model_dir) {
  const std::filesystem::path dir(model_dir);
  BpeModel model;
  const std::string vocab_path = (dir / "vocab.json").string();
  const std::string vocab_text = read_file(vocab_path);
  if (!is_utf8(vocab_text)) throw Error(vocab_path + ": not valid UTF-8");
  check_json_depth(vocab_text, vocab_path);
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(vocab_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(vocab_path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!vocab.is_object()) throw Error(vocab_path + ": expected an object {token: id}");
  for (const auto& [piece, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0)
      throw Error(vocab_path + ": id of \"" + piece + "\" is not a non-negative integer");
    model.vocab[piece] = id.get<int64_t>();
  }
  const std::string merges_path = (dir / "merges.txt").string();
  const std::string merges_text = read_file(merges_path);
  if (!is_utf8(merges_text)) throw Error(merges_path + ": not valid UTF-8");
  std::istringstream lines(merges_text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const auto space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos)
      throw Error(merges_path + ":" + std::to_string(number) + ": expected two symbols separated by one space");
    model.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return make_byte_level_bpe(std::move(model), SpecialTokens::read(model_dir), vocab_path, "gpt2-bpe");
}

}  // namespace deberta::tokenizer_detail
