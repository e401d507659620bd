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

# The CLI talks to the library only: its files import the library's two top modules, MediaSync (the mirror) and
# MediaSyncServe (the mirror's Jellyfin face, built on MediaSync), ArgumentParser and Logging (and the system's
# Foundation/Glibc), nothing below them. SwiftPM's check below allows what a dependency brings along, so this
# one reads the imports.
if stray=$(grep -HnE '^[[:space:]]*(@[A-Za-z_]+ )?import ' Sources/mediasync/*.swift \
    | grep -vE ':[[:space:]]*(@[A-Za-z_]+ )?import (MediaSync|MediaSyncServe|ArgumentParser|Logging|Foundation|Glibc|Dispatch)$'); then
    echo "the CLI imports a module below MediaSync:" >&2
    echo "$stray" >&2
    exit 1
fi

# Every target imports only modules it declares (directly or through a dependency).
swift build --build-tests --explicit-target-dependency-import-check error
swift test --skip-build "$@"
