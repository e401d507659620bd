#!/usr/bin/env bash
# Regenerates docs/man/mediasync.1 from the commands' own help, with swift-argument-parser's generate-manual plugin.
# Usage: Scripts/make-manual.sh [--head]
#   --head  generate from the last commit (a clean copy in a temporary folder) instead of the working tree, so
#           uncommitted changes in progress neither break the build nor reach the page.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

source_dir=$repo
if [ "${1:-}" = "--head" ]; then
    source_dir=$(mktemp -d /tmp/mediasync-manual.XXXXXX)
    trap 'rm -rf "$source_dir"' EXIT
    git archive HEAD | tar -x -C "$source_dir"
    # The dependencies already resolved here, so that no network is needed.
    mkdir -p "$source_dir/.build"
    for part in checkouts repositories workspace-state.json; do
        [ -e ".build/$part" ] && cp -a ".build/$part" "$source_dir/.build/"
    done
fi

# The plugin builds the mediasync product (a debug build is enough for its help) and writes one page.
(cd "$source_dir" && swift package --disable-sandbox --allow-writing-to-package-directory \
    generate-manual --configuration debug)
page="$source_dir/.build/plugins/GenerateManual/outputs/mediasync/mediasync.1"
[ -s "$page" ] || { echo "make-manual: the plugin wrote no $page" >&2; exit 1; }
mkdir -p docs/man
cp "$page" docs/man/mediasync.1
echo "make-manual: wrote docs/man/mediasync.1 ($(wc -l <docs/man/mediasync.1) lines)"
