#!/usr/bin/env bash
# hostile-input.sh — a server and feeds crafted to hurt, and symlinks planted in the root.
#
# Runs HostileInputTests (and the older hostile-id and planted-symlink tests beside it). Each test runs in its own
# temporary tree holding the mirror's root and "outside" folders with sentinels; an inotify watcher on every folder
# outside the root (plus $TMPDIR and /tmp for names carrying the test's marker) and a before/after snapshot of
# (path, type, inode, size, mtime, link target) must see nothing change. Every item tried appends a row to
# $HOSTILE_INPUT_TSV; this prints the figures: items tried, rejected, sanitised, writes outside the root (bar: 0).
#
# Environment:
#   SWIFT_SCRATCH   swift scratch path (default <repo>/.build)
#   SKIP_BUILD=1    use what is already built there
#   KEEP_TSV=PATH   also keep the raw rows at PATH
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=hostile-input
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_test_rows hostile HOSTILE_INPUT_TSV \
    'HostileInputTests|PlantedSymlinkTests|PlantedStagingTests|PlantedFolderDeletionTests|refusesHostileIds'
passed=$(grep -E '^✔ Test run|^✘ Test run' "$work/test.log" | tail -1 || true)

python3 - "$rows" "$passed" <<'PY'
import sys
from collections import Counter

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
watcher = [r for r in rows if r[0] == "watcher"]
items = [r for r in rows if r[0] != "watcher"]
groups = ["jellyfin", "podcast", "symlink", "gc"]
titles = {"jellyfin": "Jellyfin server (ids, names, versions)", "podcast": "Podcast feeds (guids, podcast:guid, enclosures)",
          "symlink": "Symlinks planted in the root (sync --delete)", "gc": "Symlinks planted in the root (gc)"}
for group in groups:
    chosen = [r for r in items if r[0] == group]
    if not chosen:
        continue
    print(titles[group])
    width = max(len(r[1]) for r in chosen)
    for r in chosen:
        outcome = r[2] if len(r[2]) <= 110 else r[2][:107] + "..."
        print(f"  {r[1].ljust(width)}  {outcome}  (outside: {r[3]})")
    print()

def kind(outcome):
    o = outcome.lower()
    if o.startswith("not") :
        return "NOT REPORTED ONCE"
    if o.startswith("rejected") or o.startswith("refused") or o.startswith("stopped"):
        return "rejected"
    if o.startswith("sanitised"):
        return "sanitised"
    return "mirrored, replaced or removed inside the root"

counts = Counter(kind(r[2]) for r in items)
outside = sum(1 for r in items if r[3].isdigit() and int(r[3]) > 0)
print("Figures")
print(f"  items tried:                   {len(items)}")
print(f"  rejected or refused (reported): {counts['rejected']}")
print(f"  sanitised (stored once):       {counts['sanitised']}")
print(f"  mirrored/replaced in the root: {counts['mirrored, replaced or removed inside the root']}")
print(f"  not reported exactly once:     {counts['NOT REPORTED ONCE']}")
print(f"  writes/deletes outside root:   {outside}   (items whose run changed anything outside the root; bar: 0)")
print(f"  inotify watcher:               {watcher[0][2] if watcher else 'not run'}")
print(f"  tests: {sys.argv[2]}")
PY

ms_failing_expectations
exit $status
