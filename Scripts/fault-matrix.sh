#!/usr/bin/env bash
# fault-matrix.sh — every fault of the test server crossed with the moment it happens.
#
# Runs FaultMatrixTests (library level: MirrorSync against the in-process test server, with --delete; each cell
# checks the outcome and that nothing was lost: every file under Downloads/ is the server's exact bytes or absent,
# the index agrees with the tree, files mirrored before are untouched, the next sync is clean) and
# FaultExitCodeTests (the mediasync binary: exit codes of the cells a scheduler acts on), then prints the
# matrix (cell → outcome) from the rows the tests append to $FAULT_MATRIX_TSV.
#
# Environment:
#   SWIFT_SCRATCH   swift scratch path (default <repo>/.build)
#   SKIP_BUILD=1    use what is already built there
#   KEEP_TSV=PATH   also keep the raw rows at PATH
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCRIPT_NAME=fault-matrix
# shellcheck source=lib/common.sh
. "$SCRIPT_DIR/lib/common.sh"
cd "$REPO_DIR"

ms_test_rows faults FAULT_MATRIX_TSV 'FaultMatrixTests|FaultExitCodeTests'

python3 - "$rows" <<'EOF'
import sys

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
faults = [
    "reset after K bytes", "body shorter than Content-Length", "500", "502", "503", "429 + Retry-After: 1",
    "503 + Retry-After: 1", "stall past the low-speed limit", "401 in the middle of a run", "404",
    "200 instead of 206 on resume", "416 on resume", "Last-Modified changes between attempts", "redirect loop",
    "body not JSON (an HTML page)", "TotalRecordCount above the real count", "TotalRecordCount below the real count",
]
moments = ["listing", "media", "image", "subtitle", "feed", "enclosure"]
short = {
    "recovered": "recovered", "source error": "source err", "source error, needs sign-in": "source err+auth",
    "failed (essential)": "failed", "failed (optional)": "failed(opt)",
    "failed (essential), needs sign-in": "failed+auth", "failed (optional), needs sign-in": "failed(opt)+auth",
    "n/a": "n/a",
}
cells, cli, reasons = {}, {}, {}
for row in rows:
    if row[0] == "cli":
        cli[(row[1], row[2])] = row[3:]
    else:
        cells[(row[0], row[1])] = row[2:]

def mark(key):
    if key not in cells:
        return "MISSING"
    observed, expected, lost, follow = cells[key][:4]
    text = short.get(observed, observed)
    if observed == "n/a":
        return text
    if observed != expected:
        text += " (!= " + short.get(expected, expected) + ")"
    if lost != "yes":
        text += " LOST"
    if follow != "clean":
        text += " NEXT-FAILED"
    if key in cli:
        text += " [exit " + cli[key][0].split()[-1] + "]"
    return text

width = max(len(f) for f in faults)
cols = [max(len(m), *(len(mark((f, m))) for f in faults)) for m in moments]
print("Fault matrix (library sync with --delete; [exit N] = the mediasync binary's exit code for that cell)")
print()
print(" " * width + " | " + " | ".join(m.ljust(c) for m, c in zip(moments, cols)))
print("-" * width + "-+-" + "-+-".join("-" * c for c in cols))
for fault in faults:
    print(fault.ljust(width) + " | " + " | ".join(mark((fault, m)).ljust(c) for m, c in zip(moments, cols)))
print()
run = [v for v in cells.values() if v[0] != "n/a"]
na = [k for k, v in cells.items() if v[0] == "n/a"]
print(f"cells run: {len(run)}; as expected: {sum(v[0] == v[1] for v in run)}; nothing lost: "
      f"{sum(v[2] == 'yes' for v in run)}; next sync clean: {sum(v[3] == 'clean' for v in run)}; "
      f"not applicable: {len(na)}")
cli_ok = sum(v[0] == v[1] and v[2] == "exit 0" for v in cli.values())
print(f"CLI cells run: {len(cli)}; exit code as expected and the next run exit 0: {cli_ok}")
print()
print("Why some cells do not apply:")
for (fault, moment) in sorted(na, key=lambda k: (faults.index(k[0]) if k[0] in faults else 99, moments.index(k[1]))):
    print(f"  {fault} × {moment}: {cells[(fault, moment)][5]}")
print()
print("What the errors said (one per failing cell):")
for fault in faults:
    for moment in moments:
        value = cells.get((fault, moment))
        if value and value[0] not in ("n/a", "recovered") and len(value) > 5:
            print(f"  {fault} × {moment}: {value[5]}")
EOF

ms_failing_expectations
exit $status
