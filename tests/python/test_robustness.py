"""deberta_explorer under hostile use (issue 44, classes 1 and 2).

* the tensor API: set_tensor checks a value's shape before converting it (a huge stride-0 view is a
  ValueError, not a segfault); a model used from several threads at once (forward, predict, tensor,
  set_tensor) stays consistent; a weights file changed on disk after load_model() is refused by the
  calls that read it, never mixed into the loaded weights;
* errors: a lone surrogate, a non-UTF-8 path, a NUL, an int of 10^400, an input longer than the
  model's positions and a tokenizer that failed to load each give a Python exception of the right
  type whose message names the argument and keeps every byte.

The calls that crashed the interpreter before run in a child process, so a crash fails the test
instead of killing pytest. The thread tests count work (a fixed number of forwards while the other
threads edit), they time nothing.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import deberta_explorer as dx
from conftest import read_safetensors

V3 = "notebooks_data/golden/v3_emd"  # 3 layers, EMD, vocabulary 48, max_position_embeddings 32
TINY = "notebooks_data/models/deberta-tiny"  # the bundled model, with its spm.model
REL = "encoder.rel_embeddings.weight"
DENSE = "encoder.layer.0.attention.output.dense.weight"


def run_child(code, timeout=300):
    """Runs `code` in a fresh interpreter (PYTHONPATH as ours); returns its stdout. A crash (a
    negative return code: the signal) or an exception fails the test with the child's stderr."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ))
    assert r.returncode == 0, f"child exited with {r.returncode} (a negative code is the signal that killed it):\n{r.stderr[-2000:]}"
    return r.stdout


def copy_model(src, dst, names=("config.json", "model.safetensors")):
    dst.mkdir()
    for n in names:
        shutil.copyfile(src / n, dst / n)
    return dst


def write_safetensors_f64(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(np.shape(tensors[name])), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


# --- class 1: the tensor API ----------------------------------------------------------------------


def test_set_tensor_checks_the_shape_before_converting_a_huge_view(source_dir):
    """A (10^11,) stride-0 view costs nothing as a view and 800 GB as float64: it used to be converted
    first (the failed allocation used unchecked: a segfault). Views of the right shape still work."""
    out = run_child(f"""
        import numpy as np, deberta_explorer as dx
        m = dx.load_model({str(source_dir / V3)!r})
        name = {REL!r}
        before = m.tensor(name)
        for huge in (np.broadcast_to(np.float64(1.0), (10**11,)), np.broadcast_to(np.float64(1.0), (10**6, 10**6))):
            try:
                m.set_tensor(name, huge)
            except ValueError as e:
                msg = str(e)
            else:
                raise SystemExit("a huge view was accepted")
            shape = "[" + ", ".join(map(str, huge.shape)) + "]"
            assert msg.startswith("set_tensor('encoder.rel_embeddings.weight'): shape " + shape), msg
            assert "does not match the model's [" + ", ".join(map(str, before.shape)) + "]" in msg, msg
        assert np.array_equal(m.tensor(name), before)           # nothing changed
        view = np.broadcast_to(np.float64(0.25), before.shape)  # stride 0, the right shape: accepted
        m.set_tensor(name, view)
        assert np.array_equal(m.tensor(name), np.full(before.shape, 0.25))
        fortran = np.asfortranarray(before * 3)                  # another memory order: same values
        m.set_tensor(name, fortran)
        assert np.array_equal(m.tensor(name), before * 3)
        # A PyTorch checkpoint (read whole, not lazily): the same check.
        pt = dx.load_model({str(source_dir / "notebooks_data/fixtures/checkpoints/v1_basic_fp32")!r})
        try:
            pt.set_tensor("embeddings.LayerNorm.bias", np.broadcast_to(np.float64(1.0), (10**11,)))
        except ValueError as e:
            assert "shape [100000000000] does not match the model's [" in str(e), str(e)
        else:
            raise SystemExit("a huge view was accepted (checkpoint)")
        print("ok")
    """)
    assert out.strip() == "ok"


# The child of the thread tests: two tensors (the relative table, whose derived position table
# must follow, and a dense weight) each toggled between two values by its own thread, while the
# main thread runs forwards and reads tensor(). Every forward must equal, bit for bit, the forward
# of a fresh model holding one of the four combinations: never a half-made edit.
THREADS_CHILD = """
import threading, numpy as np, deberta_explorer as dx
case = {case!r}
a_name, b_name = {rel!r}, {dense!r}
ids, masked = [1, 5, 6, 7, 2, 9, 3], [2, 4]
m = dx.load_model(case)
A = (m.tensor(a_name), m.tensor(a_name) * -1.5)
B = (m.tensor(b_name), m.tensor(b_name) + 0.01)
refs = []
for va in A:
    for vb in B:
        r = dx.load_model(case)
        r.set_tensor(a_name, va)
        r.set_tensor(b_name, vb)
        refs.append(dx.forward(r, ids, masked_positions=masked)["mlm.masked_logits"])
assert all(not np.array_equal(refs[i], refs[j]) for i in range(4) for j in range(i)), "the four edits must differ"
stop = threading.Event()
ready = threading.Barrier(3)
errors, edits = [], {{}}
def setter(name, values):
    try:
        ready.wait()
        k = 0
        while not stop.is_set():
            m.set_tensor(name, values[k % 2])
            k += 1
        edits[name] = k
    except BaseException as e:
        errors.append(repr(e))
threads = [threading.Thread(target=setter, args=(a_name, A)), threading.Thread(target=setter, args=(b_name, B))]
for t in threads:
    t.start()
ready.wait()
seen = set()
try:
    for n in range({forwards}):
        out = dx.forward(m, ids, masked_positions=masked)["mlm.masked_logits"]
        match = [i for i, ref in enumerate(refs) if np.array_equal(out, ref)]
        assert len(match) == 1, f"forward {{n}} equals none of the four edited models"
        seen.add(match[0])
        t = m.tensor(a_name)
        assert np.array_equal(t, A[0]) or np.array_equal(t, A[1]), f"tensor() {{n}} is neither value"
finally:
    stop.set()
    for t in threads:
        t.join()
assert not errors, errors
assert min(edits.values()) >= 10, edits  # the setters ran alongside
print("ok", len(seen), edits)
"""


def test_set_tensor_while_other_threads_run_forward_and_set_tensor(source_dir):
    """set_tensor while another thread runs forward on the same model, and two set_tensors at once,
    segfaulted within seconds (both release the GIL). Now each call takes the model's lock."""
    out = run_child(THREADS_CHILD.format(case=str(source_dir / V3), rel=REL, dense=DENSE, forwards=600))
    assert out.startswith("ok"), out


def test_predict_and_tokenize_from_threads_while_set_tensor_edits(source_dir):
    """The bundled model: four threads use a fresh model's tokenizer at once (it is loaded once), two
    run predict while a third toggles a weight; every prediction is one of the two edited models'."""
    out = run_child(f"""
        import threading, numpy as np, deberta_explorer as dx
        path = {str(source_dir / TINY)!r}
        text = "And God said, Let there be [MASK]: and there was light."
        name = "encoder.layer.1.attention.output.dense.weight"
        m = dx.load_model(path)
        ready = threading.Barrier(4)
        tokens, errors = [], []
        def tok():
            try:
                ready.wait()
                tokens.append(dx.tokenize(m, text)["input_ids"].tolist())
            except BaseException as e:
                errors.append(repr(e))
        ts = [threading.Thread(target=tok) for _ in range(4)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert not errors, errors
        assert len(tokens) == 4 and all(t == tokens[0] for t in tokens), tokens
        W = (m.tensor(name), m.tensor(name) * 0.5)
        refs = []
        for w in W:
            r = dx.load_model(path)
            r.set_tensor(name, w)
            refs.append(dx.predict(r, text, top_k=3))
        assert refs[0] != refs[1]
        stop = threading.Event()
        edits = [0]
        def setter():
            try:
                while not stop.is_set():
                    m.set_tensor(name, W[edits[0] % 2])
                    edits[0] += 1
            except BaseException as e:
                errors.append(repr(e))
        def predictor():
            try:
                for _ in range(40):
                    p = dx.predict(m, text, top_k=3)
                    assert p in refs, p
            except BaseException as e:
                errors.append(repr(e))
        s = threading.Thread(target=setter)
        s.start()
        ps = [threading.Thread(target=predictor) for _ in range(2)]
        for t in ps: t.start()
        for t in ps: t.join()
        stop.set()
        s.join()
        assert not errors, errors
        assert edits[0] >= 5, edits
        print("ok", edits[0])
    """)
    assert out.startswith("ok"), out


def test_a_weights_file_changed_on_disk_is_refused(source_dir, tmp_path):
    """After the weights file was replaced, tensor() returned the new file's values and an identity
    set_tensor swapped in every other weight from it. Now the calls that read the file refuse, naming
    it; the loaded weights (forward) are untouched; load_model() again reads the new file."""
    folder = copy_model(source_dir / V3, tmp_path / "model")
    weights = folder / "model.safetensors"
    model = dx.load_model(folder)
    ids, masked = [1, 5, 6, 7, 2], [2]
    before = dx.forward(model, ids, masked_positions=masked)
    old = model.tensor(REL)
    new_values = {n: v * 2 for n, v in read_safetensors(weights).items()}
    write_safetensors_f64(tmp_path / "new.safetensors", new_values)
    os.replace(tmp_path / "new.safetensors", weights)  # another file (inode) at the same path
    message = rf"{weights}: changed on disk since load_model\(\) \(it was replaced by another file\).*load it again"
    for call in (lambda: model.tensor(REL), lambda: model.tensor_names(), lambda: model.set_tensor(REL, old),
                 lambda: model.set_tensor(DENSE, model.tensor(DENSE))):
        with pytest.raises(dx.Error, match=message):
            call()
    after = dx.forward(model, ids, masked_positions=masked)
    for name in before:
        assert np.array_equal(after[name], before[name]), f"{name} changed: the new file leaked into the model"
    fresh = dx.load_model(folder)
    assert np.array_equal(fresh.tensor(REL), new_values[REL])
    # Rewritten in place (same inode), to another size.
    with open(weights, "ab") as f:
        f.write(b"\0" * 8)
    with pytest.raises(dx.Error, match=rf"{weights}: changed on disk since load_model\(\) \(its size changed"):
        fresh.tensor(REL)
    # Touched (same inode and size, another modification time).
    again = dx.load_model(folder)
    os.utime(weights, ns=(1, 1))
    with pytest.raises(dx.Error, match=rf"{weights}: changed on disk since load_model\(\) \(it was modified\)"):
        again.set_tensor(REL, old)
    weights.unlink()
    with pytest.raises(dx.Error, match=rf"{weights}: changed on disk since load_model\(\) \(it no longer exists\)"):
        fresh.tensor_names()


# --- class 2: errors --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def v3(source_dir):
    return dx.load_model(source_dir / V3)


@pytest.fixture(scope="module")
def tiny(source_dir):
    return dx.load_model(source_dir / TINY)


def test_a_lone_surrogate_is_a_unicode_error_naming_the_argument(v3, tiny):
    """"\\ud800" has no UTF-8 encoding: it raised RuntimeError("Unable to cast Python instance…")."""
    cases = [
        (lambda: dx.tokenize(tiny, "a\ud800b"), r"tokenize\(\): text is not valid Unicode: lone surrogate \\ud800 at index 1"),
        (lambda: dx.tokenize(tiny, "a", pair="xy\ud800"), r"tokenize\(\): pair .* at index 2"),
        (lambda: dx.predict(tiny, "[MASK] \ud800"), r"predict\(\): text"),
        (lambda: dx.ablate(tiny, "\ud800 [MASK]", c2p=False), r"ablate\(\): text"),
        (lambda: v3.tensor("\ud800"), r"Model.tensor\(\): name .*\\ud800 at index 0"),
        (lambda: v3.set_tensor("enc\ud800", [1.0]), r"Model.set_tensor\(\): name .*\\ud800 at index 3"),
        (lambda: dx.load_model("/tmp/\ud800"), r"load_model\(\): path .*\\ud800"),
        (lambda: dx.read_safetensors(pathlib.Path("/tmp/\ud800")), r"read_safetensors\(\): path"),
        (lambda: dx.forward(v3, [1, 2], ablation={"\ud800": True}), r"ablation key '\\ud800'"),
        (lambda: dx.forward(v3, [1, 2], ablation={"relative_positions": "hf\ud800"}), r"ablation\['relative_positions'\]"),
        (lambda: dx.forward(v3, [1, 2], ablation={"p2c_index": "\ud800"}), r"ablation\['p2c_index'\]"),
        (lambda: dx.set_backend("\ud800"), r"set_backend\(\): backend"),
    ]
    for call, match in cases:
        with pytest.raises(UnicodeError, match=match) as info:
            call()
        assert isinstance(info.value, ValueError) and "Unable to cast" not in str(info.value)


def test_a_folder_whose_name_is_not_utf8(source_dir, tmp_path):
    """pathlib.Path(b"caf\\xe9" decoded with surrogateescape): os.fspath gives a str with a surrogate,
    which raised "Unable to cast". The path's bytes (os.fsencode) reach the system; paths come back
    as os.fsdecode gives them; messages show the byte as \\xe9, in full."""
    folder = pathlib.Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    copy_model(source_dir / V3, folder)
    ref = dx.forward(dx.load_model(source_dir / V3), [1, 5, 6])
    for arg in (folder, str(folder)):
        m = dx.load_model(arg)
        assert pathlib.Path(m.directory) == folder
        assert os.fsencode(m.weights_path) == os.fsencode(folder / "model.safetensors")
        assert np.array_equal(dx.forward(m, [1, 5, 6])["layer.2.output"], ref["layer.2.output"])
        assert sorted(dx.read_safetensors(folder / "model.safetensors")) == m.tensor_names()
        assert r"caf\xe9" in repr(m)
    with pytest.raises(dx.FileNotFoundError) as info:
        dx.load_model(folder / "missing")
    assert rf"{tmp_path}/caf\xe9/missing" in str(info.value)
    with pytest.raises(KeyError) as info:  # the message names the file: it was empty before
        m.tensor("nope")
    assert info.value.args[0] == rf"no tensor named 'nope' in {tmp_path}/caf\xe9/model.safetensors (Model.tensor_names() lists them)"


def test_an_int_of_10_to_the_400_is_a_short_value_error(v3, tiny):
    """An int beyond 64 bits (beyond a double's range for the scale) is a ValueError naming the
    argument, in one short line (the repr of 10^400 is cut)."""
    cases = [
        (lambda: dx.forward(v3, [1, 2], ablation={"window": 10**400}), r"ablation\['window'\] is out of range"),
        (lambda: dx.forward(v3, [1, 2], ablation={"max_relative_positions": -10**400}), r"ablation\['max_relative_positions'\] is out of range"),
        (lambda: dx.forward(v3, [1, 2], ablation={"head_mask": [(10**400, 0)]}), r"ablation\['head_mask'\] is out of range"),
        (lambda: dx.forward(v3, [1, 2], ablation={"head_mask": [(0, 10**400)]}), r"ablation\['head_mask'\] is out of range"),
        (lambda: dx.forward(v3, [1, 2], ablation={"scale": 10**400}), r"ablation\['scale'\] must be a positive finite number"),
        (lambda: dx.ablate(tiny, "a [MASK]", window=10**400), r"ablation\['window'\] is out of range"),
        (lambda: dx.predict(tiny, "a [MASK]", top_k=10**400), r"predict\(\): top_k is out of range"),
        (lambda: dx.set_num_threads(10**400), r"set_num_threads\(\): threads is out of range"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match) as info:
            call()
        message = str(info.value)
        assert len(message) < 160 and "\n" not in message, f"not one short line: {message!r}"
        assert "(401 characters)" in message or "(402 characters)" in message, message


def test_an_input_longer_than_the_model_is_invalid_input(v3, tiny):
    """100,000 ids: InvalidInputError (a ValueError) naming max_position_embeddings, before any work,
    where a position past the table is read (here the EMD's I = H + P; issue 59, class 8). The
    encoder alone reads none: its 100,000 tokens are refused by the memory guard, naming the size."""
    with pytest.raises(dx.Error, match="100000 tokens need"):
        dx.forward(v3, np.ones(100_000, dtype=np.int64))
    cases = [
        (lambda: dx.forward(v3, np.ones(100_000, dtype=np.int64), masked_positions=[0]),
         "input has 100000 tokens, more than max_position_embeddings = 32"),
        (lambda: dx.forward(v3, [[1] * 33], masked_positions=[0]), "input has 33 tokens, more than max_position_embeddings = 32"),
        (lambda: dx.predict(tiny, "a " * 5000 + "[MASK]"), "tokens, more than max_position_embeddings = 128"),
        (lambda: dx.ablate(tiny, "a " * 5000 + "[MASK]", c2p=False), "tokens, more than max_position_embeddings = 128"),
    ]
    for call, match in cases:
        with pytest.raises(dx.InvalidInputError, match=match) as info:
            call()
        assert isinstance(info.value, ValueError)


def test_a_nul_in_a_path_or_a_name_is_shown(source_dir, v3):
    """A NUL cut the message at it (and cut the path: load_model("dir\\x00junk") opened "dir").
    A path with a NUL is a ValueError; names and keys show it as \\x00."""
    case = str(source_dir / V3)
    with pytest.raises(ValueError, match=r"load_model\(\): path contains a NUL character: '.*v3_emd\\x00junk'"):
        dx.load_model(case + "\x00junk")
    with pytest.raises(ValueError, match=r"read_safetensors\(\): path contains a NUL character: '.*\\x00'"):
        dx.read_safetensors(pathlib.Path(case + "/model.safetensors\x00"))
    for call in (lambda: v3.tensor("enc\x00oder"), lambda: v3.set_tensor("enc\x00oder", [1.0])):
        with pytest.raises(KeyError) as info:
            call()
        assert info.value.args[0].startswith(r"no tensor named 'enc\x00oder' in "), info.value.args[0]
    with pytest.raises(ValueError, match=r"unknown ablation key 'c2c\\x00x' \(known"):
        dx.forward(v3, [1, 2], ablation={"c2c\x00x": True})


def test_a_tensor_name_that_is_not_utf8_keeps_its_message(tmp_path, v3):
    """A core message holding a byte that is not UTF-8 (here, a tensor name in a safetensors header)
    became an empty message; a name given with U+DC80..U+DCFF (os.fsdecode's way) raised
    "Unable to cast". Both now name it, with the byte as \\xe9."""
    path = tmp_path / "bad-name.safetensors"
    header = b'{"caf\xe9": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}'
    header += b" " * (-len(header) % 8)
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))
    with pytest.raises(dx.Error) as info:
        dx.read_safetensors(path)
    assert str(info.value).startswith(f"{path}: not a valid safetensors file"), str(info.value)
    assert r"caf\xe9" in str(info.value)
    with pytest.raises(KeyError) as info:
        v3.tensor("caf\udce9")
    assert info.value.args[0].startswith(r"no tensor named 'caf\xe9' in "), info.value.args[0]


def test_a_tokenizer_that_failed_to_load_gives_the_same_error_every_time(source_dir, tmp_path):
    """The second call used to say "no tokenizer files" after the first said why the load failed."""
    folder = copy_model(source_dir / TINY, tmp_path / "broken-tokenizer")
    (folder / "spm.model").write_bytes(b"this is not a sentencepiece model")
    model = dx.load_model(folder)
    assert model.has_tokenizer
    errors = []
    for call in (lambda: dx.tokenize(model, "hello"), lambda: dx.tokenize(model, "hello"),
                 lambda: dx.predict(model, "a [MASK]"), lambda: dx.ablate(model, "a [MASK]", c2p=False)):
        with pytest.raises(dx.Error) as info:
            call()
        errors.append((type(info.value), str(info.value)))
    assert "spm.model" in errors[0][1], errors[0]
    assert all(e == errors[0] for e in errors), errors


def test_threads_share_a_model_without_deadlock(source_dir):
    """Three threads forward one model while the main thread reads its tensors and properties and
    sets a tensor to its own values (every call releases the GIL before it takes the model's lock,
    so none waits for the GIL while holding the lock: a deadlock would be the child's timeout).
    The forwards must not change: the edit is an identity."""
    out = run_child(f"""
        import threading, numpy as np, deberta_explorer as dx
        m = dx.load_model({str(source_dir / V3)!r})
        ref = dx.forward(m, [1, 5, 6, 7], masked_positions=[1])["mlm.masked_logits"]
        bad = []
        def work():
            for _ in range(100):
                if not np.array_equal(dx.forward(m, [1, 5, 6, 7], masked_positions=[1])["mlm.masked_logits"], ref):
                    bad.append("a forward differs")
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for _ in range(100):
            assert m.runs_emd and len(m.tensor_names()) == 60
            m.set_tensor({REL!r}, m.tensor({REL!r}))
        for t in threads:
            t.join()
        assert not bad, bad[:3]
        print("ok")
    """, timeout=120)
    assert out.strip() == "ok"


def test_issue59_class7_set_backend_after_a_fast_load_gives_the_reference_engines_bits(source_dir):
    """The position projections were made at load time on the engine then current: a model loaded
    on the fast engine and run after set_backend("reference") differed from a reference-loaded
    model by 8.4e-15. Every forward now reads projections made on its own engine, both ways."""
    golden = read_safetensors(source_dir / "notebooks_data/golden/v3_emd/golden.safetensors")
    ids = np.arange(1, 41, dtype=np.int64) * 37 % 7000 + 5
    cases = [
        (source_dir / "notebooks_data/golden/v3_emd", (golden["input_ids"], golden["attention_mask"], golden["token_type_ids"])),
        (source_dir / TINY, (ids,)),
    ]
    before = dx.backend()
    try:
        for case, args in cases:
            dx.set_backend("fast")
            loaded_fast = dx.load_model(str(case))
            dx.set_backend("reference")
            loaded_reference = dx.load_model(str(case))
            for model, label in ((loaded_fast, "fast-loaded"), (loaded_reference, "reference-loaded")):
                for engine in ("reference", "fast", "reference"):
                    dx.set_backend(engine)
                    got = dx.forward(model, *args)
                    fresh = dx.forward(dx.load_model(str(case)), *args)
                    for name in fresh:
                        assert np.array_equal(got[name], fresh[name]), \
                            f"{case.name}: {label} model on {engine}: {name} differs from a model loaded on {engine}"
    finally:
        dx.set_backend(before)


def test_issue59_class7_set_backend_message_shows_the_whole_value():
    """set_backend("reference\\x00x")'s message was cut at the NUL ("... 'reference")."""
    with pytest.raises(ValueError) as caught:
        dx.set_backend("reference\x00x")
    assert "'reference\\x00x'" in str(caught.value), str(caught.value)
    with pytest.raises(ValueError) as caught:
        dx.load_model("unused", backend="fast\x00x")
    assert "'fast\\x00x'" in str(caught.value), str(caught.value)
