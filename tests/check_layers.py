#!/usr/bin/env python3
"""The layer rule of core/src (docs/architecture.md), the second line behind the compiler.

    tensor < backend < equations < model < analysis, io  (analysis and io do not include each other)

core/layers.txt lists the layers, the door of a layer (the one internal header the layers above
include: backend/ops.h) and the layer of each public header (core/include/deberta/*.h). The build
gives each layer's object library only those headers (core/CMakeLists.txt), so most violations
below do not compile either; this check names them all at once, and also what an include root
cannot see:

  core/src     every file at any depth (nested folders, .h, .cpp, .inc, ...), both include forms
               ("…" and <…>): a header of a higher layer or of a layer of the same rank, a lower
               layer's internal header other than its door, a relative path (../) or a computed
               include (#include MACRO), OpenMP outside the backend (#pragma omp, <omp.h>, omp_*)
  public       core/include/deberta/*.h: each in one layer, including only public headers
  equations    the paper names no part of the engine (ENGINE_WORDS) and calls only the ops of
               EQUATIONS_OPS (no ops::attention, no num_threads())
  frontends    core/cli, core/python, viewer/ (desktop and web): public headers only (deberta/*.h),
               apart from FRONTEND_EXCEPTIONS, each with its reason
  viewer       the rooms that draw nothing include no ImGui, GLFW or GL header

Exits 1 listing every violation; prints one line per layer otherwise.
Usage: check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:([<"])([^>"]*)[>"]|(\S.*))')
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".inc", ".ipp")


def read_layers(root):
    """core/layers.txt: {layer: rank}, {layer: door or None}, {public header: layer}."""
    rank, door, layer_of_header = {}, {}, {}
    for line in (root / "core" / "layers.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        layer, r, d, *headers = line.split()
        rank[layer], door[layer] = int(r), (None if d == "-" else f"{layer}/{d}")
        for h in headers:
            layer_of_header[h] = layer
    return rank, door, layer_of_header


# The ops the equations call, by name: a product y = x Wᵀ + b and the exact GELU; and the hand-over
# of eq. 4 (issue 57, item 1): the equations give their attention_head to the reference backend as
# its ops::attention (set_reference_attention, with the op's operand and result types), so the
# reference engine's attention is the equation itself. Everything else of ops.h (attention itself,
# products with fused steps, tasks, for_rows, the tied decoder, packing) is the engine's or the
# model's business; a new one here is a decision about the paper's layer.
EQUATIONS_OPS = {"linear", "gelu_erf", "set_reference_attention", "AttentionHead", "AttentionResult"}

# Words of the engine that the paper's layer must not name (its code, not its comments).
ENGINE_WORDS = re.compile(r"\b(\w*thread\w*|tile\w*|pack\w*|omp\w*|OpenMP|parallel_\w+|LinearJob|gemm\w*|run_tasks|"
                          r"for_row_ranges|kernel\w*|Product|products|rows_done|elementwise|for_rows|tasks|few_rows|"
                          r"BlockFn|RowsFn|fast|reference_on|\w*backend\w*)\b", re.IGNORECASE)
OPS_NAME = re.compile(r"\bops\s*::\s*(\w+)")
OPS_ALIAS = re.compile(r"\busing\s+namespace\s+(?:::)?(?:deberta\s*::\s*)?ops\b|\bnamespace\s+\w+\s*=\s*(?:::)?"
                       r"(?:deberta\s*::\s*)?ops\b|\busing\s+(?:::)?(?:deberta\s*::\s*)?ops\s*::")

# The frontends: they include the core's public headers (deberta/*.h) and their own files only.
FRONTENDS = ("core/cli", "core/python", "viewer")
# Internal headers a frontend file may include, and why. Each entry must still be needed.
FRONTEND_EXCEPTIONS = {
    ("core/cli/cmd_bench.cpp", "analysis/bench.h"):
        "the seeded preset models and the FLOP count are the measuring tools of `deberta bench`, not API",
    ("viewer/jobs/bench_rerun.cpp", "analysis/bench.h"):
        "--bench-rerun times the worker on the same preset models as `deberta bench`",
    ("viewer/web/bench/forward_bench.cpp", "analysis/bench.h"):
        "the web edition's forward bench times the same input as `deberta bench` (bench_inputs)",
    ("viewer/web/page/web_io_unavailable.cpp", "io/tokenizer_detail.h"):
        "the web edition's stand-in for the io layer's PCRE2 readers (tokenizer_bpe.cpp, tokenizer_regex.cpp): "
        "it defines io internals (compiled into the web build's core library), it does not use them",
    ("viewer/web/page/web_io_unavailable.cpp", "io/tokenizer_pipeline.h"):
        "the same stand-in: Regex::compile is declared there",
}

# The viewer's rooms that draw nothing (docs/architecture.md, "The viewer"): no ImGui, GLFW or GL
# header, at any depth, in either include form.
VIEWER_GL_FREE = ("state", "jobs", "lesson", "i18n", "figures", "export")
GL_HEADER = re.compile(r'\s*#\s*include\s*[<"]((?:imgui|GL/|GLFW/|GLES|backends/imgui|emscripten/html5)[^>"]*)[>"]')
# Nor a header of the rooms that draw (ui/, panels/, app/): they include ImGui themselves.
DRAWING_ROOM_HEADER = re.compile(r'\s*#\s*include\s*[<"]((?:ui|panels|app)/[^>"]*)[>"]')


def source_files(folder):
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in SOURCE_SUFFIXES]


def includes(text):
    """(line number, form '<' or '"' or '' for a computed include, path) of each #include."""
    for line_no, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            yield (line_no, m.group(1), m.group(2)) if m.group(1) else (line_no, "", m.group(3).strip())


def without_comments(text):
    """The code of a file: comments, string literals and #include lines removed."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"^\s*#\s*include[^\n]*", "", text, flags=re.MULTILINE)


class Layers:
    def __init__(self, root):
        self.root = root
        self.rank, self.door, self.layer_of_header = read_layers(root)

    def include_problem(self, layer, form, inc, public):
        """Why a file of `layer` may not include `inc` (None: it may). `public`: the file is a public header."""
        if form == "":
            return f"includes {inc}, a computed include the layer check cannot read"
        if inc.startswith("/") or ".." in inc.split("/"):
            return f"includes {inc}, a path around the include roots"
        first = inc.split("/")[0]
        if inc.startswith("deberta/"):
            target = self.layer_of_header.get(inc[len("deberta/"):])
            if target is None:
                return f"includes {inc}, which belongs to no layer (core/layers.txt)"
        elif "/" in inc and first in self.rank:
            target = first
            if public:
                return f"includes {inc}, an internal header, from an installed header"
            if target != layer and self.rank[target] < self.rank[layer] and inc != self.door[target]:
                door = self.door[target]
                return (f"includes {inc}, around the {target} layer's one door {door}" if door else
                        f"includes {inc}, an internal header of the {target} layer (it has no door)")
        elif form == "<":
            if inc == "omp.h" and layer != "backend":
                return "includes <omp.h>: OpenMP is the backend's"
            return None  # the standard library, Eigen, nlohmann-json, the readers' libraries
        elif "/" not in inc:
            return None  # a file of the same folder
        else:
            return f"includes {inc}, which belongs to no layer"
        if self.rank[target] > self.rank[layer] or (self.rank[target] == self.rank[layer] and target != layer):
            return f"includes {inc} of the {target} layer"
        return None

    def check_core(self):
        root, problems, counts = self.root, [], {}
        public_dir = root / "core" / "include" / "deberta"
        public = {p.name for p in public_dir.glob("*.h")}
        for name in sorted(public - set(self.layer_of_header)):
            problems.append(f"core/include/deberta/{name}: public header in no layer of core/layers.txt")
        for name in sorted(set(self.layer_of_header) - public):
            problems.append(f"core/layers.txt: lists deberta/{name}, which is not in core/include/deberta/")
        files = []
        for path in source_files(root / "core" / "src"):
            parts = path.relative_to(root / "core" / "src").parts
            files.append((path, parts[0] if len(parts) > 1 else None, False))
        files += [(public_dir / n, self.layer_of_header[n], True) for n in sorted(public & set(self.layer_of_header))]
        for path, layer, is_public in files:
            rel = path.relative_to(root)
            if layer not in self.rank:
                problems.append(f"{rel}: not in a layer's folder of core/layers.txt")
                continue
            counts[layer] = counts.get(layer, 0) + 1
            text = path.read_text(encoding="utf-8", errors="replace")
            for line_no, form, inc in includes(text):
                why = self.include_problem(layer, form, inc, is_public)
                if why:
                    problems.append(f"{rel}:{line_no}: the {layer} layer {why}")
            code = without_comments(text)
            if layer != "backend" and re.search(r"^\s*#\s*pragma\s+omp\b|\bomp_\w+\s*\(", code, re.MULTILINE):
                problems.append(f"{rel}: the {layer} layer uses OpenMP, which is the backend's")
            if layer == "equations":
                problems += self.check_equations(rel, code)
        return problems, counts

    def check_equations(self, rel, code):
        problems = [f"{rel}: the equations name the engine ('{w}')" for w in sorted(set(ENGINE_WORDS.findall(code)))]
        for name in sorted(set(OPS_NAME.findall(code)) - EQUATIONS_OPS):
            problems.append(f"{rel}: the equations call ops::{name}; theirs are only {', '.join(sorted(EQUATIONS_OPS))}")
        if OPS_ALIAS.search(code):
            problems.append(f"{rel}: the equations bring ops into scope (using / namespace alias); call ops::<name>")
        return problems

    def check_frontends(self):
        """Frontend files include public headers and their own files; FRONTEND_EXCEPTIONS name the rest."""
        root, problems, used = self.root, [], set()
        src = (root / "core" / "src").resolve()
        for frontend in FRONTENDS:
            base = root / frontend
            for path in source_files(base) if base.is_dir() else []:
                rel = path.relative_to(root).as_posix()
                for line_no, form, inc in includes(path.read_text(encoding="utf-8", errors="replace")):
                    if form == "" or inc.startswith("deberta/") and inc[len("deberta/"):] in self.layer_of_header:
                        continue
                    local = [c for c in (path.parent / inc, base / inc) if c.exists()]
                    inside_core = any(src in c.resolve().parents for c in local)
                    if local and not inside_core:
                        continue  # the frontend's own file
                    internal = inside_core or inc.split("/")[0] in self.rank or inc.startswith("deberta/")
                    if not internal:
                        continue  # a system or third-party header
                    if (rel, inc) in FRONTEND_EXCEPTIONS:
                        used.add((rel, inc))
                        continue
                    problems.append(f"{rel}:{line_no}: a frontend includes {inc}, not a public header (deberta/*.h)")
        for (rel, inc) in sorted(set(FRONTEND_EXCEPTIONS) - used):
            if any(rel.startswith(f + "/") and (root / f).is_dir() for f in FRONTENDS):
                problems.append(f"{rel}: FRONTEND_EXCEPTIONS lets it include {inc}, which it no longer does")
        return problems


def viewer_rooms(root):
    """Problems of viewer/: a GL-free room that includes a drawing header (ImGui, GLFW, GL, or a
    header of ui/, panels/, app/, which include them)."""
    problems = []
    for room in VIEWER_GL_FREE:
        for path in sorted((root / "viewer" / room).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".inc"):
                continue
            for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = GL_HEADER.match(line) or DRAWING_ROOM_HEADER.match(line)
                if m:
                    problems.append(f"{path.relative_to(root)}:{line_no}: viewer/{room}/ draws nothing, but includes "
                                    f"{m.group(1)}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    layers = Layers(root)
    problems, counts = layers.check_core()
    problems += layers.check_frontends()
    problems += viewer_rooms(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s)")
        return 1
    for layer in sorted(counts, key=lambda l: layers.rank[l]):
        print(f"check_layers: {layer}: {counts[layer]} files include only their layer and those below")
    print("check_layers: the frontends include public headers only (and FRONTEND_EXCEPTIONS)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
