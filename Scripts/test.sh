#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds, runs every test target.
# Usage: Scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh

# Keep SwiftPM's and the tests' temporary files in one place that is removed afterwards.
export TMPDIR="${TMPDIR_OVERRIDE:-$(mktemp -d /tmp/mediasync-test.XXXXXX)}"
trap 'rm -rf "$TMPDIR"' EXIT

# Style: swift-format (part of the toolchain) with the repository's .swift-format; any finding fails the run.
swift format lint --strict --recursive --parallel Sources Tests Fuzz Package.swift

swift build --build-tests
swift test --skip-build "$@"
