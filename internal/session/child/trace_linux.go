package child

// mark notes that the child reached the point label: nothing, but in a
// build with the dshtrace tag (trace_dshtrace.go), where it prints a
// timestamp on stderr, for the start-up breakdown of bench/results.md.
var mark = func(label string) {}
