package fsops

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
)

func hexOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCheckIfMatchDiff: a stale --if-match carries the diff from what the
// caller's Recall gives back to the content now, only when what it gives
// back hashes to the --if-match; never for a file that is gone.
func TestCheckIfMatchDiff(t *testing.T) {
	read, now := []byte("a\nb\n"), []byte("a\nc\n")
	want, cur := hexOf(read), hexOf(now)
	opt := diff.Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 1 << 20, Form: diff.FormSummary}
	give := func(b []byte) Recall { return func(string) []byte { return b } }
	for _, tc := range []struct {
		name     string
		current  string
		basis    staleBasis
		wantDiff string // "" for no diff; "omitted" for an omitted one
	}{
		{"no recall", cur, staleBasis{now: now, held: true, diff: opt}, ""},
		{"recalls nothing", cur, staleBasis{now: now, held: true, recall: give(nil), diff: opt}, ""},
		{"recalls content of another hash", cur, staleBasis{now: now, held: true, recall: give([]byte("forged\n")), diff: opt}, ""},
		{"recalls the content read", cur, staleBasis{now: now, held: true, recall: give(read), diff: opt}, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"the content now not held", cur, staleBasis{held: false, recall: give(read), diff: opt}, "omitted"},
		{"the file is gone", "", staleBasis{recall: give(read), diff: opt}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkIfMatch("edit", "f", want, tc.current, tc.basis)
			var fe *fserr.Error
			if !errors.As(err, &fe) || fe.Code() != fserr.Stale {
				t.Fatalf("err = %v, want FS_STALE", err)
			}
			d := fe.Detail.(StaleDetail)
			switch {
			case tc.wantDiff == "" && d.Diff != nil:
				t.Errorf("diff %+v, want none", *d.Diff)
			case tc.wantDiff == "omitted" && (d.Diff == nil || d.Diff.Omitted != diff.ReasonBasisTooLarge):
				t.Errorf("diff %+v, want omitted", d.Diff)
			case tc.wantDiff != "" && tc.wantDiff != "omitted" && (d.Diff == nil || d.Diff.Text != tc.wantDiff):
				t.Errorf("diff %+v, want %q (in full whatever the form)", d.Diff, tc.wantDiff)
			}
		})
	}
	if err := checkIfMatch("edit", "f", want, want, staleBasis{recall: give(read)}); err != nil {
		t.Errorf("a matching hash: %v", err)
	}
}

// TestCheckGiven: content given back must hash to --if-match, which it
// needs; nil is none given.
func TestCheckGiven(t *testing.T) {
	content := []byte("x\n")
	for _, tc := range []struct {
		name    string
		ifMatch string
		content []byte
		ok      bool
	}{
		{"none given", "", nil, true},
		{"matches", hexOf(content), content, true},
		{"matches in upper case", strings.ToUpper(hexOf(content)), content, true},
		{"empty content of an empty file", hexOf(nil), []byte{}, true},
		{"without --if-match", "", content, false},
		{"another hash", hexOf([]byte("y\n")), content, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckGiven("edit", tc.ifMatch, tc.content)
			if (err == nil) != tc.ok || err != nil && fserr.CodeOf(err) != fserr.InvalidArgument {
				t.Errorf("CheckGiven = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
