#!/bin/sh
# patch-fixtures.sh lays out the replay fixtures of e2e/patch/patch_replay_test.go
# from real commits of a git repository: for each COMMIT, the files it
# touches as they were before (before/) and after (after/), the commit as a
# unified diff as git writes it (unified.diff), and the same change in
# Codex's apply_patch format (apply_patch.patch), converted here from the
# diff: each hunk's lines as they are under a bare "@@". A commit whose diff
# says "\ No newline at end of file" gets no apply_patch.patch: that format
# cannot say it.
#
#   git clone https://github.com/spf13/cobra /tmp/cobra
#   scripts/patch-fixtures.sh /tmp/cobra/.git COMMIT...
#
# The fixtures are written to e2e/patch/testdata/patch-replay/COMMIT.
set -eu
gitdir=$1
shift
out=e2e/patch/testdata/patch-replay
g() { git --git-dir "$gitdir" -c core.quotepath=off "$@"; }
for c in "$@"; do
	d=$out/$c
	rm -rf "$d"
	mkdir -p "$d/before" "$d/after"
	g log -1 --format='%H %s' "$c" > "$d/COMMIT"
	g diff -M --no-color --no-ext-diff --no-textconv --src-prefix=a/ --dst-prefix=b/ "$c^" "$c" > "$d/unified.diff"
	g diff -M --name-status "$c^" "$c" | while IFS="$(printf '\t')" read -r st a b; do
		case $st in
		A*) new=$a old= ;;
		D*) old=$a new= ;;
		R*) old=$a new=$b ;;
		*) old=$a new=$a ;;
		esac
		if [ -n "$old" ]; then
			mkdir -p "$d/before/$(dirname "$old")"
			g show "$c^:$old" > "$d/before/$old"
		fi
		if [ -n "$new" ]; then
			mkdir -p "$d/after/$(dirname "$new")"
			g show "$c:$new" > "$d/after/$new"
		fi
	done
	if grep -q '^\\ No newline at end of file' "$d/unified.diff"; then
		continue
	fi
	awk '
	function flush() {
		if (!open) return
		if (!emitted) header()
		open = 0
	}
	function header() {
		if (kind == "add") print "*** Add File: " (newp != "" ? newp : gitp)
		else if (kind == "delete") print "*** Delete File: " (oldp != "" ? oldp : gitp)
		else {
			print "*** Update File: " (rfrom != "" ? rfrom : (oldp != "" ? oldp : gitp))
			if (rto != "") print "*** Move to: " rto
		}
		emitted = 1
	}
	BEGIN { print "*** Begin Patch" }
	/^diff --git / {
		flush()
		open = 1; emitted = 0; kind = "update"; oldp = ""; newp = ""; rfrom = ""; rto = ""; inhunk = 0
		split($0, w, " "); gitp = substr(w[4], 3)
		next
	}
	!inhunk && /^new file mode / { kind = "add"; next }
	!inhunk && /^deleted file mode / { kind = "delete"; next }
	!inhunk && /^rename from / { rfrom = substr($0, 13); next }
	!inhunk && /^rename to / { rto = substr($0, 11); next }
	!inhunk && /^--- / { p = substr($0, 5); if (p != "/dev/null") oldp = substr(p, 3); next }
	!inhunk && /^\+\+\+ / { p = substr($0, 5); if (p != "/dev/null") newp = substr(p, 3); header(); next }
	/^@@ / { inhunk = 1; if (kind == "update") print "@@"; next }
	inhunk && /^[-+ ]/ {
		if (kind == "update" || (kind == "add" && substr($0, 1, 1) == "+")) print
		next
	}
	inhunk && /^$/ { if (kind == "update") print " "; next }
	END { flush(); print "*** End Patch" }
	' "$d/unified.diff" > "$d/apply_patch.patch"
done
