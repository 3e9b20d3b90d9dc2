package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// simulatedGuests writes the identity series of n guests as Prometheus
// would store them after scraping them (instance set, honor_labels):
// every guest through guestcheck fleet on one of n/100 hosts, every
// second one through its own textfile too, each with a machine-id, three
// host keys, a hostname, an instance-id, a DHCP client identity, a MAC
// and an address on its host's bridge. Guests 2k and 2k+1 share a
// machine-id for every k below n/200 (1% of the guests, on different
// hosts), so that the rules have collisions to report: it returns how
// many guests share one.
func simulatedGuests(w io.Writer, n int) (shared int) {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# TYPE guestcheck_fleet_vm_identity_info gauge")
	h := func(tag string, i int) string { return fmt.Sprintf("%s%028d", tag, i) }
	series := func(name, inst, dom string, i int, item, value, network string) {
		fmt.Fprintf(bw, `%s{instance=%q,`, name, inst)
		if dom != "" {
			fmt.Fprintf(bw, `domain=%q,`, dom)
		}
		fmt.Fprintf(bw, `boot="%032x",item=%q,value=%q`, i, item, value)
		if network != "" {
			fmt.Fprintf(bw, `,network=%q`, network)
		}
		fmt.Fprintln(bw, "} 1")
	}
	guest := func(name, inst, dom string, i int) {
		mid := h("midd", i)
		if i < n/100 {
			mid = h("midd", i/2)
		}
		series(name, inst, dom, i, "machine-id", mid, "")
		for k := range 3 {
			series(name, inst, dom, i, "ssh-host-key", fmt.Sprintf("SHA256:%043d", i*3+k), "")
		}
		series(name, inst, dom, i, "dhcp-client-id", h("duid", i), "")
		series(name, inst, dom, i, "hostname", fmt.Sprintf("vm%05d", i), "")
		series(name, inst, dom, i, "instance-id", h("iidd", i), "")
		series(name, inst, dom, i, "mac", fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16, i>>8&0xff, i&0xff), "")
		if dom != "" {
			series(name, inst, dom, i, "address", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&0xff, i&0xff), "bridge br0")
		}
	}
	for i := range n {
		guest("guestcheck_fleet_vm_identity_info", fmt.Sprintf("hv%03d:9847", i%(n/100)), fmt.Sprintf("vm%05d", i), i)
	}
	fmt.Fprintln(bw, "# TYPE guestcheck_identity_info gauge")
	for i := 0; i < n; i += 2 {
		guest("guestcheck_identity_info", fmt.Sprintf("vm%05d:9100", i), "", i)
	}
	bw.Flush()
	return n / 100
}

// BenchmarkIdentityRules10k evaluates the shipped cross-host rules in a
// real Prometheus over 10,000 simulated guests (15,000 views, about
// 125,000 identity series, scraped every 10 s from a loopback endpoint)
// and reports, once every shared machine-id alerts, the
// guestcheck-identity group's last evaluation time (wall: on a loaded
// machine it includes waiting for a CPU), the CPU Prometheus used per
// second while it scraped and evaluated (CPU-s/s), its series per guest
// and its peak RSS. `make
// bench` runs it.
func BenchmarkIdentityRules10k(b *testing.B) {
	prom := testenv.Tool(b, "prometheus", "prometheus")
	const guests = 10000
	dir := b.TempDir()
	page := filepath.Join(dir, "metrics.txt")
	f, err := os.Create(page)
	if err != nil {
		b.Fatal(err)
	}
	shared := simulatedGuests(f, guests)
	f.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, page) })}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })

	rules := identityRulesCopy(b, dir, "10s")
	cfg := fmt.Sprintf("global: {scrape_interval: 10s, scrape_timeout: 10s, evaluation_interval: 10s}\nrule_files: ['%s']\n"+
		"scrape_configs:\n  - {job_name: sim, honor_labels: true, static_configs: [{targets: ['%s']}]}\n", rules, l.Addr())
	testenv.WriteFiles(b, dir, map[string]string{"prometheus.yml": cfg})
	promAddr := freePort(b)
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	logs := startLogged(b, p, filepath.Join(dir, "prometheus.log"))

	start := time.Now()
	for len(firingAlerts(b, promAddr, "GuestcheckSharedIdentity")) < shared {
		if time.Since(start) > 3*time.Minute {
			b.Fatalf("%d of %d alerts after %s; log:\n%s", len(firingAlerts(b, promAddr, "GuestcheckSharedIdentity")), shared, time.Since(start), logs())
		}
		time.Sleep(time.Second)
	}
	b.ResetTimer()
	var dur float64
	cpu0, t0 := promSelf(b, promAddr, "process_cpu_seconds_total", ""), time.Now()
	for range b.N {
		last := promSelf(b, promAddr, "prometheus_rule_group_last_evaluation_timestamp_seconds", "guestcheck-identity")
		for promSelf(b, promAddr, "prometheus_rule_group_last_evaluation_timestamp_seconds", "guestcheck-identity") == last {
			time.Sleep(200 * time.Millisecond)
		}
		dur = promSelf(b, promAddr, "prometheus_rule_group_last_duration_seconds", "guestcheck-identity")
	}
	b.StopTimer()
	cpu := (promSelf(b, promAddr, "process_cpu_seconds_total", "") - cpu0) / time.Since(t0).Seconds()
	if n := len(firingAlerts(b, promAddr, "GuestcheckSharedIdentity")); n != shared {
		b.Errorf("%d alerts fire, want %d", n, shared)
	}
	b.ReportMetric(dur, "s/eval")
	b.ReportMetric(cpu, "CPU-s/s")
	b.ReportMetric(promSelf(b, promAddr, "prometheus_tsdb_head_series", "")/guests, "series/guest")
	b.ReportMetric(vmHWM(b, p.Process.Pid)/(1<<20), "MiB-peak-RSS")
	b.ReportMetric(0, "ns/op")
}

// promSelf reads one of Prometheus's own metrics from its /metrics: the
// first sample of name whose labels contain match.
func promSelf(b *testing.B, addr, name, match string) float64 {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if (strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ")) && strings.Contains(line, match) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				b.Fatal(err)
			}
			return v
		}
	}
	b.Fatalf("no %s %s in Prometheus's metrics", name, match)
	return 0
}

// vmHWM is a process's peak resident set, in bytes.
func vmHWM(b *testing.B, pid int) float64 {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}
