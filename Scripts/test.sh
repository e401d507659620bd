#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds, runs every test target.
# Usage: Scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
bash Scripts/check-docs.sh

# Keep SwiftPM's and the tests' temporary files in one place that is removed afterwards.
export TMPDIR="${TMPDIR_OVERRIDE:-$(mktemp -d /tmp/mediasync-test.XXXXXX)}"
trap 'rm -rf "$TMPDIR"' EXIT

# Style: swift-format (part of the toolchain) with the repository's .swift-format; any finding fails the run.
swift format lint --strict --recursive --parallel Sources Tests Fuzz Package.swift

# The CLI talks to the library only: its files import the library's front door, MediaSync (which re-exports the
# mirror and its Jellyfin face for `serve`), ArgumentParser and Logging (and the system's Foundation/Glibc), nothing
# below it. SwiftPM's check below allows what a dependency brings along, so this one reads the imports.
if stray=$(grep -HnE '^[[:space:]]*(@[A-Za-z_]+ )?import ' Sources/mediasync/*.swift \
    | grep -vE ':[[:space:]]*(@[A-Za-z_]+ )?import (MediaSync|ArgumentParser|Logging|Foundation|Glibc|Dispatch)$'); then
    echo "the CLI imports a module below MediaSync:" >&2
    echo "$stray" >&2
    exit 1
fi

# Every target imports only modules it declares (directly or through a dependency).
swift build --build-tests --explicit-target-dependency-import-check error

# A test that hangs is named, not waited out: the suite takes about five minutes, so after forty the run is stopped
# (with every process it started) and the tests that started and never ended are listed.
log="$TMPDIR/swift-test.log"
set +e
timeout --kill-after=30 "${MEDIASYNC_TEST_TIMEOUT:-2400}" swift test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    # swift test runs the test bundle in a process group of its own, which the timeout does not reach.
    pkill -KILL -f -- "$PWD/.build/.*PackageTests.xctest" || true
    echo "test.sh: the test run was stopped after ${MEDIASYNC_TEST_TIMEOUT:-2400} s; started and never ended:" >&2
    awk '
        /^◇ Test .* started\.$/ && !/^◇ Test (case passing |run started)/ {
            name = substr($0, index($0, "Test ") + 5); sub(/ started\.$/, "", name); open[name] = 1
        }
        /^(✔|✘) Test .* (passed|failed) after / {
            name = substr($0, index($0, "Test ") + 5)
            sub(/ (passed|failed) after .*$/, "", name)
            sub(/ with [0-9]+ test cases?$/, "", name)
            delete open[name]
        }
        END { for (name in open) print "  " name }
    ' "$log" >&2
fi
exit "$status"
