package config

import (
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/request"
)

// Bounds are the limits s sets on a call's results (read_max_lines,
// read_max_bytes, diff_context, diff_basis_max_bytes, diff_max_bytes),
// as request.Start takes them: one place for every front end.
func (s *Settings) Bounds() request.Bounds {
	return request.Bounds{ReadMaxLines: s.ReadMaxLines, ReadMaxBytes: s.ReadMaxBytes,
		Diff: diff.Options{Context: s.DiffContext, BasisMaxBytes: s.DiffBasisMaxBytes, MaxBytes: s.DiffMaxBytes}}
}
