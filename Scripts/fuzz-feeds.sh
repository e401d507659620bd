#!/usr/bin/env bash
# Fuzzes the feed and OPML parsers with libFuzzer (coverage-guided) under AddressSanitizer.
# Usage: Scripts/fuzz-feeds.sh [SECONDS]   (default 60)
#
# Builds the `mediasync-fuzz-feeds` target with `-sanitize=fuzzer,address` into .build-libfuzzer (the normal build
# makes it a replayer: `mediasync-fuzz-feeds FILE...`), seeds a corpus with the golden fixtures, the OPML fixtures and
# the crashers found so far, runs for SECONDS, and prints runs, corpus, coverage and crashes. A crash, a timeout
# (an input over FUZZ_TIMEOUT seconds: a blow-up), an out-of-memory or a failed check (see Fuzz/FeedFuzzer) leaves
# its input in .build-libfuzzer/artifacts/; copy it to Fixtures/feeds/crashers/ once fixed.
# Environment: FUZZ_JOBS (parallel workers, default 1), FUZZ_MAX_LEN (bytes, 65536), FUZZ_TIMEOUT (seconds, 10),
# FUZZ_RSS_MB (2048), FUZZ_CONFIGURATION (release).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
scratch=.build-libfuzzer
configuration="${FUZZ_CONFIGURATION:-release}"
Scripts/install-deps.sh
export TMPDIR="${TMPDIR:-/tmp}"

# libFuzzer ships with the Swift toolchain (lib/clang/*/lib/linux/libclang_rt.fuzzer*.a); lld links it (gold
# crashes on these objects).
swift build -c "$configuration" --scratch-path "$scratch" --product mediasync-fuzz-feeds \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DMEDIASYNC_LIBFUZZER \
    -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld 2>&1 | grep -v "Cannot export local symbol" || true
binary="$scratch/$configuration/mediasync-fuzz-feeds"
[ -x "$binary" ] || { echo "fuzz-feeds: the build failed" >&2; exit 1; }

seeds="$scratch/seeds"
corpus="$scratch/corpus"
artifacts="$scratch/artifacts"
mkdir -p "$seeds" "$corpus" "$artifacts"
cp Fixtures/feeds/*.xml Fixtures/opml/*.opml "$seeds"/
cp Fixtures/feeds/crashers/*.xml Fixtures/feeds/crashers/*.opml "$seeds"/ 2>/dev/null || true
before=$(find "$artifacts" -type f | wc -l)

# The target writes each input to a file and reads JSON back: on a tmpfs that costs half as much.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    TMPDIR=$(mktemp -d /dev/shm/mediasync-fuzz.XXXXXX)
    trap 'rm -rf "$TMPDIR"' EXIT
    export TMPDIR
fi
log="$scratch/fuzz.log"
# Crashes are libFuzzer's to report (not Swift's backtracer, which waits on a sanitised process).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
parallel=()
jobs="${FUZZ_JOBS:-1}"
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
status=0
"$binary" "$corpus" "$seeds" -dict=Fuzz/feeds.dict -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-65536}" \
    -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$artifacts/" \
    -print_final_stats=1 "${parallel[@]}" >"$log" 2>&1 || status=$?

after=$(find "$artifacts" -type f | wc -l)
runs=$( (grep -h "stat::number_of_executed_units" "$log" fuzz-*.log 2>/dev/null || true) | awk '{s += $2} END {print s + 0}')
coverage=$( (grep -ho "cov: [0-9]*" "$log" fuzz-*.log 2>/dev/null || true) | awk '{print $2}' | sort -n | tail -1)
rm -f fuzz-*.log
echo "fuzz-feeds: ${seconds} s, ${runs} runs, corpus $(find "$corpus" -type f | wc -l) inputs, coverage ${coverage:-?} edges"
echo "fuzz-feeds: crashes (new artifacts): $((after - before))"
if [ "$after" -gt "$before" ] || [ "$status" -ne 0 ]; then
    grep -h -A3 "ERROR: \|mediasync-fuzz-feeds: \|Test unit written" "$log" | head -40 >&2 || true
    find "$artifacts" -type f -newer "$seeds" >&2
    exit 1
fi
