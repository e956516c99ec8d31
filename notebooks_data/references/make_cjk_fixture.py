#!/usr/bin/python3
"""A model whose tokenizer pieces are Korean, Japanese and Chinese, for the viewer's font test
(issue 30: Hangul, Kana and Han must render in token labels).

    /usr/bin/python3 notebooks_data/references/make_cjk_fixture.py

Writes notebooks_data/fixtures/cjk_model/: spm.model (a SentencePiece unigram model trained here
on the sentences below, character coverage 1.0), config.json and model.safetensors (the shape of
golden/v3_emd — 3 layers, H 32, EMD — with its weights, and word embeddings and LM bias drawn at
random for the new vocabulary: the numbers mean nothing, the pieces are what is tested) and
tokenizer_config.json. Deterministic (seeded); needs python3-sentencepiece, python3-numpy and python3-torch.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import sentencepiece as spm
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # notebooks_data/
from references.make_fixtures import read_safetensors, write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
OUT = os.path.join(HERE, "fixtures", "cjk_model")
BASE = os.path.join(HERE, "golden", "v3_emd")

# Short everyday sentences in each script, written for this fixture.
SENTENCES = [
    # Korean (Hangul)
    "나는 오늘 아침에 학교에 갔다.", "우리는 도서관에서 책을 읽는다.", "날씨가 좋아서 공원에 산책을 갔다.",
    "그는 매일 커피를 마신다.", "이 문장은 한국어로 쓰였다.", "언어 모델은 다음 단어를 예측한다.",
    "주의 집중은 상대 위치를 본다.", "어머니는 부엌에서 요리를 하신다.", "친구와 함께 영화를 보았다.",
    "서울은 한국의 수도이다.", "강아지가 마당에서 뛰어논다.", "겨울에는 눈이 많이 온다.",
    # Japanese (Kana and Kanji)
    "私は毎朝コーヒーを飲みます。", "今日はとても良い天気です。", "図書館で本を読みました。",
    "東京は日本の首都です。", "猫が窓のそばで寝ています。", "言語モデルは次の単語を予測します。",
    "注意は相対的な位置を見ます。", "友達と一緒に映画を見ました。", "冬には雪がたくさん降ります。",
    "ひらがなとカタカナを勉強しています。", "駅まで歩いて十分かかります。", "この文は日本語で書かれています。",
    # Chinese (Han)
    "我今天早上去了学校。", "我们在图书馆看书。", "天气很好，我们去公园散步。", "他每天都喝咖啡。",
    "北京是中国的首都。", "语言模型预测下一个词。", "注意力关注相对位置。", "妈妈在厨房做饭。",
    "我和朋友一起看电影。", "冬天下了很多雪。", "这句话是用中文写的。", "小狗在院子里跑来跑去。",
]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES * 4), model_prefix=os.path.join(OUT, "spm"), model_type="unigram",
        vocab_size=300, character_coverage=1.0, pad_id=0, unk_id=3, bos_id=1, eos_id=2,
        pad_piece="[PAD]", unk_piece="[UNK]", bos_piece="[CLS]", eos_piece="[SEP]",
        user_defined_symbols=["[MASK]"], hard_vocab_limit=False, num_threads=1, seed_sentencepiece_size=100000,
        minloglevel=2)
    os.remove(os.path.join(OUT, "spm.vocab"))
    sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, "spm.model"))
    vocab = sp.get_piece_size()
    config = json.load(open(os.path.join(BASE, "config.json")))
    config["vocab_size"] = vocab
    config["architectures"] = ["DebertaV2ForMaskedLM"]
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")
    weights = read_safetensors(os.path.join(BASE, "model.safetensors"))
    rng = np.random.default_rng(30)
    H = config["hidden_size"]
    weights["embeddings.word_embeddings.weight"] = torch.from_numpy(rng.normal(0, 0.5, (vocab, H)))
    weights["lm_predictions.lm_head.bias"] = torch.from_numpy(rng.normal(0, 0.1, (vocab,)))
    write_safetensors(os.path.join(OUT, "model.safetensors"), weights)
    with open(os.path.join(OUT, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "vocab_type": "spm", "split_by_punct": False,
                   "bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "[UNK]", "sep_token": "[SEP]",
                   "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}, f, indent=2)
        f.write("\n")
    # The web edition reads tokenizer.json (no libsentencepiece in WebAssembly): the same pieces.
    subprocess.check_call([sys.executable, os.path.join(HERE, "prepare", "make_web_tokenizer.py"), OUT])
    pieces = sp.encode("나는 책을 읽는다. 私は本を読みます。我在看书。", out_type=str)
    print(f"{OUT}: vocab {vocab}; pieces of a mixed sentence: {' '.join(pieces)}")


if __name__ == "__main__":
    main()
