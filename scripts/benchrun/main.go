//go:build unix

// Command benchrun is the measuring half of scripts/bench.sh: it runs each
// comparison of a spec file, the plain tool and dsh-fs interleaved (A B A B
// …), and prints one markdown table of the medians, their ratio and
// dsh-fs's peak memory.
//
// Wall time is taken around start and wait of each child, as a caller sees
// it; peak memory is the child's ru_maxrss from wait4. Children are started
// directly, without a shell, so both sides pay the same exec cost.
//
// Usage:
//
//	benchrun -spec FILE [-runs N] [-dir DIR] [-details FILE]
//
// It is a benchmark driver, not part of dsh-fs: it is built and run only by
// scripts/bench.sh.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Spec is one comparison.
type Spec struct {
	// Name is the operation, as the table shows it.
	Name string `json:"name"`
	// Loop is how many invocations one sample times (1 when 0), so that
	// calls of a millisecond are not lost in timer and scheduler noise.
	Loop int `json:"loop"`
	// Target is the highest acceptable ratio dsh/plain of the medians.
	Target float64 `json:"target"`
	// MemMiB is the highest acceptable peak RSS of dsh-fs; 0 is none.
	MemMiB float64 `json:"mem_mib"`
	// Reference marks a row that measures a reference program on side B
	// in place of dsh-fs (a start-up floor, say): it shows what the
	// rows above it can reach and has no target of its own.
	Reference bool `json:"reference"`
	// Plain is side A (the plain tool), Dsh side B (dsh-fs).
	Plain Side `json:"plain"`
	Dsh   Side `json:"dsh"`
}

// Side is the command of one side of a comparison.
type Side struct {
	Label string `json:"label"`
	// Runs are the command's variants, used in turn: a run that edits
	// old→new is followed by one that edits new→old, so every run has
	// the same work and the fixture is restored without untimed copying.
	Runs [][]string `json:"runs"`
	// Prep runs before every sample, untimed (say, rm -f of a target).
	Prep [][]string `json:"prep"`
	// Unset names environment variables the runs start without. Unset
	// here, not by an env(1) wrapper, so a run times the command alone:
	// on this machine starting env(1) first costs about 3 ms, more than a
	// tenth of a session's start.
	Unset []string `json:"unset"`
	// Sink is where stdout goes: "pipe" (default; drained here, as an
	// agent harness reads it) or "null" (/dev/null).
	Sink string `json:"sink"`
	// Expect, when set, must occur in the first 64 KiB of every run's
	// stdout (say `"ok":true`), so a failing call is never timed as a
	// fast one.
	Expect string `json:"expect"`

	turn    int
	samples []time.Duration
	cpu     []time.Duration // user + system time of the same samples
	maxRSS  int64           // KiB
}

// Result is the outcome of one comparison.
type Result struct {
	Spec     *Spec
	PlainMed time.Duration // per invocation
	DshMed   time.Duration
	Ratio    float64
	DshRSS   float64 // MiB
	PlainRSS float64
	// CPURatio is the ratio of the medians of user + system time: less
	// disturbed than wall time when other work shares the machine.
	CPURatio float64
	Verdict  string
}

func main() {
	specPath := flag.String("spec", "", "JSON array of comparisons")
	runs := flag.Int("runs", 7, "measured samples per side (at least 5 for a median)")
	dir := flag.String("dir", ".", "working folder of every command")
	details := flag.String("details", "", "also write per-sample spread and plain peak RSS here")
	flag.Parse()
	if *specPath == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchrun -spec FILE [-runs N] [-dir DIR] [-details FILE]")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*specPath)
	if err != nil {
		fatal(err)
	}
	var specs []*Spec
	if err := json.Unmarshal(raw, &specs); err != nil {
		fatal(fmt.Errorf("%s: %w", *specPath, err))
	}
	var results []Result
	for _, s := range specs {
		r, err := measure(s, *runs, *dir)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", s.Name, err))
		}
		results = append(results, r)
	}
	fmt.Print(table(results))
	// The floor under every child's ru_maxrss: Linux records the
	// forking process's high-water RSS at exec (CLONE_VM children share
	// its mm until then).
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	floor := fmt.Sprintf("harness peak RSS: %.1f MiB\n", float64(self.Maxrss)/1024)
	fmt.Fprint(os.Stderr, "benchrun: ", floor)
	if *details != "" {
		if err := os.WriteFile(*details, []byte(spread(results)+floor), 0o644); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchrun:", err)
	os.Exit(1)
}

// measure runs one warm-up of each side, then runs samples of each,
// interleaved.
func measure(s *Spec, runs int, dir string) (Result, error) {
	if s.Loop < 1 {
		s.Loop = 1
	}
	fmt.Fprintf(os.Stderr, "benchrun: %s: warm-up", s.Name)
	for _, side := range []*Side{&s.Plain, &s.Dsh} {
		if _, _, _, err := side.sample(s.Loop, dir); err != nil {
			return Result{}, err
		}
	}
	fmt.Fprintf(os.Stderr, ", %d runs", runs)
	for range runs {
		for _, side := range []*Side{&s.Plain, &s.Dsh} {
			d, cpu, rss, err := side.sample(s.Loop, dir)
			if err != nil {
				return Result{}, err
			}
			side.samples = append(side.samples, d)
			side.cpu = append(side.cpu, cpu)
			side.maxRSS = max(side.maxRSS, rss)
		}
		fmt.Fprint(os.Stderr, ".")
	}
	fmt.Fprintln(os.Stderr)
	r := Result{
		Spec:     s,
		PlainMed: median(s.Plain.samples) / time.Duration(s.Loop),
		DshMed:   median(s.Dsh.samples) / time.Duration(s.Loop),
		DshRSS:   float64(s.Dsh.maxRSS) / 1024,
		PlainRSS: float64(s.Plain.maxRSS) / 1024,
	}
	r.Ratio = float64(r.DshMed) / float64(r.PlainMed)
	r.CPURatio = float64(median(s.Dsh.cpu)) / float64(median(s.Plain.cpu))
	var miss []string
	if r.Ratio > s.Target {
		miss = append(miss, "time")
	}
	if s.MemMiB > 0 && r.DshRSS > s.MemMiB {
		miss = append(miss, "memory")
	}
	r.Verdict = "pass"
	switch {
	case s.Reference:
		r.Verdict = "reference"
	case len(miss) > 0:
		r.Verdict = "**MISS** (" + strings.Join(miss, ", ") + ")"
	}
	return r, nil
}

// sample times loop invocations of the side's next variant(s), after its
// untimed preparation, and returns the wall time, the CPU time (user +
// system) and the largest ru_maxrss (KiB).
func (side *Side) sample(loop int, dir string) (wall, cpu time.Duration, rss int64, err error) {
	for _, argv := range side.Prep {
		if out, err := side.command(argv, dir).CombinedOutput(); err != nil {
			return 0, 0, 0, fmt.Errorf("prep %q: %v: %s", argv, err, out)
		}
	}
	for range loop {
		argv := side.Runs[side.turn%len(side.Runs)]
		side.turn++
		d, c, kib, err := side.run(argv, dir)
		if err != nil {
			return 0, 0, 0, err
		}
		wall += d
		cpu += c
		rss = max(rss, kib)
	}
	return wall, cpu, rss, nil
}

// run times one invocation: wall time, CPU time and ru_maxrss (KiB).
func (side *Side) run(argv []string, dir string) (time.Duration, time.Duration, int64, error) {
	c := side.command(argv, dir)
	head := &headWriter{limit: 64 << 10}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	switch side.Sink {
	case "null":
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return 0, 0, 0, err
		}
		defer null.Close()
		c.Stdout = null
	default:
		c.Stdout = head // a pipe, drained by exec's copying goroutine
	}
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%q: %v: %s%s", argv, err, head.buf.Bytes(), stderr.Bytes())
	}
	if side.Expect != "" && !bytes.Contains(head.buf.Bytes(), []byte(side.Expect)) {
		return 0, 0, 0, fmt.Errorf("%q: stdout lacks %q: %s", argv, side.Expect, head.buf.Bytes())
	}
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, 0, errors.New("no rusage")
	}
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	return d, cpu, ru.Maxrss, nil
}

func (side *Side) command(argv []string, dir string) *exec.Cmd {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	if len(side.Unset) > 0 {
		c.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return slices.Contains(side.Unset, name)
		})
	}
	return c
}

// headWriter keeps the first limit bytes written to it and discards the
// rest, so draining 128 MiB costs no memory here (which would raise the
// children's ru_maxrss floor).
type headWriter struct {
	limit int
	buf   bytes.Buffer
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.limit - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// ReadFrom drains r with a buffer as large as a pipe holds (exec's copy
// uses this instead of its 32 KiB default), so the reader is never what
// limits a 128 MiB stream.
func (h *headWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := drainBuf[:]
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		h.Write(buf[:m])
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// drainBuf is shared: one child runs at a time.
var drainBuf [256 << 10]byte

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", math.Round(v))
}

func table(rs []Result) string {
	var b strings.Builder
	b.WriteString("| operation | plain tool | plain median ms | dsh-fs median ms | ratio | target | dsh-fs peak RSS MiB | memory target | verdict | CPU-time ratio |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n")
	for _, r := range rs {
		target, mem := "—", "—"
		if !r.Spec.Reference {
			target = fmt.Sprintf("≤ %g", r.Spec.Target)
		}
		if r.Spec.MemMiB > 0 {
			mem = fmt.Sprintf("≤ %g", r.Spec.MemMiB)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %s | %.1f | %s | %s | %.2f |\n",
			r.Spec.Name, r.Spec.Plain.Label, ms(r.PlainMed), ms(r.DshMed), r.Ratio, target,
			r.DshRSS, mem, r.Verdict, r.CPURatio)
	}
	return b.String()
}

// spread is the per-sample detail behind the table: the range of each
// side's samples and the plain tool's peak RSS.
func spread(rs []Result) string {
	var b strings.Builder
	b.WriteString("| operation | invocations per sample | plain min–max ms | dsh-fs min–max ms | plain CPU median ms | dsh-fs CPU median ms | plain peak RSS MiB |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		loop := time.Duration(r.Spec.Loop)
		fmt.Fprintf(&b, "| %s | %d | %s–%s | %s–%s | %s | %s | %.1f |\n", r.Spec.Name, r.Spec.Loop,
			ms(slices.Min(r.Spec.Plain.samples)/loop), ms(slices.Max(r.Spec.Plain.samples)/loop),
			ms(slices.Min(r.Spec.Dsh.samples)/loop), ms(slices.Max(r.Spec.Dsh.samples)/loop),
			ms(median(r.Spec.Plain.cpu)/loop), ms(median(r.Spec.Dsh.cpu)/loop),
			r.PlainRSS)
	}
	return b.String()
}
