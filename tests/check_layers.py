#!/usr/bin/env python3
"""The layer rule of core/src (docs/architecture.md): a file may include only headers of its own
layer or of the layers below it, and the equations layer names no part of the engine.

    tensor < backend < equations < model < analysis, io  (analysis and io do not include each other)

and a layer above the backend includes only its door, backend/ops.h.

Public headers (core/include/deberta/*.h) belong to the layer that defines them (LAYER_OF_HEADER);
internal headers belong to the folder they sit in. Exits 1 listing every violation; prints one
line per layer otherwise. Usage: check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

RANK = {"tensor": 0, "backend": 1, "equations": 2, "model": 3, "analysis": 4, "io": 4}

LAYER_OF_HEADER = {
    "tensor.h": "tensor", "terms.h": "tensor", "config.h": "tensor", "weights.h": "tensor",
    "backend.h": "backend",
    "equations.h": "equations",
    "model.h": "model", "ablation.h": "model", "heads.h": "model", "map_weights.h": "model",
    "analysis.h": "analysis", "compare.h": "analysis", "dump.h": "analysis", "explain.h": "analysis",
    "finite.h": "analysis",
    "safetensors.h": "io", "checkpoint.h": "io", "model_io.h": "io", "tokenizer.h": "io", "file_limits.h": "io",
    "output_file.h": "io",
    "inputs.h": "io",
}

# The layers above the backend reach it through ops.h only (and the public deberta/backend.h, which
# picks a backend); its other headers (threading.h, parallel.h, gemm_nt.h, ...) are its own.
BACKEND_DOOR = "backend/ops.h"

# Words of the engine that the paper's layer must not name.
ENGINE_WORDS = re.compile(r"\b(thread\w*|tile\w*|pack\w*|omp\w*|OpenMP|parallel_\w+|LinearJob|gemm\w*|run_tasks|"
                          r"for_row_ranges|kernel\w*|Product|products|rows_done|elementwise|for_rows|tasks|few_rows|"
                          r"BlockFn|RowsFn|fast|reference_on)\b", re.IGNORECASE)


def header_layer(include, here):
    if include.startswith("deberta/"):
        return LAYER_OF_HEADER.get(include[len("deberta/"):])
    folder = include.split("/")[0] if "/" in include else here
    return folder if folder in RANK else None


# The viewer's rooms that draw nothing (docs/architecture.md, "The viewer"): no ImGui, GLFW or GL
# header, at any depth, in either include form.
VIEWER_GL_FREE = ("state", "jobs", "lesson", "i18n", "figures", "export")
GL_HEADER = re.compile(r'\s*#\s*include\s*[<"]((?:imgui|GL/|GLFW/|GLES|backends/imgui|emscripten/html5)[^>"]*)[>"]')


def viewer_rooms(root):
    """Problems of viewer/: a GL-free room that includes a drawing header."""
    problems = []
    for room in VIEWER_GL_FREE:
        for path in sorted((root / "viewer" / room).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".inc"):
                continue
            for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = GL_HEADER.match(line)
                if m:
                    problems.append(f"{path.relative_to(root)}:{line_no}: viewer/{room}/ draws nothing, but includes "
                                    f"{m.group(1)}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    src = root / "core" / "src"
    problems, counts = [], {}
    public = {p.name for p in (root / "core" / "include" / "deberta").glob("*.h")}
    for name in sorted(public - set(LAYER_OF_HEADER)):
        problems.append(f"core/include/deberta/{name}: public header with no layer in check_layers.py")
    files = [(p, p.parent.name) for p in sorted(src.glob("*/*")) if p.suffix in (".h", ".cpp")]
    files += [(root / "core" / "include" / "deberta" / n, LAYER_OF_HEADER[n]) for n in sorted(public & set(LAYER_OF_HEADER))]
    for path, layer in files:
        rel = path.relative_to(root)
        if layer not in RANK:
            problems.append(f"{rel}: folder '{layer}' is not a layer")
            continue
        counts[layer] = counts.get(layer, 0) + 1
        text = path.read_text(encoding="utf-8")
        for line_no, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            target = header_layer(m.group(1), layer)
            if target is None:
                problems.append(f"{rel}:{line_no}: includes {m.group(1)}, which belongs to no layer")
            elif RANK[target] > RANK[layer] or (RANK[target] == RANK[layer] and target != layer):
                problems.append(f"{rel}:{line_no}: the {layer} layer includes {m.group(1)} of the {target} layer")
            elif target == "backend" and layer != "backend" and m.group(1).startswith("backend/") \
                    and m.group(1) != BACKEND_DOOR:
                problems.append(f"{rel}:{line_no}: the {layer} layer includes {m.group(1)}, around the backend's "
                                f"one door {BACKEND_DOOR}")
        if layer == "equations" or path.name == "equations.h":
            code = re.sub(r"//[^\n]*", "", text)  # comments may explain; code may not name the engine
            for word in sorted(set(ENGINE_WORDS.findall(code))):
                problems.append(f"{rel}: the equations name the engine ('{word}')")
    problems += viewer_rooms(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s)")
        return 1
    for layer in sorted(counts, key=lambda l: RANK[l]):
        print(f"check_layers: {layer}: {counts[layer]} files include only their layer and those below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
