package seal

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
)

// benchNodes is the debian fixture plus 10,000 log files (a quarter
// rotated) and 1,000 files in /tmp.
func benchNodes() []node {
	nodes := debianNodes()
	for i := 0; i < 10000; i++ {
		name := fmt.Sprintf("/var/log/app%02d/service%05d.log", i%50, i)
		if i%4 == 3 {
			name += ".1.gz"
		}
		nodes = append(nodes, f(name, "template-01 something happened\n"))
	}
	for i := 0; i < 1000; i++ {
		nodes = append(nodes, f(fmt.Sprintf("/tmp/build-%03d/f%05d", i%20, i), "x"))
	}
	return nodes
}

// BenchmarkApply plans, applies and re-plans (what `sealprep apply`
// does) on a fresh tree per iteration; building the tree is not timed.
// The process-level figures (wall time, peak RSS) come from
// BenchmarkApplyBinary in cmd/sealprep.
func BenchmarkApply(b *testing.B) {
	nodes := benchNodes()
	ops, _ := Select(All, "defaults")
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := scratchDir(b)
		build(b, dir, nodes)
		root := openRoot(b, dir)
		b.StartTimer()
		plan := MakePlan(context.Background(), root, ops, Options{})
		res := (&Executor{Root: root, Progress: NewLineProgress(io.Discard)}).Apply(context.Background(), plan.Actions)
		after := MakePlan(context.Background(), root, ops, Options{})
		b.StopTimer()
		if len(res) < 10000 || len(after.Actions) != 0 {
			b.Fatalf("%d results, %d left", len(res), len(after.Actions))
		}
		root.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}
