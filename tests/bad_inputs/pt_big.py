#!/usr/bin/env python3
"""Writes the two large hostile PyTorch checkpoints of issue 28, class 10, at test time (git need
not hold 5 MB of them): pt_big.py CONFIG_JSON OUT_DIR makes OUT_DIR/deberta_pt_memo_key (a 1 MB
storage key memoised once and named by 3,000 persistent ids) and OUT_DIR/deberta_pt_many_none
(a list of 4 M None)."""
import os
import shutil
import struct
import sys
import zipfile


def write(folder, config, pkl):
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(config, os.path.join(folder, "config.json"))
    with zipfile.ZipFile(os.path.join(folder, "pytorch_model.bin"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")


config, out = sys.argv[1], sys.argv[2]
key = b"k" * (1 << 20)
pid = b"(X\x07\x00\x00\x00storageh\x01h\x02X\x03\x00\x00\x00cpuK\x01tQ"
memo = b"\x80\x02ctorch\nFloatStorage\nq\x01X" + struct.pack("<I", len(key)) + key + b"q\x02](" + pid * 3000 + b"e."
write(os.path.join(out, "deberta_pt_memo_key"), config, memo)
write(os.path.join(out, "deberta_pt_many_none"), config, b"\x80\x02]" + b"Na" * 4000000 + b".")
