"""Shared helpers of the teacher-script tests (tests/teacher_scripts, ctest `teacher_scripts`).

The scripts under test (notebooks_data/zoo/make_zoo.py, make_table4.py, paired_stats.py) are copied
into a temporary tree shaped like the repository (tmp/notebooks_data/..., tmp/docs/), so every run
reads and writes only there: the committed zoo, its cards and table4.json are never touched, and
make_zoo's trainer is a stub (no training). TEACHER_SCRIPTS_SRC=<folder> takes the scripts from
another folder instead, e.g. the versions of an older commit (`git show HEAD~1:notebooks_data/
make_zoo.py > <folder>/make_zoo.py`), to see which tests fail on them."""
import ast
import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NOTEBOOKS = os.path.join(REPO, "notebooks_data")
SRC = os.environ.get("TEACHER_SCRIPTS_SRC", NOTEBOOKS)
TIMEOUT = 120   # a hang guard only (a run that never ends fails the test instead of hanging ctest)


def train_tiny_variants():
    """train_tiny.VARIANTS, read from the source with ast (importing train_tiny imports torch)."""
    with open(os.path.join(NOTEBOOKS, "train", "train_tiny.py")) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VARIANTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("notebooks_data/train/train_tiny.py has no VARIANTS = {...}")


def copy_script(root, name):
    """Copy notebooks_data/NAME (from SRC; NAME with its room, e.g. "zoo/make_zoo.py") into
    ROOT/notebooks_data/NAME; returns its path."""
    dst = os.path.join(root, "notebooks_data", name)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(SRC, name), dst)
    return dst


def run(script, *args, env=None, timeout=TIMEOUT):
    """Run SCRIPT with ARGS under this Python; returns the CompletedProcess (text output)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout)


def tree_digest(root):
    """{relative path: bytes} of every file under ROOT: equal before and after means nothing was
    written, created or removed."""
    out = {}
    for d, _, files in os.walk(root):
        for fn in files:
            p = os.path.join(d, fn)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def assert_one_line_error(proc, *needles, argparse_error=False):
    """PROC failed with a message, not a traceback: non-zero exit, no "Traceback", and one line of
    stderr (argparse's usage lines before its "error:" line allowed) holding every NEEDLE."""
    assert proc.returncode != 0, "exit 0; stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines, "no message on stderr"
    if argparse_error:
        assert proc.returncode == 2, proc.stderr
        assert lines[0].startswith("usage:"), proc.stderr
        lines = [l for l in lines if ": error: " in l]
    assert len(lines) == 1, proc.stderr
    for n in needles:
        assert n in lines[0], "%r not in %r" % (n, lines[0])
    return lines[0]


def import_script(root, name):
    """Import notebooks_data/NAME.py (NAME with its room, e.g. "zoo/make_table4"; from SRC, with
    lib/paired_stats.py) from a copy under ROOT; returns the module."""
    import importlib.util
    copy_script(root, "lib/paired_stats.py")
    path = copy_script(root, name + ".py")
    spec = importlib.util.spec_from_file_location("teacher_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
