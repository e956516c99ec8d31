// tokenizer_spm.cpp — DeBERTa v2/v3: a SentencePiece model (`spm.model`) through libsentencepiece,
// with the conventions of Hugging Face's DebertaV2Tokenizer: special tokens named by the side
// files (else the spm pieces [CLS]/[SEP]/[PAD]/[UNK], else spm's bos/eos/pad/unk), [MASK] as an
// added token when the spm vocabulary lacks it, and pieces shown with "▁" as a space.
#include "io/tokenizer_detail.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace deberta::tokenizer_detail {

namespace {

constexpr uint64_t kMaxModelBytes = 64ull << 20;
const std::string kWordStart = "\xE2\x96\x81";  // U+2581 "▁"

class SentencePieceTokenizer final : public BasicTokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& model_dir) {
    const std::string path = (std::filesystem::path(model_dir) / "spm.model").string();
    // Regular files only and the size before reading: spm.model may be a FIFO or /dev/zero.
    const std::string bytes = read_whole_file(path, kMaxModelBytes);
    if (bytes.empty()) throw Error(path + ": empty file, not a SentencePiece model");
    const auto status = sp_.LoadFromSerializedProto(bytes);
    if (!status.ok()) {
      // libsentencepiece's message names its own source line; say what it means instead.
      const std::string why = status.ToString().find("ParseFromArray") != std::string::npos
                                  ? "the file does not parse as a SentencePiece ModelProto"
                                  : status.ToString();
      throw Error(path + ": not a SentencePiece model (" + why + ")");
    }
    if (sp_.GetPieceSize() <= 0) throw Error(path + ": SentencePiece model without pieces");
    specials_ = SpecialTokens::read(model_dir);
    resolve_specials(path, sp_.bos_id(), sp_.eos_id(), sp_.pad_id(), sp_.unk_id());
  }

  std::string kind() const override { return "sentencepiece"; }

 protected:
  std::vector<int64_t> encode_plain(const std::string& text) const override {
    std::vector<int> pieces;
    const auto status = sp_.Encode(text, &pieces);
    if (!status.ok()) throw Error("sentencepiece: " + status.ToString());
    std::vector<int64_t> ids;
    ids.reserve(pieces.size());
    for (int id : pieces) ids.push_back(sp_.IsUnknown(id) ? unk_id_ : id);
    return ids;
  }
  int64_t base_size() const override { return sp_.GetPieceSize(); }
  std::string base_piece(int64_t id) const override { return sp_.IdToPiece(static_cast<int>(id)); }
  std::string base_display(int64_t id) const override {
    std::string p = base_piece(id);
    for (size_t at = p.find(kWordStart); at != std::string::npos; at = p.find(kWordStart, at + 1))
      p.replace(at, kWordStart.size(), " ");
    return p;
  }
  std::optional<int64_t> base_id(const std::string& piece) const override {
    const int id = sp_.PieceToId(piece);
    if (id >= 0 && id < sp_.GetPieceSize() && sp_.IdToPiece(id) == piece) return id;
    return std::nullopt;
  }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& model_dir) {
  return std::make_unique<SentencePieceTokenizer>(model_dir);
}

}  // namespace deberta::tokenizer_detail
