// tokenizer_spm.cpp — DeBERTa v2/v3: a SentencePiece model (`spm.model`) through libsentencepiece,
// with the conventions of Hugging Face's DebertaV2Tokenizer: special tokens named by the side
// files (else the spm pieces [CLS]/[SEP]/[PAD]/[UNK], else spm's bos/eos/pad/unk), [MASK] as an
// added token when the spm vocabulary lacks it, and pieces shown with "▁" as a space.
#include "io/tokenizer_detail.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace deberta::tokenizer_detail {

namespace {

constexpr uint64_t kMaxModelBytes = 64ull << 20;
/// libsentencepiece builds a trie of the pieces by recursion one frame a byte of the longest piece:
/// a 150,000-byte piece overflowed an 8 MB stack. SentencePiece's trainer makes pieces of at most
/// 16 characters (its own limit is 512); user-defined pieces are words or tags.
constexpr uint64_t kMaxPieceBytes = 4096;
constexpr uint64_t kMaxAllPieceBytes = 16ull << 20;
const std::string kWordStart = "\xE2\x96\x81";  // U+2581 "▁"

/// The protobuf wire format, as far as spm.model's pieces need it: a message is a run of fields,
/// each a varint key (field number << 3 | wire type) and a value (varint, 8 bytes, a
/// varint-length-prefixed run of bytes, or 4 bytes).
struct WireReader {
  const std::string& bytes;
  size_t at;
  size_t end;

  bool varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64 && at < end; shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes[at++]);
      *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  /// Reads one field's key and skips or delimits its value: a length-delimited value is
  /// [*begin, *begin + *length). False when the message is malformed.
  bool field(uint32_t* number, uint32_t* wire, size_t* begin, uint64_t* length) {
    uint64_t key = 0, n = 0;
    if (!varint(&key)) return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<uint32_t>(key & 7);
    *begin = at;
    *length = 0;
    switch (*wire) {
      case 0: return varint(&n);
      case 1: n = 8; break;
      case 2: if (!varint(&n)) return false; *begin = at; *length = n; break;
      case 5: n = 4; break;
      default: return false;  // groups (3, 4) are not in sentencepiece_model.proto
    }
    if (n > end - at) return false;
    at += static_cast<size_t>(n);
    return true;
  }
};

/// Refuses a model whose pieces (ModelProto field 1, each a SentencePiece whose field 1 is the
/// piece) are longer than libsentencepiece can index, before it sees them. The message names the
/// file, the piece's index (its id) and the limit.
void check_piece_lengths(const std::string& bytes, const std::string& path) {
  const std::string unparsable = path + ": not a SentencePiece model (the file does not parse as a SentencePiece ModelProto)";
  WireReader model{bytes, 0, bytes.size()};
  uint64_t index = 0, total = 0;
  while (model.at < model.end) {
    uint32_t number = 0, wire = 0;
    size_t begin = 0;
    uint64_t length = 0;
    if (!model.field(&number, &wire, &begin, &length)) throw Error(unparsable);
    if (number != 1 || wire != 2) continue;
    WireReader piece{bytes, begin, begin + static_cast<size_t>(length)};
    while (piece.at < piece.end) {
      uint32_t n = 0, w = 0;
      size_t b = 0;
      uint64_t len = 0;
      if (!piece.field(&n, &w, &b, &len)) throw Error(unparsable);
      if (n != 1 || w != 2) continue;
      if (len > kMaxPieceBytes)
        throw Error(path + ": piece " + std::to_string(index) + " is " + std::to_string(len) +
                    " bytes long, more than the limit of " + std::to_string(kMaxPieceBytes) + " bytes a piece");
      total += len;
      if (total > kMaxAllPieceBytes)
        throw Error(path + ": the pieces up to piece " + std::to_string(index) + " hold more than the limit of " +
                    std::to_string(kMaxAllPieceBytes) + " bytes of pieces in all");
    }
    ++index;
  }
}

class SentencePieceTokenizer final : public BasicTokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& model_dir) {
    const std::string path = (std::filesystem::path(model_dir) / "spm.model").string();
    // Regular files only and the size before reading: spm.model may be a FIFO or /dev/zero.
    std::string bytes = read_whole_file(path, kMaxModelBytes);
    if (bytes.empty()) throw Error(path + ": empty file, not a SentencePiece model");
    check_piece_lengths(bytes, path);
    const auto status = sp_.LoadFromSerializedProto(bytes);
    if (!status.ok()) {
      // libsentencepiece's message names its own source line; say what it means instead.
      const std::string why = status.ToString().find("ParseFromArray") != std::string::npos
                                  ? "the file does not parse as a SentencePiece ModelProto"
                                  : status.ToString();
      throw Error(path + ": not a SentencePiece model (" + why + ")");
    }
    if (sp_.GetPieceSize() <= 0) throw Error(path + ": SentencePiece model without pieces");
    path_ = path;
    // For sp_glued_, parsed by prepare(): a second normalizer_spec (ModelProto field 3) appended to
    // the bytes is merged into the first, as protobuf merges a repeated embedded message, and sets
    // its add_dummy_prefix (field 3) false.
    glued_bytes_ = std::move(bytes);
    glued_bytes_.append("\x1A\x02\x18\x00", 4);
    specials_ = SpecialTokens::read(model_dir);
    resolve_specials(path, sp_.bos_id(), sp_.eos_id(), sp_.pad_id(), sp_.unk_id());
  }

  std::string kind() const override { return "sentencepiece"; }

  /// The same model without the dummy prefix, for text glued to a special token (the constructor
  /// keeps its bytes). Parsed once, on the first call (from `encode` or the caller's own step);
  /// the bytes are freed then.
  void prepare() const override {
    std::call_once(glued_once_, [this] {
      if (!sp_glued_.LoadFromSerializedProto(glued_bytes_).ok())
        throw Error(path_ + ": not a SentencePiece model (its normalizer_spec does not take add_dummy_prefix)");
      std::string().swap(glued_bytes_);
    });
  }

 protected:
  std::vector<int64_t> encode_plain(const std::string& text) const override { return encode_with(sp_, text); }
  /// Text glued to a special token ("[MASK].", "[MASK]ing") continues the word: encoded without
  /// the dummy prefix, as SentencePiece encodes it inside the whole text ("▁the▁[MASK]." gives
  /// "[MASK]" "." with [MASK] a user-defined piece, how the bundled models' training and golden
  /// texts were tokenized). The dummy prefix would put a "▁" before it (a lone "▁" piece, or
  /// "▁ing" for "ing"), a token a model trained on whole sentences never sees there. Text after
  /// a special token that starts with a space starts a word: the dummy prefix stays.
  std::vector<int64_t> encode_plain_at(const std::string& text, bool at_start) const override {
    const bool glued = !at_start && !text.empty() && text[0] != ' ' && text[0] != '\t' && text[0] != '\n';
    if (glued) prepare();
    return encode_with(glued ? sp_glued_ : sp_, text);
  }
  std::vector<int64_t> encode_with(const sentencepiece::SentencePieceProcessor& sp, const std::string& text) const {
    std::vector<int> pieces;
    const auto status = sp.Encode(text, &pieces);
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
  mutable sentencepiece::SentencePieceProcessor sp_glued_;  ///< sp_ without the dummy prefix (prepare())
  mutable std::once_flag glued_once_;
  mutable std::string glued_bytes_;  ///< spm.model's bytes + the normalizer_spec without the dummy prefix, until parsed
  std::string path_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& model_dir) {
  return std::make_unique<SentencePieceTokenizer>(model_dir);
}

}  // namespace deberta::tokenizer_detail
