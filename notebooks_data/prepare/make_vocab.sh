#!/bin/sh
# Train the SentencePiece unigram vocabulary of deberta-tiny (8000 pieces) on corpus/train.txt.
# Ids: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3 (control pieces), [MASK]=4 (user-defined piece, so the
# literal text "[MASK]" is one token). Identity normalisation (the corpus is ASCII already);
# extra whitespace is collapsed and a "▁" dummy prefix is added, as in DeBERTa-v2/v3's spm.
set -e
cd "$(dirname "$0")/.."  # notebooks_data/
mkdir -p vocab
spm_train --input=corpus/train.txt --model_prefix=vocab/spm --model_type=unigram \
  --vocab_size=8000 --character_coverage=1.0 --normalization_rule_name=identity \
  --pad_id=0 --bos_id=1 --eos_id=2 --unk_id=3 \
  --pad_piece='[PAD]' --bos_piece='[CLS]' --eos_piece='[SEP]' --unk_piece='[UNK]' \
  --user_defined_symbols='[MASK]' --num_threads=1 --seed_sentencepiece_size=1000000 \
  --random_seed=1234
