#!/bin/sh
# The SentencePiece Unigram vocabulary of deberta-tiny-multilingual (issue 40): 16,000 pieces with
# byte fallback (no character becomes [UNK]), trained on corpus_multilingual/train.txt
# (prepare_multilingual_corpus.py). Ids as deberta-tiny's: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3,
# [MASK]=4 (user-defined), then <0x00>…<0xFF> = 5…260. Identity normalisation.
set -e
cd "$(dirname "$0")"
[ -f corpus_multilingual/train.txt ] || xz -dk corpus_multilingual/train.txt.xz
mkdir -p vocab_multilingual
spm_train --input=corpus_multilingual/train.txt --model_prefix=vocab_multilingual/spm --model_type=unigram \
  --vocab_size=16000 --character_coverage=0.9995 --byte_fallback=true --normalization_rule_name=identity \
  --pad_id=0 --bos_id=1 --eos_id=2 --unk_id=3 \
  --pad_piece='[PAD]' --bos_piece='[CLS]' --eos_piece='[SEP]' --unk_piece='[UNK]' \
  --user_defined_symbols='[MASK]' --num_threads=1 --seed_sentencepiece_size=1000000 \
  --random_seed=1234
