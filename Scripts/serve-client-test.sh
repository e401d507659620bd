#!/usr/bin/env bash
# Drives `mediasync serve` with a third-party Jellyfin client (jellyfin-apiclient-python from PyPI, in a venv under
# .build/serve-client-venv): sign-in, views, items, seasons, episodes, playback info, a ranged stream, a stop report
# and a played mark, then checks the marks wait in the index for the next sync; and reads a video's chapters,
# trickplay (the playlist and its tiles) and media segments, and the books view (audiobooks, a book in parts, books
# and their files), into jellyfin-api-client's OpenAPI models (PyPI, installed in the same venv).
# Skipped, saying so, where python3 is missing or pip cannot install the packages.
# Usage: Scripts/serve-client-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build --filter ThirdPartyClientTests
