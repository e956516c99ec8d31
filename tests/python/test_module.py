"""deberta_explorer against the `deberta` CLI and the golden references.

* forward() equals `deberta dump` bit for bit (same names, dtypes, shapes, bytes) on every golden
  case of notebooks_data/golden and golden_extra, and agrees with the reference tensors ≤ 1e-10;
* the ablation dict means what the CLI's flags mean (bit for bit against `deberta dump` with flags);
* errors of the core and bad arguments are Python exceptions with a useful message;
* tokenize / predict / ablate equal `deberta tokenize --json` / `deberta predict --json`.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import deberta_explorer as dx
from conftest import golden_cases, read_safetensors, run_cli

GOLDEN_TOLERANCE = 1e-10  # tests/test_golden.cpp's tolerance for float64 vs the float64 references


def _source():
    import os

    return pathlib.Path(os.environ.get("DEBERTA_SOURCE_DIR", "."))


CASES = golden_cases(_source())


def case_switches(case_dir):
    """The switches a case was made with: run.json ({"relative_positions": "microsoft"} beside the
    cases computed with microsoft/DeBERTa's relative positions), as an ablation dict and as CLI flags."""
    run = case_dir / "run.json"
    if not run.exists():
        return {}, []
    rule = json.loads(run.read_text())["relative_positions"]
    return {"relative_positions": rule}, ["--relative-positions", rule]


def _forward_like_dump(model, inputs, ablation=None, full_logits=None):
    """forward() with the inputs of a golden input file, deciding what `deberta dump --inputs` decides
    (full logits when the input file holds mlm.logits) unless `full_logits` is given."""
    positions = inputs.get("mlm.masked_positions")
    if full_logits is None:
        full_logits = positions is not None and "mlm.logits" in inputs
    return dx.forward(
        model,
        inputs["input_ids"],
        attention_mask=inputs.get("attention_mask"),
        token_type_ids=inputs.get("token_type_ids"),
        ablation=ablation,
        masked_positions=positions,
        full_logits=full_logits,
    )


def assert_bitwise_equal(ours, dumped, what):
    dumped = {k: v for k, v in dumped.items() if k != "mlm.labels"}  # copied through from the input file
    assert sorted(ours) == sorted(dumped), f"{what}: names differ: only ours {sorted(set(ours) - set(dumped))}, only dump {sorted(set(dumped) - set(ours))}"
    for name, ref in dumped.items():
        a = ours[name]
        assert a.dtype == ref.dtype, f"{what} {name}: dtype {a.dtype} vs dump {ref.dtype}"
        assert a.shape == ref.shape, f"{what} {name}: shape {a.shape} vs dump {ref.shape}"
        if a.tobytes() != np.ascontiguousarray(ref).tobytes():
            diff = np.abs(a.astype(np.float64) - ref.astype(np.float64))
            at = np.unravel_index(np.nanargmax(diff), diff.shape)
            pytest.fail(f"{what} {name}: not bitwise equal; worst at {at}: ours {a[at]!r}, dump {ref[at]!r}")


def test_every_golden_case_is_found():
    assert len(CASES) >= 20, f"expected the 7 golden + at least 13 golden_extra cases, found {len(CASES)}"
    assert sum(1 for d, _ in CASES if case_switches(d)[0]) >= 2, "expected the *_msrel cases (run.json)"


@pytest.mark.parametrize("case_dir,inputs_file", CASES, ids=[c[0].name for c in CASES])
def test_forward_equals_dump_bit_for_bit(cli, tmp_path, case_dir, inputs_file):
    ablation, flags = case_switches(case_dir)
    out = tmp_path / "dump.safetensors"
    run_cli(cli, "dump", "--model", case_dir, "--inputs", inputs_file, "--out", out, *flags)
    model = dx.load_model(str(case_dir))
    ours = _forward_like_dump(model, read_safetensors(inputs_file), ablation)
    assert_bitwise_equal(ours, read_safetensors(out), case_dir.name)


@pytest.mark.parametrize("case_dir,inputs_file", CASES, ids=[c[0].name for c in CASES])
def test_forward_matches_reference(case_dir, inputs_file):
    expected_file = case_dir / ("golden.safetensors" if inputs_file.name == "golden.safetensors" else "expected.safetensors")
    expected = read_safetensors(expected_file)
    ablation, _ = case_switches(case_dir)
    ours = _forward_like_dump(dx.load_model(str(case_dir)), read_safetensors(inputs_file), ablation,
                              full_logits="mlm.logits" in expected)
    compared = 0
    for name, ref in expected.items():
        if name == "mlm.labels":
            continue
        assert name in ours, f"{case_dir.name}: forward() has no {name}"
        if ref.dtype.kind == "f":
            err = np.max(np.abs(ours[name] - ref)) if ref.size else 0.0
            assert err <= GOLDEN_TOLERANCE, f"{case_dir.name} {name}: max abs error {err:.3e}"
        else:
            assert np.array_equal(ours[name], ref), f"{case_dir.name} {name}: integers differ"
        compared += 1
    assert compared >= 5


def test_ablation_dict_equals_cli_flags(cli, source_dir, tmp_path):
    case = source_dir / "notebooks_data/golden/v3_emd"
    inputs = read_safetensors(case / "golden.safetensors")
    model = dx.load_model(str(case))
    ablation = {"p2c": False, "head_mask": [(1, 0)], "scale_factor": 3.5, "window": 3}
    out = tmp_path / "ablated.safetensors"
    run_cli(cli, "dump", "--model", case, "--inputs", case / "golden.safetensors", "--out", out,
            "--terms", "c2c,c2p", "--head-mask", "1:0", "--scale-factor", "3.5", "--window", "3")
    ours = dx.forward(model, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"],
                      ablation=ablation, masked_positions=inputs["mlm.masked_positions"], full_logits=True)
    assert_bitwise_equal(ours, read_safetensors(out), "v3_emd ablated")
    # The switches did something: no p2c maps, head 0 of layer 1 masked, other numbers.
    assert "layer.0.p2c" not in ours
    assert np.all(ours["layer.1.attn_probs"][0] == 0)
    base = dx.forward(model, inputs["input_ids"], masked_positions=inputs["mlm.masked_positions"])
    assert np.max(np.abs(base["layer.0.output"] - ours["layer.0.output"])) > 1e-6


def test_relative_positions_switch(cli, source_dir, tmp_path):
    case = source_dir / "notebooks_data/golden_extra/v2_long_msrel"
    inputs = read_safetensors(case / "inputs.safetensors")
    model = dx.load_model(str(case))
    hf = dx.forward(model, inputs["input_ids"], ablation={"relative_positions": "hf"})
    ms = dx.forward(model, inputs["input_ids"], ablation={"relative_positions": "microsoft"})
    assert_bitwise_equal(hf, dx.forward(model, inputs["input_ids"]), "hf is the default")
    # N > m with log buckets: microsoft/DeBERTa's clamp to ±(m − 1) changes some table rows.
    assert not np.array_equal(hf["c2p_row"], ms["c2p_row"])
    out = tmp_path / "ms.safetensors"
    run_cli(cli, "dump", "--model", case, "--ids", ",".join(map(str, inputs["input_ids"].ravel())), "--out", out,
            "--relative-positions", "microsoft")
    assert_bitwise_equal(ms, read_safetensors(out), "v2_long_msrel microsoft")


def test_thread_count_does_not_change_numbers(source_dir):
    case = source_dir / "notebooks_data/golden/v2_conv_pad"
    inputs = read_safetensors(case / "golden.safetensors")
    model = dx.load_model(str(case))
    before = dx.num_threads()
    try:
        dx.set_num_threads(1)
        one = dx.forward(model, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
    finally:
        dx.set_num_threads(before)
    many = dx.forward(model, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
    assert_bitwise_equal(one, many, "1 thread vs default")


def test_a_model_computes_on_its_own_backend(source_dir):
    """load_model(backend=...) (issue 43): every call on the model runs on its engine, whatever the
    process's is; another model keeps the process's. The two engines differ in the last bits."""
    case = source_dir / "notebooks_data/golden/v3_emd"
    inputs = read_safetensors(case / "golden.safetensors")
    args = (inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
    before = dx.backend()
    try:
        dx.set_backend("reference")
        plain = dx.load_model(str(case))
        by_reference = dx.forward(plain, *args)
        dx.set_backend("fast")
        by_fast = dx.forward(plain, *args)
        own = dx.load_model(str(case), backend="reference")
        assert own.backend == "reference" and plain.backend == "fast"
        assert_bitwise_equal(dx.forward(own, *args), by_reference, "backend='reference' vs set_backend('reference')")
        differs = [n for n in by_fast if not np.array_equal(by_fast[n], by_reference[n])]
        assert differs, "the fast and reference engines gave the same bits everywhere: the test would not see a mix-up"
        assert_bitwise_equal(dx.forward(plain, *args), by_fast, "the other model keeps the process's engine")
        with pytest.raises(ValueError, match="backend must be 'fast' or 'reference', got 'quick'"):
            dx.load_model(str(case), backend="quick")
    finally:
        dx.set_backend(before)


# --- errors ---------------------------------------------------------------------------------------


def test_missing_model_is_an_error_naming_the_path(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(dx.Error, match="no-such-model"):
        dx.load_model(str(missing))
    assert issubclass(dx.Error, RuntimeError)


def test_core_errors_become_exceptions(source_dir):
    model = dx.load_model(str(source_dir / "notebooks_data/golden/v1_basic"))
    with pytest.raises(dx.Error, match="vocab|range|id"):
        dx.forward(model, [1, 2, model.vocab_size + 5])
    with pytest.raises(dx.Error):
        dx.forward(model, [])
    with pytest.raises(dx.Error, match="1:7|head"):
        dx.forward(model, [1, 2, 3], ablation={"head_mask": [(1, 7)]})
    with pytest.raises(dx.Error, match="tokenizer"):
        dx.tokenize(model, "hello")
    with pytest.raises(dx.Error):  # attention_mask of another length
        dx.forward(model, [1, 2, 3], attention_mask=[1, 1])


def test_bad_arguments_raise_value_or_type_errors(source_dir):
    model = dx.load_model(str(source_dir / "notebooks_data/golden/v1_basic"))
    with pytest.raises(ValueError, match="'c2x'"):
        dx.forward(model, [1, 2, 3], ablation={"c2x": False})
    with pytest.raises(ValueError, match="integers"):
        dx.forward(model, np.array([1.0, 2.5, 3.0]))
    with pytest.raises(ValueError, match="p2c_index"):
        dx.forward(model, [1, 2, 3], ablation={"p2c_index": "diagonal"})
    with pytest.raises(ValueError, match="scale"):
        dx.forward(model, [1, 2, 3], ablation={"scale": -1.0})
    with pytest.raises(ValueError, match="relative_positions"):
        dx.forward(model, [1, 2, 3], ablation={"relative_positions": "paper"})
    with pytest.raises(TypeError, match="c2p"):
        dx.forward(model, [1, 2, 3], ablation={"c2p": "no"})
    with pytest.raises(ValueError, match="'bogus'"):
        dx.ablate(model, "text", bogus=True)


# --- text: the bundled model's tokenizer ------------------------------------------------------------

TEXT = "And God said, Let there be [MASK]: and there was light."


@pytest.fixture(scope="module")
def bundled(source_dir):
    path = source_dir / "notebooks_data/models/deberta-tiny"
    assert (path / "spm.model").exists(), f"{path} has no tokenizer: the bundled model is part of the repository"
    return path, dx.load_model(str(path))


def test_tokenize_equals_cli(cli, bundled):
    path, model = bundled
    ref = json.loads(run_cli(cli, "tokenize", "--model", path, "--text", "Let there be light.", "--pair", "And [MASK].", "--json"))
    ours = dx.tokenize(model, "Let there be light.", pair="And [MASK].")
    assert ours["input_ids"].dtype == np.int64
    assert ours["input_ids"].tolist() == ref["ids"]
    assert ours["token_type_ids"].tolist() == ref["token_type_ids"]
    assert ours["tokens"] == ref["tokens"]
    assert 1 in ours["token_type_ids"].tolist()


def test_predict_equals_cli(cli, bundled):
    path, model = bundled
    ref = json.loads(run_cli(cli, "predict", "--model", path, "--text", TEXT, "--top-k", "4", "--json"))
    ours = dx.predict(model, TEXT, top_k=4)
    assert ours == ref["predictions"]  # ids, tokens and probabilities (JSON round-trips doubles)
    assert len(ours) == 1 and len(ours[0]["top"]) == 4


def test_ablate_equals_cli(cli, bundled):
    path, model = bundled
    ref = json.loads(run_cli(cli, "predict", "--model", path, "--text", TEXT, "--json", "--terms", "c2c,c2p", "--head-mask", "0:1"))
    ours = dx.ablate(model, TEXT, p2c=False, head_mask=[(0, 1)])
    assert ours["ablation"] == ref["ablation"]
    assert ours["baseline"] == ref["baseline"]
    assert ours["predictions"] == ref["predictions"]
    assert ours["mean_kl"] == ref["mean_kl"] and ours["mean_kl"] > 0
    assert ours["top1_changes"] == ref["top1_changes"]


def test_predict_without_mask_is_an_error(bundled):
    _, model = bundled
    with pytest.raises(dx.Error, match=r"\[MASK\]"):
        dx.predict(model, "No mask here.")
    with pytest.raises(ValueError, match=r"predict\(\): the text has no \[MASK\]"):
        dx.predict(model, "No mask here.")


def test_exceptions_have_the_builtin_types_python_users_catch(source_dir, tmp_path):
    """Issue 28, class 17: a missing file is a FileNotFoundError, a bad input value a ValueError
    (both also deberta_explorer.Error); a corrupt file stays a plain Error."""
    assert issubclass(dx.FileNotFoundError, FileNotFoundError) and issubclass(dx.FileNotFoundError, dx.Error)
    assert issubclass(dx.InvalidInputError, ValueError) and issubclass(dx.InvalidInputError, dx.Error)
    with pytest.raises(FileNotFoundError, match="no-such-model"):
        dx.load_model(str(tmp_path / "no-such-model"))
    with pytest.raises(FileNotFoundError, match="no-such.safetensors"):
        dx.read_safetensors(str(tmp_path / "no-such.safetensors"))
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no weights"):
        dx.load_model(empty)  # a pathlib.Path is a path too
    model = dx.load_model(source_dir / "notebooks_data/golden/v1_basic")
    with_lm_head = dx.load_model(source_dir / "notebooks_data/golden/v3_emd")
    cases = [
        (lambda: dx.forward(model, [1, 2, model.vocab_size + 5]), r"input_ids\[2\].*outside the vocabulary"),
        (lambda: dx.forward(model, [1, -1, 2]), r"input_ids\[1\] = -1"),
        (lambda: dx.forward(model, [1, 2, 3], attention_mask=[1, 1]), "attention_mask"),
        (lambda: dx.forward(with_lm_head, [1, 2, 3], masked_positions=[9]), "masked position 9"),
        (lambda: dx.forward(model, []), "the input has no tokens"),
    ]
    for call, match in cases:
        with pytest.raises(dx.InvalidInputError, match=match):
            call()
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"\x05" * 40)
    with pytest.raises(dx.Error, match="corrupt.safetensors") as info:
        dx.read_safetensors(corrupt)
    assert not isinstance(info.value, (FileNotFoundError, ValueError))


def test_wrong_argument_types_name_the_argument(source_dir):
    """Issue 28, class 17: never pybind11's generic "incompatible function arguments"."""
    model = dx.load_model(str(source_dir / "notebooks_data/golden/v1_basic"))
    cases = [
        (lambda: dx.load_model(123), TypeError, r"load_model\(\): path must be a path \(str or os.PathLike\), got int"),
        (lambda: dx.load_model(None), TypeError, r"load_model\(\): path .* got NoneType"),
        (lambda: dx.read_safetensors(b"x"), TypeError, r"read_safetensors\(\): path .* got bytes"),
        (lambda: dx.tokenize("model", "hi"), TypeError, r"tokenize\(\): model must be a deberta_explorer.Model"),
        (lambda: dx.tokenize(model, 5), TypeError, r"tokenize\(\): text must be a str, got int"),
        (lambda: dx.tokenize(model, "a", pair=3), TypeError, r"tokenize\(\): pair must be a str"),
        (lambda: dx.forward(model, [1, 2], full_logits="yes"), TypeError, r"forward\(\): full_logits must be True or False"),
        (lambda: dx.predict(model, "a", top_k="3"), TypeError, r"predict\(\): top_k must be an integer"),
        (lambda: dx.predict(model, "a", top_k=10**30), ValueError, r"predict\(\): top_k is out of range"),
        (lambda: dx.predict(model, "a", top_k=0), ValueError, r"predict\(\): top_k must be ≥ 1"),
        (lambda: dx.ablate(model, "a", top_k=2.5), TypeError, r"ablate\(\): top_k must be an integer"),
        (lambda: dx.set_num_threads("4"), TypeError, r"set_num_threads\(\): threads must be an integer"),
        (lambda: dx.set_num_threads(2**70), ValueError, r"set_num_threads\(\): threads is out of range"),
        (lambda: dx.set_backend(3), TypeError, r"set_backend\(\): backend must be a str"),
        (lambda: model.tensor(5), TypeError, r"Model.tensor\(\): name must be a str"),
        (lambda: model.set_tensor(5, [1.0]), TypeError, r"Model.set_tensor\(\): name must be a str"),
        (lambda: dx.forward(model, [1, 2], ablation={"head_mask": [(2**70, 0)]}), ValueError, r"head_mask'\] is out of range"),
    ]
    for call, kind, match in cases:
        with pytest.raises(kind, match=match) as info:
            call()
        assert "incompatible function arguments" not in str(info.value)


def test_thread_count_is_bounded_with_a_value_error(source_dir):
    """set_num_threads(100000) used to be accepted and crash the next forward (issue 28)."""
    before = dx.num_threads()
    for bad in (0, -3, 257, 100000):
        with pytest.raises(ValueError, match=r"set_num_threads\(\): threads must be in \[1, 256\]"):
            dx.set_num_threads(bad)
    assert dx.num_threads() == before
    m = dx.load_model(str(source_dir / "notebooks_data/golden/v1_c2p_only"))
    dx.forward(m, [1, 5, 6, 2])   # still runs


# --- weight interventions (Model.tensor_names / tensor / set_tensor) ------------------------------


def _write_safetensors_f64(path, tensors):
    """A safetensors file of float64 tensors (the format's header: JSON of dtype, shape, offsets)."""
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


def test_set_tensor_equals_a_fresh_load_of_the_edited_weights(source_dir, tmp_path):
    case = source_dir / "notebooks_data/golden/v3_emd"
    inputs = read_safetensors(case / "golden.safetensors")
    model = dx.load_model(str(case))
    names = model.tensor_names()
    # The relative table (the derived K_r / Q_r table must follow) and a content weight.
    k_r = "encoder.rel_embeddings.weight"
    dense = next(n for n in names if n.endswith("attention.output.dense.weight"))
    before = dx.forward(model, inputs["input_ids"], ablation={"p2c": True, "c2p": True})
    edited = {k_r: model.tensor(k_r) * -1.5, dense: model.tensor(dense) + 0.01}
    for name, value in edited.items():
        model.set_tensor(name, value)
        assert np.array_equal(model.tensor(name), value)
    # A folder holding the edited weights, loaded afresh.
    folder = tmp_path / "edited"
    folder.mkdir()
    (folder / "config.json").write_bytes((case / "config.json").read_bytes())
    _write_safetensors_f64(folder / "model.safetensors", {n: model.tensor(n) for n in names})
    fresh = dx.load_model(str(folder))
    after = dx.forward(model, inputs["input_ids"], ablation={"p2c": True, "c2p": True})
    assert_bitwise_equal(after, dx.forward(fresh, inputs["input_ids"], ablation={"p2c": True, "c2p": True}),
                         "set_tensor vs fresh load")
    assert np.max(np.abs(after["layer.0.c2p"] - before["layer.0.c2p"])) > 1e-6  # the edit reached c2p


def test_tensor_and_set_tensor_read_only_the_tensors_asked_for(source_dir, tmp_path):
    """Issue 28, class 7 in Python: a safetensors file with a 1.5 GB tensor the model does not use
    (a sparse hole on disk). tensor(), tensor_names() and set_tensor() read only what they need, as
    load_model() does, so a child process capped at 700 MB more than it has runs them all."""
    case = source_dir / "notebooks_data/golden/v3_emd"
    folder = tmp_path / "with-hole"
    folder.mkdir()
    (folder / "config.json").write_bytes((case / "config.json").read_bytes())
    tensors = read_safetensors(case / "model.safetensors")
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hole = 1536 << 20
    header["unused.hole"] = {"dtype": "F64", "shape": [hole // 8], "data_offsets": [offset, offset + hole]}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(folder / "model.safetensors", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
        f.truncate(8 + len(text) + offset + hole)
    child = f"""
import resource, sys
import numpy as np
import deberta_explorer as dx
vm = int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (700 << 20), vm + (700 << 20)))
m = dx.load_model({str(folder)!r})
names = m.tensor_names()
assert 'unused.hole' in names, names[:3]
w = m.tensor('encoder.rel_embeddings.weight')
m.set_tensor('encoder.rel_embeddings.weight', w * 2)
assert np.array_equal(m.tensor('encoder.rel_embeddings.weight'), w * 2)
dx.forward(m, [1, 5, 6, 2])
print('ok')
"""
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-800:]


def test_set_tensor_refuses_bad_names_shapes_and_types(source_dir):
    model = dx.load_model(str(source_dir / "notebooks_data/golden/v3_emd"))
    name = model.tensor_names()[0]
    good = model.tensor(name)
    with pytest.raises(KeyError, match="no-such-tensor"):
        model.tensor("no-such-tensor")
    with pytest.raises(ValueError, match="shape"):
        model.set_tensor(name, np.zeros(good.size + 1))
    with pytest.raises(TypeError):
        model.set_tensor(name, "text")
    with pytest.raises(TypeError):
        model.set_tensor(name, np.full(good.shape, "x"))
    assert np.array_equal(model.tensor(name), good)  # nothing changed


def test_backend_switch(source_dir):
    case = source_dir / "notebooks_data/golden/v2_conv_pad"
    inputs = read_safetensors(case / "golden.safetensors")
    model = dx.load_model(str(case))
    assert dx.backend() in ("fast", "reference")
    before = dx.backend()
    try:
        dx.set_backend("reference")
        ref = dx.forward(model, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
        dx.set_backend("fast")
        fast = dx.forward(model, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
    finally:
        dx.set_backend(before)
    worst = max(float(np.max(np.abs(fast[n] - ref[n]))) for n in ref if ref[n].dtype == np.float64)
    assert worst <= 1e-12
    with pytest.raises(ValueError, match="expected fast or reference"):
        dx.set_backend("quick")
