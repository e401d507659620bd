#!/usr/bin/env bash
# Checks README.md and docs/: the front page stays short, no internal issue references, every relative link points
# at a file that exists, and the man page is there. One line per problem; exit 1 if there is any.
# Usage: Scripts/check-docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

max_readme_lines=250
failures=0
fail() {
    echo "check-docs: $*" >&2
    failures=$((failures + 1))
}

files=(README.md)
if [ -d docs ]; then
    while IFS= read -r file; do files+=("$file"); done < <(find docs -name '*.md' -type f | LC_ALL=C sort)
fi

# The front page is for people: about 200 lines, the rest lives in docs/.
if [ ! -f README.md ]; then
    fail "README.md is missing"
else
    lines=$(wc -l <README.md)
    [ "$lines" -le "$max_readme_lines" ] || fail "README.md has $lines lines (at most $max_readme_lines: move detail into docs/)"
fi

for file in "${files[@]}"; do
    [ -f "$file" ] || continue

    # Internal tracker references and work-log markers say nothing to a reader.
    while IFS= read -r hit; do
        text=${hit#*:}
        [ ${#text} -le 100 ] || text="${text:0:100}…"
        fail "$file:${hit%%:*}: issue reference: $text"
    done < <(grep -niE '\bissues? #?[0-9]+|\(issue [0-9]+\)|\bstop [0-9]+' "$file" || true)

    # Relative Markdown links, outside code blocks and code spans: [text](target) or [text](target "title").
    dir=$(dirname "$file")
    while IFS=$'\t' read -r line target; do
        target=${target%% *}        # drop a title
        target=${target#<}          # <target>
        target=${target%>}
        case "$target" in
            '' | '#'* | http://* | https://* | mailto:*) continue ;;
        esac
        path=${target%%#*}          # drop an anchor
        [ -n "$path" ] || continue
        [ -e "$dir/$path" ] || fail "$file:$line: broken link: $target"
    done < <(awk '
        /^[[:space:]]*(```|~~~)/ { fenced = !fenced; next }
        fenced { next }
        {
            text = $0
            gsub(/`[^`]*`/, "", text)                       # code spans
            while (match(text, /\]\([^)]*\)/)) {
                printf "%d\t%s\n", NR, substr(text, RSTART + 2, RLENGTH - 3)
                text = substr(text, RSTART + RLENGTH)
            }
        }' "$file")
done

[ -f docs/man/mediasync.1 ] || fail "docs/man/mediasync.1 is missing (generate it with Scripts/make-manual.sh)"

if [ "$failures" -gt 0 ]; then
    echo "check-docs: $failures problem(s)" >&2
    exit 1
fi
echo "check-docs: ok (${#files[@]} files)"
