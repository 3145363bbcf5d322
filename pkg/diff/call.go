package diff

// The one file of this package that uses dsh-fs's internal packages: the
// command's own diff, whose Result has this package's Result's fields.

import idiff "github.com/dshfs/dsh-fs/internal/diff"

func marshal(r Result) ([]byte, error) { return idiff.Result(r).MarshalJSON() }

func unified(name string, old, new []byte, opt Options) Result {
	return Result(idiff.Unified(name, old, new, idiff.Options{Context: opt.Context,
		BasisMaxBytes: opt.BasisMaxBytes, MaxBytes: opt.MaxBytes}))
}
