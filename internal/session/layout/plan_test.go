package layout

import (
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// testOptions are the plan options of this package's tests: a
// session's, but that they look at no socket of the machine's (the tests
// below take those of their own folders from the kernel's list).
func testOptions() planOptions {
	o := sessionOptions()
	o.boundSockets = func() ([]string, error) { return nil, nil }
	return o
}

// planMounts is PlanMounts with testOptions.
func planMounts(p policy.Policy, roots []sandbox.Root) MountPlan {
	return testOptions().planIndexed(p, roots, nil)
}

// planMountsIndexed is PlanMounts with testOptions and the indexes kept
// in store (planIndexed).
func planMountsIndexed(p policy.Policy, roots []sandbox.Root, store *treeindex.Store) MountPlan {
	return testOptions().planIndexed(p, roots, store)
}
