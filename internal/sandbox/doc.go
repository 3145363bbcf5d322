// Package sandbox decides whether dsh-fs may touch a path and holds the
// confined handles through which every mutation runs: the writable
// roots, canonicalization, containment, protected and read-denied paths,
// and the escalation's decision, for a policy named in internal/policy.
// It knows nothing of JSON or cobra.
package sandbox
