#!/bin/sh
# The SentencePiece Unigram vocabulary of deberta-tiny-multilingual: 16,000 pieces with byte fallback
# (no character becomes [UNK]). Ids as deberta-tiny's: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3, [MASK]=4
# (user-defined), then <0x00>…<0xFF> = 5…260. Identity normalisation.
#   make_vocab_multilingual.sh            version 2 (issue 54): trained on
#                                         corpus_multilingual/train_everyday.txt (prepare_everyday_corpus.py:
#                                         Debian's text + the everyday sentences), character coverage 0.99995 so
#                                         that the common characters of everyday text (館, 駅, the 녕 of 안녕)
#                                         are pieces of their own, not bytes
#   make_vocab_multilingual.sh --v1       version 1 (issue 40): corpus_multilingual/train.txt, coverage 0.9995
# Output: vocab_multilingual/v2/spm.{model,vocab} (version 1: vocab_multilingual/spm.*; OUT=dir to
# write elsewhere).
set -e
cd "$(dirname "$0")/.."  # notebooks_data/
out=${OUT:-vocab_multilingual/v2}
if [ "${1:-}" = "--v1" ]; then
  out=${OUT:-vocab_multilingual}
  [ -f corpus_multilingual/train.txt ] || xz -dk corpus_multilingual/train.txt.xz
  input=corpus_multilingual/train.txt coverage=0.9995
else
  [ -f corpus_multilingual/train_everyday.txt ] || /usr/bin/python3 prepare/prepare_everyday_corpus.py
  input=corpus_multilingual/train_everyday.txt coverage=0.99995
fi
mkdir -p "$out"
spm_train --input="$input" --model_prefix="$out/spm" --model_type=unigram \
  --vocab_size=16000 --character_coverage="$coverage" --byte_fallback=true --normalization_rule_name=identity \
  --pad_id=0 --bos_id=1 --eos_id=2 --unk_id=3 \
  --pad_piece='[PAD]' --bos_piece='[CLS]' --eos_piece='[SEP]' --unk_piece='[UNK]' \
  --user_defined_symbols='[MASK]' --num_threads=1 --seed_sentencepiece_size=1000000 \
  --random_seed=1234
