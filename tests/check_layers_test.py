#!/usr/bin/env python3
"""check_layers.py must fail on what it exists to catch (issue 43): each case copies core/ into a
temporary tree, plants one violation in the equations layer, and expects exit 1 with a line naming
the file and the problem; the unchanged copy must pass.

    check_layers_test.py SOURCE_DIR
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

# (what is planted, the text added to core/src/equations/equations.cpp, a phrase the report must hold)
PLANTS = [
    ("an include of the backend around ops.h", '#include "backend/threading.h"\n', "around the backend's one door"),
    ("an include of a layer above", '#include "deberta/model.h"\n', "includes deberta/model.h of the model layer"),
    ("an engine word in the code", "namespace deberta { void planted() { run_tasks(); } }\n",
     "the equations name the engine ('run_tasks')"),
    ("a fused product with callbacks (issue 43, item 2)",
     "namespace deberta { void planted() { ops::Product p; p.rows_done = {}; ops::products({p}); } }\n",
     "the equations name the engine ('Product')"),
]


def run(root):
    return subprocess.run([sys.executable, str(HERE / "check_layers.py"), str(root)], capture_output=True, text=True)


def main():
    source = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else HERE.parent)
    failures = []
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        root = pathlib.Path(tmp)
        shutil.copytree(source / "core" / "src", root / "core" / "src")
        shutil.copytree(source / "core" / "include", root / "core" / "include")
        target = root / "core" / "src" / "equations" / "equations.cpp"
        original = target.read_text(encoding="utf-8")
        clean = run(root)
        if clean.returncode != 0:
            failures.append("the unchanged tree fails:\n" + clean.stdout)
        for what, text, phrase in PLANTS:
            target.write_text(text + original, encoding="utf-8")
            r = run(root)
            if r.returncode != 1 or phrase not in r.stdout or "core/src/equations/equations.cpp" not in r.stdout:
                failures.append("%s was not reported (exit %d):\n%s" % (what, r.returncode, r.stdout))
            else:
                print("check_layers_test: %s is reported" % what)
        target.write_text(original, encoding="utf-8")
        # The viewer's GL-free rooms (issue 57, item 5): ImGui in viewer/state/ is reported.
        shutil.copytree(source / "viewer" / "state", root / "viewer" / "state")
        state_h = root / "viewer" / "state" / "state.h"
        state_h.write_text("#include <imgui.h>\n" + state_h.read_text(encoding="utf-8"), encoding="utf-8")
        r = run(root)
        if r.returncode != 1 or "viewer/state/state.h:1: viewer/state/ draws nothing, but includes imgui.h" not in r.stdout:
            failures.append("ImGui in viewer/state/ was not reported (exit %d):\n%s" % (r.returncode, r.stdout))
        else:
            print("check_layers_test: ImGui in a GL-free room of the viewer is reported")
    for f in failures:
        print("check_layers_test: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
