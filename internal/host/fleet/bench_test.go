package fleet

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
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

// writeHosts writes hosts surveys of perHost VMs each to dir. Every VM
// has its own identity but one: the first VM of each host shares its
// machine-id with the first VM of the host before (clones of one
// template scheduled on two hosts).
func writeHosts(tb testing.TB, dir string, hosts, perHost int) []string {
	tb.Helper()
	var files []string
	for h := range hosts {
		var vms []VM
		for v := range perHost {
			n := h*perHost + v
			mid := fmt.Sprintf("%032x", n)
			if v == 0 && h%2 == 1 {
				mid = fmt.Sprintf("%032x", n-perHost)
			}
			mac := fmt.Sprintf("52:54:00:%02x:%02x:%02x", n>>16&0xff, n>>8&0xff, n&0xff)
			id := &guestid.Identity{MachineIDHash: mid, Hostname: fmt.Sprintf("vm%d", n),
				HostKeys:   []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: fmt.Sprintf("SHA256:%043d", n)}},
				Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: mac, Addresses: []string{fmt.Sprintf("198.51.100.%d/24", v+1)}}}}
			vms = append(vms, VM{Name: fmt.Sprintf("vm%02d", v), Source: "libvirt", Status: Pass, AgentVersion: "9.2.0",
				Report: ptr(fleettest.RealisticReport(id)), Networks: map[string]string{mac: "default"}})
		}
		files = append(files, writeSurvey(tb, dir, fmt.Sprintf("hv%03d.json", h), fmt.Sprintf("hv%03d", h), vms))
	}
	return files
}

// BenchmarkMerge is issue #30's merge without Prometheus: 100 host
// surveys of 50 VMs each (5,000 VMs, about 105 MiB of JSON) from files
// on disk, through reading, the typed decode with SurveyTypes' checks,
// and Collisions. BenchmarkMergeJSON also writes the merged JSON, which
// reads every report again from its file.
func BenchmarkMerge(b *testing.B) { benchMerge(b, false) }

// BenchmarkMergeJSON is BenchmarkMerge with the merged survey written
// as JSON, as guestcheck fleet --merge --format json does.
func BenchmarkMergeJSON(b *testing.B) { benchMerge(b, true) }

func benchMerge(b *testing.B, write bool) {
	files := writeHosts(b, b.TempDir(), benchHosts, 50)
	cpu := cpuTime()
	for b.Loop() {
		r, err := Merge(files, MergeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.VMs) != benchHosts*50 || len(r.Collisions) != benchHosts/2 {
			b.Fatalf("%d VMs, %d collisions", len(r.VMs), len(r.Collisions))
		}
		if write {
			if err := WriteJSON(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's CPU time (user and system) so far: on a
// shared machine the wall time says more about the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchHosts is the number of hosts.
const benchHosts = 100

func ptr[T any](v T) *T { return &v }
