#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds, runs every test target.
# Usage: Scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh

# Keep SwiftPM's and the tests' temporary files in one place that is removed afterwards.
export TMPDIR="${TMPDIR_OVERRIDE:-$(mktemp -d /tmp/mediasync-test.XXXXXX)}"
trap 'rm -rf "$TMPDIR"' EXIT

swift build --build-tests
swift test --skip-build "$@"
