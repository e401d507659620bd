#!/usr/bin/env bash
# sanitizers.sh — the whole test suite under AddressSanitizer and ThreadSanitizer.
#
# Usage: Scripts/sanitizers.sh [address|thread]...   (default: both)
# Each sanitizer builds into its own scratch folder (.build-asan, .build-tsan; several minutes each on
# 2 cores) and runs `swift test` once. Printed per sanitizer: tests run and failed, AddressSanitizer errors,
# ThreadSanitizer warnings, and LeakSanitizer reports split into those with a frame in mediasync's own code
# (MediaSync*, mediasync, CCurl/CLibXML2 shims) and those entirely inside the toolchain's runtime libraries
# (XCTest, Foundation, Dispatch; test code calling them does not count as ours), which this project cannot fix.
# Exit status 1 when a build fails, when any test fails under a sanitizer, or when a sanitizer reports anything in
# our code. Logs are kept in $SANITIZER_LOGS (default /tmp/mediasync-sanitizers); the temporary folder the tests
# write in is removed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh >/dev/null
logs=${SANITIZER_LOGS:-/tmp/mediasync-sanitizers}
mkdir -p "$logs"
if [ -n "${TMPDIR_OVERRIDE:-}" ]; then
    export TMPDIR=$TMPDIR_OVERRIDE
else
    TMPDIR=$(mktemp -d /tmp/mediasync-san.XXXXXX)
    export TMPDIR
    trap 'rm -rf "$TMPDIR"' EXIT
fi
# Leaks that are the toolchain's own (XCTest's runner) would make every test process exit non-zero.
export LSAN_OPTIONS="suppressions=$PWD/Scripts/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)

# A frame in our library or tools: a path under this checkout's Sources/ or Fuzz/ (not a dependency's Sources/ in
# the build folder's checkouts), or a symbol mangled in one of our modules. The modules are read from the package
# itself (every target but the tests and their support code under Tests/), so a new module is never missed: a Swift
# symbol's mangled name starts with `$s`, then the module's name prefixed by its length (`$s9MediaSync…`), and a
# target's module name is its name with `-` read as `_`. Test code calling the toolchain's libraries does not count.
modules=$(swift package dump-package | python3 -c '
import json, sys
targets = json.load(sys.stdin)["targets"]
names = [t["name"].replace("-", "_") for t in targets
         if t["type"] in ("regular", "executable", "system") and not (t.get("path") or "").startswith("Tests")]
print("|".join(f"{len(n)}{n}" for n in sorted(names)))
')
[ -n "$modules" ] || { echo "sanitizers: could not read the package's targets" >&2; exit 1; }
ours="$PWD/Sources/|$PWD/Fuzz/|\\\$s($modules)[0-9A-Z_]"
echo "sanitizers: a frame of ours is one matching $ours" >&2
status=0
for kind in "${kinds[@]}"; do
    scratch=.build-${kind:0:1}san
    log="$logs/$kind.log"
    echo "sanitizers: building with --sanitize=$kind into $scratch" >&2
    if ! swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" >"$logs/$kind-build.log" 2>&1; then
        tail -20 "$logs/$kind-build.log" >&2
        echo "sanitizers: the $kind build failed" >&2
        status=1
        continue
    fi
    echo "sanitizers: running the tests under $kind (log: $log)" >&2
    swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" >"$log" 2>&1
    test_rc=$?
    python3 - "$log" "$kind" "$test_rc" "$ours" <<'PY'
import re, sys
log, kind, rc, ours = sys.argv[1], sys.argv[2], int(sys.argv[3]), re.compile(sys.argv[4])
text = open(log, errors="replace").read()
run = re.findall(r"Test run with (\d+) tests? in \d+ suites? (passed|failed)[^\n]*?(?:with (\d+) issues?)?", text)
failed = sorted(set(re.findall(r"✘ Test (\S+?)\(", text)))
asan = len(re.findall(r"ERROR: AddressSanitizer", text))
tsan_blocks = re.split(r"WARNING: ThreadSanitizer", text)[1:]
# A race is ours when one of its two accesses runs our code; where the memory came from and which code started the
# threads (the sections after them) say nothing of whose code raced.
accesses = re.compile(r"^\s+(Location is|Mutex M|Thread T\d+ .*created by|Issue is caused by)", re.M)
tsan_ours = sum(1 for b in tsan_blocks if ours.search(accesses.split(b.split("SUMMARY:")[0])[0]))
leaks = re.split(r"ERROR: LeakSanitizer", text)[1:]
leaks_ours = sum(1 for b in leaks if ours.search(b.split("SUMMARY:")[0]))
print(f"== {kind}: swift test exit {rc}; " + (f"{run[-1][0]} tests, {run[-1][1]}" if run else "no test summary"))
print(f"   failed tests: {', '.join(failed) if failed else 'none'}")
print(f"   AddressSanitizer errors: {asan}")
print(f"   ThreadSanitizer warnings: {len(tsan_blocks)} ({tsan_ours} with a frame in mediasync's code)")
print(f"   LeakSanitizer reports: {len(leaks)} ({leaks_ours} with a frame in mediasync's code, "
      f"{len(leaks) - leaks_ours} only in toolchain runtime libraries)")
# A sanitizer's report makes the test process exit non-zero whoever's code it names; what fails the run is a test
# that failed, a run that did not finish, an AddressSanitizer error, or a report with a frame of ours.
if rc != 0 and run and run[-1][1] == "passed":
    print(f"   (exit {rc} from the sanitizers' reports at exit, none of them in mediasync's code)"
          if not (asan or tsan_ours or leaks_ours) else f"   (exit {rc})")
failed = asan or tsan_ours or leaks_ours or not run or run[-1][1] == "failed"
if failed:
    print("   the test run failed under the sanitizer")
sys.exit(1 if failed else 0)
PY
    [ $? = 0 ] || status=1
done
exit $status
