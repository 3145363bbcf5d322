#!/usr/bin/env bash
# replay-calls.sh replays the calls of issue 40's tasks that have a shorter
# form now, the old calls with a build from before issue 40 and the new
# calls with a build of today, each call run for real as a shell agent
# runs it: `sh -c CALL` inside a dsh-fs exec session of a fresh copy of
# cobra's source (from the Go module cache, git-initialised). It counts the
# calls, the bytes the model writes (the call's text, a heredoc included)
# and the bytes it reads back (stdout and stderr), and checks that both
# forms leave the same tree. It prints the table of bench/results.md,
# "An agent's task in fewer calls and bytes (issue 40): replay".
#
#   git worktree add /tmp/pre40 5a26fb8 && (cd /tmp/pre40 && go build -o /tmp/old/dsh-fs .)
#   go build -o /tmp/new/dsh-fs .
#   scripts/replay-calls.sh /tmp/old /tmp/new
#
# OLD and NEW are folders holding a dsh-fs binary. Run from the repository
# (go mod download finds cobra's version there), as a user that can run
# dsh-fs exec.
set -euo pipefail
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
src=$(go mod download -json github.com/spf13/cobra | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
version=$(basename "$src")
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT

# pristine is the copy every side starts from: cobra's source, one commit.
pristine=$tmp/pristine/cobra
mkdir -p "$(dirname "$pristine")"
cp -r "$src" "$pristine"
chmod -R u+w "$pristine"
git -C "$pristine" init -q
git -C "$pristine" add -A
git -C "$pristine" -c user.name=replay -c user.email=replay@example.com commit -qm cobra

# The rename (11 occurrences in 6 files) and the multi-file edit (one
# line in 3 named files) of the tasks.
from=ShellCompDirectiveError to=ShellCompDirectiveFailure
header_old='Copyright 2013-2023 The Cobra Authors' header_new='Copyright 2013-2026 The Cobra Authors'
rename_files=$(cd "$pristine" && grep -l "$from" -- *.go | tr '\n' ' ')

# The rename as the model writes it for patch: a unified diff with one
# line of context, as a model writes one.
cp -r "$pristine" "$tmp/scratch"
(cd "$tmp/scratch" && sed -i "s/$from/$to/g" $rename_files && git diff -U1 --no-color) > "$tmp/rename.diff"

calls=0 in_bytes=0 out_bytes=0
# call BIN CMD runs CMD as one call of the agent in a session of $ws.
call() {
	local bin=$1 cmd=$2
	(cd "$ws" && PATH="$bin:$PATH" "$bin/dsh-fs" exec --cwd "$ws" --tmp=false -- sh -c "$cmd") > "$tmp/out" 2>&1 || true
	calls=$((calls + 1))
	in_bytes=$((in_bytes + $(printf %s "$cmd" | wc -c)))
	out_bytes=$((out_bytes + $(wc -c < "$tmp/out")))
}

# side NAME starts a side of a task on a fresh copy.
side() {
	ws=$tmp/$1/cobra
	rm -rf "$tmp/$1"
	mkdir -p "$tmp/$1"
	cp -r "$pristine" "$ws"
	calls=0 in_bytes=0 out_bytes=0
}

# result prints the counters of a side, and its tree's diff to $tmp/$1.diff.
result() {
	git -C "$ws" add -A
	git -C "$ws" diff --cached > "$tmp/$1.diff"
	if [ -e "$(dirname "$ws")/notes.md" ]; then echo "notes.md outside the workspace" >> "$tmp/$1.diff"; fi
	echo "$calls $in_bytes $out_bytes"
}

# row TASK OLD NEW checks that both sides left the same tree and prints
# the table's row.
row() {
	local task=$1 o n
	read -r -a o <<< "$2"
	read -r -a n <<< "$3"
	if ! cmp -s "$tmp/old.diff" "$tmp/new.diff"; then
		echo "$task: the old and new calls left different trees" >&2
		diff "$tmp/old.diff" "$tmp/new.diff" >&2 || true
		exit 1
	fi
	printf '| %s | %d | %d | %s | %d | %d | %s |\n' "$task" "${o[0]}" "${o[1]}" "$(kb "${o[2]}")" "${n[0]}" "${n[1]}" "$(kb "${n[2]}")"
}

kb() { if [ "$1" -ge 1000 ]; then awk -v b="$1" 'BEGIN { printf "%.1f KB", b / 1000 }'; else echo "$1 B"; fi; }

echo "cobra $version"
echo
echo "| task | old calls | old bytes in | old bytes out | new calls | new bytes in | new bytes out |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"

# Rename an identifier used 11 times in 6 files: a grep, then one edit a
# file (the trial's way), against one edit over a glob.
side old
call "$old" "dsh-fs grep $from --glob '*.go'"
for f in $rename_files; do
	call "$old" "dsh-fs edit $f --old $from --new $to --replace-all"
done
o=$(result old)
side new
call "$new" "dsh-fs edit '*.go' --old $from --new $to --replace-all"
row "rename an identifier used 11 times in 6 files" "$o" "$(result new)"

# The five largest .go files: the whole listing to sort by hand, against
# find sorting and cutting it.
side old
call "$old" "dsh-fs find '*.go'"
o=$(result old)
side new
call "$new" "dsh-fs find '*.go' --sort size --limit 5"
row "the five largest .go files" "$o" "$(result new)"

# The policy block the harness puts in the model's context, inside the
# session.
side old
call "$old" "dsh-fs policy --context"
o=$(result old)
side new
call "$new" "dsh-fs policy --context"
row "the sandbox:policy block (in a session)" "$o" "$(result new)"

# A wrong-folder slip: after cd .., a write of notes.md is refused. In
# JSON both refusals carry writable_roots, and the model retries there.
side old
call "$old" "cd .. && dsh-fs write notes.md --content '# notes'"
call "$old" "dsh-fs write $ws/notes.md --content '# notes'"
o=$(result old)
side new
call "$new" "cd .. && dsh-fs write notes.md --content '# notes'"
call "$new" "dsh-fs write $ws/notes.md --content '# notes'"
row "a wrong-folder slip (JSON)" "$o" "$(result new)"

# The same slip in text (output: text in the session file): the old
# refusal names no root, only the escalation, so the model asks policy.
side old
call "$old" "cd .. && dsh-fs write notes.md --content '# notes' --output text"
call "$old" "dsh-fs policy --context"
call "$old" "dsh-fs write $ws/notes.md --content '# notes' --output text"
o=$(result old)
side new
call "$new" "cd .. && dsh-fs write notes.md --content '# notes' --output text"
call "$new" "dsh-fs write $ws/notes.md --content '# notes' --output text"
row "a wrong-folder slip (text)" "$o" "$(result new)"

# A multi-file edit: one line changed in three named files, one edit a
# file against one edit over the three.
side old
for f in args.go cobra.go command.go; do
	call "$old" "dsh-fs edit $f --old '$header_old' --new '$header_new'"
done
o=$(result old)
side new
call "$new" "dsh-fs edit args.go cobra.go command.go --old '$header_old' --new '$header_new'"
row "a multi-file edit (one line in 3 files)" "$o" "$(result new)"

# patch's echo: the rename written as a patch, the same call, its diffs
# echoed in full before and as each file's counts now.
patchcall="dsh-fs patch --from - <<'EOF'
$(cat "$tmp/rename.diff")
EOF"
side old
call "$old" "$patchcall"
o=$(result old)
side new
call "$new" "$patchcall"
row "the rename as one patch (patch's echo)" "$o" "$(result new)"
