package supervisor

// mark notes that exec's start reached the point label: nothing, but in
// a build with the dshtrace tag (trace_dshtrace.go), where it prints a
// timestamp on stderr, for the start-up breakdown of bench/results.md
// (scripts/startup-trace). Release builds never print one.
var mark = func(label string) {}
