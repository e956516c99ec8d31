"""Shared helpers of the deberta_explorer tests (run by ctest as `python_module`).

Environment (set by core/python/CMakeLists.txt): PYTHONPATH holds the built module, DEBERTA_CLI is
the `deberta` binary, DEBERTA_SOURCE_DIR the repository. A missing one is a failure, not a skip.
"""
import json
import os
import pathlib
import struct
import subprocess

import numpy as np
import pytest


def _env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set (run these tests through ctest, or set it by hand)")
    return value


@pytest.fixture(scope="session")
def cli():
    path = _env("DEBERTA_CLI")
    assert os.access(path, os.X_OK), f"DEBERTA_CLI={path} is not an executable"
    return path


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(_env("DEBERTA_SOURCE_DIR"))


def golden_cases(source):
    """(case directory, inputs file) of every case in notebooks_data/golden and golden_extra."""
    cases = []
    for d in sorted((source / "notebooks_data" / "golden").iterdir()):
        if (d / "golden.safetensors").exists():
            cases.append((d, d / "golden.safetensors"))
    for d in sorted((source / "notebooks_data" / "golden_extra").iterdir()):
        if (d / "inputs.safetensors").exists():
            cases.append((d, d / "inputs.safetensors"))
    return cases


_DTYPES = {"F64": "<f8", "F32": "<f4", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def read_safetensors(path):
    """A safetensors file as {name: ndarray}, read here with NumPy alone (independent of the module)."""
    data = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(body[begin:end], dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def run_cli(cli, *args):
    """Runs `deberta ARGS`; fails the test with its stderr when it exits non-zero."""
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"deberta {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}"
    return r.stdout
