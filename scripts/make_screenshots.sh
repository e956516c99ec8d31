#!/usr/bin/env bash
# Regenerates the screenshots of docs/user-guide.md with deberta-viewer's headless --screenshot mode
# (one per panel) under Xvfb.
#   scripts/make_screenshots.sh [VIEWER]     VIEWER defaults to build/bin/deberta-viewer
#   SHOT_MODEL=DIR scripts/make_screenshots.sh   use another model directory (with a tokenizer)
# Uses the bundled model with a sentence when it has a working tokenizer, else the golden v3_emd
# model with token ids (it has no tokenizer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
viewer=${1:-$root/build/bin/deberta-viewer}
[[ -x $viewer ]] || viewer=$root/build-viewer/bin/deberta-viewer
[[ -x $viewer ]] || { echo "make_screenshots: build deberta-viewer first (cmake --build build --target deberta-viewer)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "make_screenshots: xvfb-run missing (apt-get install xvfb xauth libgl1-mesa-dri)" >&2; exit 1; }
out=$root/docs/images
mkdir -p "$out"
cd "$root"  # relative model paths, so the images show no machine-specific folder

bundled=notebooks_data/models/deberta-tiny
# The viewer's default sentence (viewer/lesson/lesson.h kDefaultText): 33 tokens, long enough for the log buckets.
text="In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the [MASK]."
if [[ -n ${SHOT_MODEL:-} ]]; then   # another model directory with a tokenizer
  input=(--model "$SHOT_MODEL" --text "$text")
  sel=2:1:3:2
elif [[ -f $bundled/config.json && -f $bundled/model.safetensors && -f $bundled/spm.model ]]; then
  input=(--model "$bundled" --text "$text")
  sel=2:1:3:2
else
  echo "make_screenshots: the bundled model (with spm.model) is not there yet; using notebooks_data/golden/v3_emd with ids" >&2
  input=(--model notebooks_data/golden/v3_emd --ids 14,43,3,33,29,3,18,3,26,16 --mask-id 3)
  sel=1:0:2:5
fi

shot() {  # shot NAME [viewer options...]
  local name=$1
  shift
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "${input[@]}" --screenshot "$out/$name.png" --frames 5 "$@"
}

shot model       --panel model --crop
shot tokens      --panel tokens --crop
shot grid        --panel grid --select "$sel"
shot head        --panel head --select "$sel"
shot head_hover  --panel head --select "$sel" --mouse 790,265   # a tooltip over a c2p cell
shot distance    --panel distance --select "$sel"
shot distance_hover --panel distance --select "$sel" --mouse 560,330
shot equation    --panel equation --select "$sel"
shot predictions --panel predictions --select "$sel"
shot ablations   --panel ablations --crop --select "$sel" --ablate "--terms c2c,c2p --head-mask 0:1"
shot ablated_grid --panel grid --select "$sel" --ablate "--terms c2c,c2p --head-mask 0:1"
shot export      --panel export --select "$sel"
shot pipeline    --panel pipeline --select "$sel"
shot token_links --panel links --select 1:2
shot lesson_mistake --panel lesson --select 1:2 --lesson-step 8 --lesson-answer 30   # the paper's p2c index: named
shot lesson_step5 --panel lesson --select 1:2 --lesson-step 5 --lesson-answer 22 --lesson-reveal
# Task heads (docs/user-guide.md "Task heads"): the shipped sentence-pair classifier without c2p at
# inference, and the replaced-token-detection strip on the shipped discriminator (or the golden v3_rtd).
classifier=notebooks_data/models/deberta-tiny-wordnet-match
if [[ -f $classifier/model.safetensors ]]; then
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model "$classifier" --text "throne" \
    --pair "the chair of state for a monarch" --panel predictions --ablate "--terms c2c,p2c" \
    --screenshot "$out/classifier_head.png" --frames 5
fi
rtd=notebooks_data/models/deberta-tiny-rtd
if [[ -f $rtd/model.safetensors ]]; then
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model "$rtd" --text "the king sat on his banana and ate the throne ." \
    --panel predictions --screenshot "$out/rtd_head.png" --frames 5
else
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model notebooks_data/golden/v3_rtd --ids 46,30,9,42,15,8,39,44,29,4,36,26 \
    --panel predictions --screenshot "$out/rtd_head.png" --frames 5
fi
echo "make_screenshots: wrote $(ls "$out"/*.png | wc -l) images to $out"
