#!/usr/bin/env bash
# lang_test.sh — the desktop viewer in the reader's language (issue 40, item 5; docs/i18n.md).
# On the bundled deberta-tiny, lesson step 5 answered 6 ("forgot to add b/2 after the ceiling"):
#   - for each of ko, ja, zh_CN, it (--lang): the verdict line keeps its ASCII words for scripts
#     ("lesson: step 5, answer 6: wrong: ") and names the mistake in that language (Hangul, Kana,
#     Han; Italian other than the English), every character of the interface has a glyph (no
#     "font:" report) and the screenshot is a full window;
#   - without --lang the environment chooses, as gettext does: LANG=ja_JP.UTF-8 gives the Japanese
#     line, LANGUAGE=fr:ko the Korean one, LC_ALL=fr_FR.UTF-8 (no catalogue) the English one;
#   - --lang fr is refused with the list of languages (exit 2).
#   lang_test.sh VIEWER CHECKER OUT_DIR SOURCE_DIR
set -u
viewer=$1 checker=$2 out=$3 src=$4
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
model=$src/notebooks_data/models/deberta-tiny
text="In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the [MASK]."
run() {  # run NAME [ENV…] -- [OPTIONS…]: the viewer's output; the screenshot in OUT_DIR/NAME.png
  local name=$1; shift
  local envs=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do envs+=("$1"); shift; done
  shift
  env -u LANGUAGE -u LC_ALL -u LC_MESSAGES -u LANG "${envs[@]}" xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" \
    --model "$model" --text "$text" --lesson-step 5 --lesson-answer 6 --frames 6 --screenshot "$out/$name.png" "$@" 2>&1
}
verdict() { grep "^lesson: step 5, answer 6: " <<<"$1"; }
has_script() {  # has_script TEXT LANG: the text has characters of the language's script
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
text, lang = sys.argv[1], sys.argv[2]
pattern = {"ko": "[\uac00-\ud7a3]", "ja": "[\u3040-\u30ff]", "zh_CN": "[\u4e00-\u9fff]", "it": "[A-Za-zàèéìòù]"}[lang]
sys.exit(0 if re.search(pattern, text) else 1)
PY
}

log=$(run lang_en -- --lang en) || { echo "$log"; fail "the English run failed"; }
english=$(verdict "$log")
echo "en: $english"
[[ "$english" == "lesson: step 5, answer 6: wrong: forgot to add b/2 after the ceiling" ]] || fail "unexpected English verdict: $english"

declare -A line
for lang in ko ja zh_CN it; do
  log=$(run "lang_$lang" -- --lang "$lang") || { echo "$log"; fail "--lang $lang failed"; }
  line[$lang]=$(verdict "$log")
  echo "$lang: ${line[$lang]}"
  grep "^font:" <<<"$log" && fail "--lang $lang: characters without a glyph"
  [[ "${line[$lang]}" == "lesson: step 5, answer 6: wrong: "* ]] || fail "--lang $lang: the verdict's ASCII words changed"
  mistake=${line[$lang]#lesson: step 5, answer 6: wrong: }
  [[ "$mistake" != "forgot to add b/2 after the ceiling" ]] || fail "--lang $lang: the mistake is still English"
  has_script "$mistake" "$lang" || fail "--lang $lang: the mistake '$mistake' is not in the language's script"
  [[ "$mistake" == *"b/2"* ]] || fail "--lang $lang: the paper's symbol b/2 was lost: $mistake"
  "$checker" "$out/lang_$lang.png" --size 1280x800 --min-colors 300 || fail "--lang $lang: the screenshot"
done

log=$(run lang_env_ja LANG=ja_JP.UTF-8 --) || { echo "$log"; fail "LANG=ja_JP.UTF-8 failed"; }
[[ "$(verdict "$log")" == "${line[ja]}" ]] || fail "LANG=ja_JP.UTF-8 gave: $(verdict "$log")"
log=$(run lang_env_list LANGUAGE=fr:ko LANG=it_IT.UTF-8 --) || { echo "$log"; fail "LANGUAGE=fr:ko failed"; }
[[ "$(verdict "$log")" == "${line[ko]}" ]] || fail "LANGUAGE=fr:ko gave: $(verdict "$log")"
log=$(run lang_env_fr LC_ALL=fr_FR.UTF-8 LANG=ko_KR.UTF-8 --) || { echo "$log"; fail "LC_ALL=fr_FR.UTF-8 failed"; }
[[ "$(verdict "$log")" == "$english" ]] || fail "LC_ALL=fr_FR.UTF-8 gave: $(verdict "$log")"

log=$("$viewer" --lang fr --model "$model" 2>&1); rc=$?
echo "--lang fr: exit $rc: $log"
[[ $rc -eq 2 && "$log" == *"no catalogue for 'fr' (available: en, it, ja, ko, zh_CN)"* ]] || fail "--lang fr was not refused"
echo "lang: 4 languages, the environment's choice and the refusal passed"
