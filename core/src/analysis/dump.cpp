#include "deberta/dump.h"

#include "deberta/heads.h"

namespace deberta {

namespace {

std::vector<int64_t> row_of(const TensorMap& tensors, const std::string& name, const std::string& source,
                            int64_t expected_n) {
  auto it = tensors.find(name);
  if (it == tensors.end()) return {};
  const Tensor& t = it->second;
  if (!dtype_is_integer(t.dtype))
    throw InvalidInput(source + ": '" + name + "' must be an integer tensor, found " + dtype_name(t.dtype));
  const bool ok = (t.shape.size() == 2 && t.shape[0] == 1) || t.shape.size() == 1;
  if (!ok) throw InvalidInput(source + ": '" + name + "' must have shape [1, N] (batch of one), found " + t.shape_string());
  if (expected_n >= 0 && t.numel() != expected_n)
    throw InvalidInput(source + ": '" + name + "' has " + std::to_string(t.numel()) + " entries, input_ids " +
                std::to_string(expected_n));
  return t.i;
}

Tensor stack_heads(const std::vector<Matrix>& heads) {
  const int64_t h = static_cast<int64_t>(heads.size()), r = heads[0].rows(), c = heads[0].cols();
  Tensor t;
  t.dtype = DType::F64;
  t.shape = {h, r, c};
  for (const Matrix& m : heads) t.f.insert(t.f.end(), m.data(), m.data() + m.size());
  return t;
}

Tensor row_tensor(const std::vector<int64_t>& v) {
  Tensor t;
  t.dtype = DType::I64;
  t.shape = {1, static_cast<int64_t>(v.size())};
  t.i = v;
  return t;
}

void put_attention(TensorMap* out, const std::string& p, const AttentionTrace& a) {
  for (Term t : kAllTerms)
    if (!a.terms[t].empty()) (*out)[p + term_name(t)] = stack_heads(a.terms[t]);
  if (!a.logits.empty()) (*out)[p + "attn_logits"] = stack_heads(a.logits);
  if (!a.probs.empty()) (*out)[p + "attn_probs"] = stack_heads(a.probs);
}

}  // namespace

Inputs inputs_from_tensors(const TensorMap& tensors, const std::string& source) {
  if (!tensors.count("input_ids")) throw InvalidInput(source + ": no 'input_ids' tensor");
  Inputs in;
  in.input_ids = row_of(tensors, "input_ids", source, -1);
  in.attention_mask = row_of(tensors, "attention_mask", source, in.size());
  in.token_type_ids = row_of(tensors, "token_type_ids", source, in.size());
  return in;
}

std::vector<int64_t> masked_positions_from_tensors(const TensorMap& tensors, const std::string& source) {
  auto it = tensors.find("mlm.masked_positions");
  if (it == tensors.end()) return {};
  if (!dtype_is_integer(it->second.dtype) || it->second.shape.size() != 1)
    throw Error(source + ": 'mlm.masked_positions' must be an integer tensor of shape [M]");
  // Distinct and inside the input, checked before any row is computed (issue 44, class 3: one
  // position given 40,000 times cost 2.5 GB of logits).
  const auto ids = tensors.find("input_ids");
  const int64_t n = ids == tensors.end() || ids->second.shape.empty() ? 0 : ids->second.shape.back();
  try {
    check_mask_positions(it->second.i, n);
  } catch (const InvalidInput& e) {
    throw InvalidInput(source + ": " + e.what());
  }
  return it->second.i;
}

TensorMap trace_to_tensors(const Model& model, const ForwardTrace& trace, const std::vector<int64_t>& masked_positions,
                           bool full_logits) {
  TensorMap out;
  const Inputs& in = trace.inputs;
  const int64_t N = in.size();
  out["input_ids"] = row_tensor(in.input_ids);
  out["attention_mask"] = row_tensor(in.attention_mask.empty() ? std::vector<int64_t>(N, 1) : in.attention_mask);
  out["token_type_ids"] = row_tensor(in.token_type_ids.empty() ? std::vector<int64_t>(N, 0) : in.token_type_ids);
  out["embedding_output"] = Tensor::from_matrix(trace.embedding_output);
  const SequenceContext& s = trace.context;
  if (model.config.relative_attention) {
    out["rel_embeddings"] = Tensor::from_matrix(s.rel_table);
    out["rel_pos"] = Tensor::from_index(s.rel_pos);
    out["c2p_row"] = Tensor::from_index(s.c2p_row);
    out["p2c_row"] = Tensor::from_index(s.p2c_row);
  }
  for (size_t l = 0; l < trace.layers.size(); ++l) {
    const std::string p = "layer." + std::to_string(l) + ".";
    put_attention(&out, p, trace.layers[l].attention);
    out[p + "output"] = Tensor::from_matrix(trace.layers[l].output);
    if (trace.layers[l].output_pre_conv.size() > 0)
      out[p + "output_pre_conv"] = Tensor::from_matrix(trace.layers[l].output_pre_conv);
  }
  if (trace.emd && !masked_positions.empty()) {  // the decoder stage exists to decode masked positions
    const EMDTrace& e = *trace.emd;
    out["emd.position_embeddings"] = Tensor::from_matrix(e.position_embeddings);
    out["emd.kv_states"] = Tensor::from_matrix(e.kv_states);
    out["emd.query_states.0"] = Tensor::from_matrix(e.query_states0);
    for (size_t t = 0; t < e.passes.size(); ++t) {
      out["emd.output." + std::to_string(t)] = Tensor::from_matrix(e.passes[t].output);
      if (!e.passes[t].attention.probs.empty())
        out["emd.attn_probs." + std::to_string(t)] = stack_heads(e.passes[t].attention.probs);
    }
  }
  if (!masked_positions.empty() && trace.decoder) {
    const Matrix& hidden = trace.decoder_output();
    Tensor positions;
    positions.dtype = DType::I64;
    positions.shape = {static_cast<int64_t>(masked_positions.size())};
    positions.i = masked_positions;
    out["mlm.masked_positions"] = positions;
    out["mlm.masked_logits"] = Tensor::from_matrix(mlm_logits(model, hidden, masked_positions));
    if (full_logits) {
      std::vector<int64_t> all(N);
      for (int64_t n = 0; n < N; ++n) all[n] = n;
      out["mlm.logits"] = Tensor::from_matrix(mlm_logits(model, hidden, all));
    }
  }
  for (auto& [name, t] : head_tensors(model, trace)) out[name] = std::move(t);
  return out;
}

}  // namespace deberta
