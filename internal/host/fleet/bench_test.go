package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// BenchmarkSurvey500 is the benchmark in process: 500 fake
// agents, 16 at a time, each taking 50 to 300 ms, one in twenty hanging
// past the 1 s VM timeout. One survey takes about 8 s, so run it with
// -benchtime=1x. cmd/guestcheck's TestFleetBound runs the same survey
// in a child process and reports its CPU time and peak RSS.
func BenchmarkSurvey500(b *testing.B) {
	rep := guestReport(b, runner.Pass, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var targets []Target
	for i := range 500 {
		a := &qgafake.Agent{Delay: time.Duration(50+rng.IntN(251)) * time.Millisecond / 5, Run: runs(rep, 0)}
		if i%20 == 19 {
			a.HangOn = "guest-exec-status"
		}
		targets = append(targets, pipeTarget(fmt.Sprintf("vm%03d", i), a))
	}
	const vmTimeout = time.Second
	bound := time.Duration(float64(vmTimeout) * 32 * 1.1)
	for b.Loop() {
		start := time.Now()
		r := Survey(context.Background(), targets, nil, Options{Concurrency: 16, VMTimeout: vmTimeout})
		if el := time.Since(start); el > bound || r.Summary.Pass != 475 || r.Summary.Unknown != 25 {
			b.Fatalf("%s (bound %s), %+v", el, bound, r.Summary)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/survey")
	}
}
