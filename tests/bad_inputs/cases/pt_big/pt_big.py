import os, struct, sys, zipfile
def write(folder, pkl):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json")) as c:
        open(os.path.join(folder, "config.json"), "w").write(c.read())
    with zipfile.ZipFile(os.path.join(folder, "pytorch_model.bin"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
key = b"k" * (1 << 20)
pid = b"(X\x07\x00\x00\x00storageh\x01h\x02X\x03\x00\x00\x00cpuK\x01tQ"
memo = b"\x80\x02ctorch\nFloatStorage\nq\x01X" + struct.pack("<I", len(key)) + key + b"q\x02](" + pid * 3000 + b"e."
write(os.path.join(sys.argv[1], "deberta_pt_memo_key"), memo)
write(os.path.join(sys.argv[1], "deberta_pt_many_none"), b"\x80\x02]" + b"Na" * 4000000 + b".")
