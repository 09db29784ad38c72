#!/bin/sh
# Rebuild the PDFs in docs/ from the HTML sources here (needs Chromium).
cd "$(dirname "$0")"
for pair in "marbles.html:../docs/marbles-manual.pdf" "beads.html:../docs/beads-manual.pdf" "sensebox-home.html:../docs/sensebox-home-anleitung.pdf"; do
  src=${pair%%:*}; out=${pair#*:}
  [ -f "$src" ] || continue
  profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" \
    --print-to-pdf="$out" --no-pdf-header-footer "file://$PWD/$src" 2>/dev/null
  rm -rf "$profile"
done
