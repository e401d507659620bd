#!/usr/bin/env bash
# Runs the whole test suite with its output captured, then counts the test suite's known secrets in that output
# (the test libraries' access tokens and API keys, the secrets suite's token, API key and password). Must be 0.
# Usage: Scripts/check-secrets.sh [--scratch-path DIR]   (other arguments go to `swift build` and `swift test`)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
export TMPDIR="${TMPDIR_OVERRIDE:-$(mktemp -d /tmp/mediasync-secrets.XXXXXX)}"
trap 'rm -rf "$TMPDIR"' EXIT

swift build --build-tests "$@"
list="$TMPDIR/secrets.txt"
MEDIASYNC_SECRETS_LIST="$list" swift test --skip-build "$@" --filter SecretsListTests >/dev/null 2>&1
[ -s "$list" ] || { echo "check-secrets: the list of known secrets was not written" >&2; exit 1; }

log="${CHECK_SECRETS_LOG:-$TMPDIR/test-output.log}"
status=0
swift test --skip-build "$@" >"$log" 2>&1 || status=$?
summary=$({ grep -E "Test run with [0-9]+ tests" "$log" || true; } | tail -1 | sed 's/^[^T]*//')

total=0
while IFS= read -r secret; do
    [ -n "$secret" ] || continue
    count=$({ grep -o -F -- "$secret" "$log" || true; } | wc -l)
    if [ "$count" -gt 0 ]; then
        echo "check-secrets: ${secret:0:6}… appears $count times:" >&2
        grep -n -F -- "$secret" "$log" | head -5 | cut -c1-300 >&2
    fi
    total=$((total + count))
done <"$list"

echo "check-secrets: ${summary:-no test summary found}"
echo "check-secrets: $(wc -l <"$list") secrets looked for in $(wc -l <"$log") lines of test output: $total occurrences"
[ "$status" -eq 0 ] || { echo "check-secrets: the test suite failed (exit $status); see $log" >&2; exit "$status"; }
[ "$total" -eq 0 ]
