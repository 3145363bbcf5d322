#!/usr/bin/env bash
# replay-calls.sh replays the calls of issue 40's tasks that have a shorter
# form now, the old calls with a build from before issue 40 and the new
# calls with a build of today, each call run for real as a shell agent
# runs it: `sh -c CALL` inside a dsh-fs exec session of a fresh copy of
# cobra's source (from the Go module cache, git-initialised); the calls
# of the FS_STALE row run one after another in one session, as in an
# agent's long-lived shell, and the rows that escalate have an approver
# that approves. It counts the calls, the bytes the model writes (the
# call's text, a heredoc included) and the bytes it reads back (stdout
# and stderr), and checks that both forms leave the same tree. It prints
# the table of bench/results.md, "An agent's task in fewer calls and
# bytes (issue 40): replay", with the totals of its rows.
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

# approve is a session file whose approver approves every escalation,
# for the rows that escalate (exec_flags=(--config "$approve")).
approve=$tmp/approve.yaml
printf '%s\n' 'approval: command' 'approval_command: ["/bin/sh", "-c", "cat >/dev/null"]' > "$approve"
exec_flags=()

calls=0 in_bytes=0 out_bytes=0
# call BIN CMD runs CMD as one call of the agent in a session of $ws.
call() {
	local bin=$1 cmd=$2
	(cd "$ws" && PATH="$bin:$PATH" "$bin/dsh-fs" exec --cwd "$ws" --tmp=false "${exec_flags[@]}" -- sh -c "$cmd") > "$tmp/out" 2>&1 || true
	calls=$((calls + 1))
	in_bytes=$((in_bytes + $(printf %s "$cmd" | wc -c)))
	out_bytes=$((out_bytes + $(wc -c < "$tmp/out")))
}

# calls BIN CMD... runs the CMDs one after another in one session of $ws,
# as an agent's long-lived shell (exec -- bash) runs them: what a session
# remembers of its reads lasts from one to the next. A CMD that starts
# with @ is not the agent's (someone else changing a file, or a read the
# task made before): it runs, and is not counted.
calls() {
	local bin=$1 cmd
	shift
	(cd "$ws" && PATH="$bin:$PATH" "$bin/dsh-fs" exec --cwd "$ws" --tmp=false "${exec_flags[@]}" -- sh -c '
		for c in "$@"; do
			case $c in
			@*) sh -c "${c#@}" >/dev/null 2>&1 ;;
			*) sh -c "$c" 2>&1 ;;
			esac
		done' replay "$@") > "$tmp/out" 2>&1 || true
	for cmd in "$@"; do
		case $cmd in
		@*) ;;
		*)
			calls=$((calls + 1))
			in_bytes=$((in_bytes + $(printf %s "$cmd" | wc -c)))
			;;
		esac
	done
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

# result prints the counters of a side, and its tree's diff to $tmp/$1.diff,
# with what lies beside the workspace.
result() {
	git -C "$ws" add -A
	git -C "$ws" diff --cached > "$tmp/$1.diff"
	# What the calls left beside the workspace, outside it.
	(cd "$(dirname "$ws")" && find . -path ./cobra -prune -o -type f -exec sha256sum {} +) >> "$tmp/$1.diff"
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
	for i in 0 1 2; do
		total_old[i]=$((total_old[i] + o[i]))
		total_new[i]=$((total_new[i] + n[i]))
	done
}
total_old=(0 0 0) total_new=(0 0 0)

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

# FS_STALE: the agent read args.go, someone else then changed one of its
# comments, and the agent's edit of another line, with --if-match of its
# read, is refused. The read and the change are not counted (@), the
# calls run in one session. Before, the refusal held the two hashes
# only, and the agent read the file again to see what changed before the
# retry; now it carries the diff since the read, which the session
# remembered, and the retry takes the new hash from it.
stale_file=args.go
read_sum=$(sha256sum < "$pristine/$stale_file" | cut -d' ' -f1)
theirs="sed -i 's|// root command with subcommands, do subcommand checking.|// a root command with subcommands checks them.|' $stale_file"
(cd "$tmp/scratch" && git checkout -q -- . && sh -c "$theirs")
now_sum=$(sha256sum < "$tmp/scratch/$stale_file" | cut -d' ' -f1)
mine="dsh-fs edit $stale_file --old '// no subcommand, always take args' --new '// no subcommands: any args'"
side old
calls "$old" "@dsh-fs read $stale_file" "@$theirs" "$mine --if-match $read_sum" "dsh-fs read $stale_file" "$mine --if-match $now_sum"
o=$(result old)
side new
calls "$new" "@dsh-fs read $stale_file" "@$theirs" "$mine --if-match $read_sum" "$mine --if-match $now_sum"
row "FS_STALE: an edit after someone else's change" "$o" "$(result new)"

# move, mkdir and rm in the workspace: before, the shell's own mv, mkdir
# and rm, which the session lets write there; now dsh-fs move, mkdir
# and rm, through the fence.
side old
call "$old" "mkdir notes"
call "$old" "mv CONDUCT.md notes/CONDUCT.md"
call "$old" "rm MAINTAINERS"
o=$(result old)
side new
call "$new" "dsh-fs mkdir notes"
call "$new" "dsh-fs move CONDUCT.md notes/CONDUCT.md"
call "$new" "dsh-fs rm MAINTAINERS"
row "mkdir, move and rm in the workspace" "$o" "$(result new)"

# A file moved out of the workspace, escalated and approved: before, the
# shell's mv is refused there, so a write of a copy with --escalate and
# the shell's rm of the original; now one move with --escalate.
exec_flags=(--config "$approve")
side old
call "$old" "dsh-fs write ../CONDUCT.md --from CONDUCT.md --escalate danger-full-access"
call "$old" "rm CONDUCT.md"
o=$(result old)
side new
call "$new" "dsh-fs move CONDUCT.md ../CONDUCT.md --escalate danger-full-access"
row "a file moved out of the workspace (escalated)" "$o" "$(result new)"
exec_flags=()

# A write the shell's layers refuse (a git hook: Read-only file system).
# Before, nothing said why: the agent retried it, then asked stat; now
# denials names the layer and rule.
hook="printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit"
side old
call "$old" "$hook"
call "$old" "$hook"
call "$old" "dsh-fs stat .git/hooks/pre-commit"
o=$(result old)
side new
call "$new" "$hook"
call "$new" "dsh-fs denials .git/hooks/pre-commit"
row "a write the shell refuses, explained" "$o" "$(result new)"

printf '| **all rows** | %d | %d | %s | %d | %d | %s |\n' "${total_old[0]}" "${total_old[1]}" "$(kb "${total_old[2]}")" "${total_new[0]}" "${total_new[1]}" "$(kb "${total_new[2]}")"
