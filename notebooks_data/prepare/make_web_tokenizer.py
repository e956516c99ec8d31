#!/usr/bin/env python3
"""Writes tokenizer.json beside the bundled model's spm.model (issue 30: the web edition).

libsentencepiece does not build for WebAssembly, so the web edition reads Hugging Face's
tokenizer.json instead: the same Unigram vocabulary and scores, Metaspace pre-tokenisation, and
the five special tokens as added tokens. A model trained with byte_fallback (pieces <0x00> …
<0xFF>, as the multilingual model's) gets "byte_fallback": true and a ByteFallback decoder, so a
character no piece covers becomes its UTF-8 bytes there as in spm.model. tests/test_tokenizer.cpp
checks that both files give identical ids on every line of corpus/heldout.txt, and
tests/test_tokenizer_hf.cpp that the multilingual one does on 2,100 lines of seven languages
(except where two segmentations tie: the same pieces in another order). Strip removes any
whitespace at the end of a line (SentencePiece only spaces), and Hugging Face matches literal
"<0x41>" text to a byte piece: lines with either tokenize differently (docs/loaders.md §7).

Text glued to [MASK] ("the [MASK].") is tokenized as SentencePiece tokenizes the whole text, with
no "▁" after [MASK] (issue 59, class 4): the library tokenizes the text after an added token as a
segment of its own, so Metaspace's prepend_scheme is "first" (a "▁" is prepended at the start of
the text only; a space after [MASK] still becomes "▁") and Strip strips the right end only (a
left Strip would take the space of " sat" after [MASK] before Metaspace sees it).

    /usr/bin/python3 notebooks_data/prepare/make_web_tokenizer.py [MODEL_DIR]   (default models/deberta-tiny; run for
    models/deberta-tiny-512 too, the model the desktop and the web edition open by default)
"""
import json
import os
import sys

import sentencepiece as spm

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "models", "deberta-tiny")
    sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "spm.model"))
    size = sp.get_piece_size()
    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    added = []
    for token in specials:
        token_id = sp.piece_to_id(token)
        if sp.id_to_piece(token_id) != token:
            sys.exit("%s: spm.model has no piece %s" % (folder, token))
        added.append({"id": token_id, "content": token, "single_word": False, "lstrip": token == "[MASK]",
                      "rstrip": False, "normalized": False, "special": True})
    byte_fallback = any(sp.is_byte(i) for i in range(size))
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
    decoder = dict(metaspace)
    if byte_fallback:
        decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, dict(metaspace)]}
    model = {"type": "Unigram", "unk_id": sp.unk_id(),
             "vocab": [[sp.id_to_piece(i), sp.get_score(i)] for i in range(size)]}
    if byte_fallback:
        model["byte_fallback"] = True
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "post_processor": None,
        "decoder": decoder,
        "model": model,
    }
    path = os.path.join(folder, "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    print("wrote %s (%d pieces%s)" % (path, size, ", byte fallback" if byte_fallback else ""))


if __name__ == "__main__":
    main()
