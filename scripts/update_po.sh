#!/usr/bin/env bash
# update_po.sh — the translators' step (issue 40, docs/i18n.md): extracts the interface's strings
# from the viewer's sources into viewer/i18n/po/deberta-explorer.pot (xgettext) and merges them into the
# languages' catalogues viewer/i18n/po/LANG.po (msgmerge): new strings arrive untranslated, changed ones
# fuzzy, and tests/i18n_check.py fails until a translator has seen every one.
#   bash scripts/update_po.sh             the template and every catalogue
#   bash scripts/update_po.sh ko ja       the template and these catalogues only
#   bash scripts/update_po.sh --pot-only  the template only
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/i18n_sources.sh
pot=viewer/i18n/po/deberta-explorer.pot
new=$(mktemp viewer/i18n/po/.pot.XXXXXX)
i18n_extract "$new"
# The creation date changes on every run: keep the old template when nothing else did.
if [[ -f "$pot" ]] && diff -q <(grep -v '^"POT-Creation-Date' "$pot") <(grep -v '^"POT-Creation-Date' "$new") >/dev/null; then
  rm "$new"
else
  chmod 644 "$new" && mv "$new" "$pot"
fi
[[ "${1:-}" == "--pot-only" ]] && exit 0
langs=("$@")
if [[ ${#langs[@]} -eq 0 ]]; then
  for po in viewer/i18n/po/*.po; do langs+=("$(basename "$po" .po)"); done
fi
for lang in "${langs[@]}"; do
  po=viewer/i18n/po/$lang.po
  if [[ ! -f "$po" ]]; then
    msginit --no-translator --no-wrap -l "$lang.UTF-8" -i "$pot" -o "$po" 2>/dev/null
  else
    msgmerge --quiet --update --backup=none --no-wrap "$po" "$pot"
  fi
  echo "$po: $(msgfmt --check --statistics -o /dev/null "$po" 2>&1)"
done
