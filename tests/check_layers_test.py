#!/usr/bin/env python3
"""check_layers.py must fail on what it exists to catch (issues 43, 57): the test copies core/ and
the frontends into a temporary tree, plants one violation at a time, and expects exit 1 with a line
naming the file and the problem; the unchanged copy must pass.

    check_layers_test.py SOURCE_DIR
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

EQ = "core/src/equations/equations.cpp"
MODEL = "core/src/model/model.cpp"

# (what is planted, {file: text}, the file the report must name, a phrase the report must hold).
# A text is put before the file's own lines; a file that does not exist is created with it.
PLANTS = [
    ("an include of the backend around ops.h", {EQ: '#include "backend/threading.h"\n'}, EQ,
     "around the backend layer's one door backend/ops.h"),
    ("an include of a layer above", {EQ: '#include "deberta/model.h"\n'}, EQ,
     "includes deberta/model.h of the model layer"),
    ("an engine word in the code", {EQ: "namespace deberta { void planted() { run_tasks(); } }\n"}, EQ,
     "the equations name the engine ('run_tasks')"),
    ("a fused product with callbacks (issue 43, item 2)",
     {EQ: "namespace deberta { void planted() { ops::Product p; p.rows_done = {}; ops::products({p}); } }\n"}, EQ,
     "the equations name the engine ('Product')"),
    # issue 57, item 4
    ("an angle include of a layer above", {EQ: "#include <deberta/model.h>\n"}, EQ,
     "includes deberta/model.h of the model layer"),
    ("an angle include around the backend's door in the model", {MODEL: "#include <backend/threading.h>\n"}, MODEL,
     "the model layer includes backend/threading.h, around the backend layer's one door"),
    ("a header in equations/detail/",
     {"core/src/equations/detail/planted.h": '#pragma once\n#include "deberta/model.h"\n',
      EQ: '#include "equations/detail/planted.h"\n'},
     "core/src/equations/detail/planted.h", "includes deberta/model.h of the model layer"),
    ("a .inc file", {"core/src/equations/planted.inc": "#include <backend/threading.h>\n",
                     EQ: '#include "equations/planted.inc"\n'},
     "core/src/equations/planted.inc", "around the backend layer's one door"),
    ("num_threads() in the equations", {EQ: "namespace deberta { int planted() { return num_threads(); } }\n"}, EQ,
     "the equations name the engine ('num_threads')"),
    ("ops::attention from the equations",
     {EQ: "namespace deberta { void planted() { ops::attention({}, nullptr, false, false); } }\n"}, EQ,
     "the equations call ops::attention"),
    ("ops brought into scope in the equations",
     {EQ: "namespace deberta { using namespace ops; }\n"}, EQ, "the equations bring ops into scope"),
    ("a relative include", {EQ: '#include "../model/planted.h"\n'}, EQ, "a path around the include roots"),
    ("an include of a layer of the same rank", {"core/src/analysis/analysis.cpp": '#include "deberta/model_io.h"\n'},
     "core/src/analysis/analysis.cpp", "the analysis layer includes deberta/model_io.h of the io layer"),
    ("OpenMP outside the backend", {MODEL: "void planted() {\n#pragma omp parallel\n  {}\n}\n"}, MODEL,
     "the model layer uses OpenMP"),
    ("a frontend including an io internal", {"core/cli/cmd_dump.cpp": '#include "io/pickle.h"\n'},
     "core/cli/cmd_dump.cpp", "a frontend includes io/pickle.h"),
    ("the viewer including a backend internal in the angle form",
     {"viewer/state/state.cpp": "#include <backend/ops.h>\n"}, "viewer/state/state.cpp",
     "a frontend includes backend/ops.h"),
    ("a frontend reaching core/src by a relative path",
     {"viewer/jobs/worker.cpp": '#include "../../core/src/io/pickle.h"\n'}, "viewer/jobs/worker.cpp",
     "a frontend includes ../../core/src/io/pickle.h"),
    ("ImGui in a GL-free room of the viewer (issue 57, item 5)", {"viewer/state/state.h": "#include <imgui.h>\n"},
     "viewer/state/state.h:1", "viewer/state/ draws nothing, but includes imgui.h"),
    ("a drawing room's header in a GL-free room of the viewer", {"viewer/export/exporters.cpp": '#include "ui/heatmap.h"\n'},
     "viewer/export/exporters.cpp:1", "viewer/export/ draws nothing, but includes ui/heatmap.h"),
]


def run(root):
    return subprocess.run([sys.executable, str(HERE / "check_layers.py"), str(root)], capture_output=True, text=True)


def main():
    source = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else HERE.parent)
    failures = []
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        root = pathlib.Path(tmp)
        for folder in ("core/src", "core/include", "core/cli", "core/python", "viewer"):
            shutil.copytree(source / folder, root / folder)
        shutil.copy(source / "core" / "layers.txt", root / "core" / "layers.txt")
        clean = run(root)
        if clean.returncode != 0:
            failures.append("the unchanged tree fails:\n" + clean.stdout)
        for what, texts, where, phrase in PLANTS:
            saved = {}
            for rel, text in texts.items():
                path = root / rel
                saved[rel] = path.read_text(encoding="utf-8") if path.exists() else None
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text + (saved[rel] or ""), encoding="utf-8")
            r = run(root)
            reported = [line for line in r.stdout.splitlines() if line.startswith(where) and phrase in line]
            if r.returncode != 1 or not reported:
                failures.append("%s was not reported (exit %d):\n%s" % (what, r.returncode, r.stdout))
            else:
                print("check_layers_test: %s is reported: %s" % (what, reported[0]))
            for rel, text in saved.items():
                if text is None:
                    (root / rel).unlink()
                else:
                    (root / rel).write_text(text, encoding="utf-8")
        restored = run(root)
        if restored.returncode != 0:
            failures.append("the tree with every plant removed fails:\n" + restored.stdout)
    for f in failures:
        print("check_layers_test: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
