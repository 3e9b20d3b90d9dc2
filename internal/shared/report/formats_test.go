package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	stdcmp "cmp"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/promrules"
)

// oddMeta and oddResults hold every character the renderers must escape or
// replace: quotes, backslashes, pipes, '#', XML's specials, line breaks,
// control characters, invalid UTF-8 and keys YAML would retype.
var oddMeta = Meta{Tool: "guestcheck", Version: "1.2.3-\"rc\"\\x\ny", Root: "/mnt/a b",
	Host:      Host{Hostname: "", BootID: ""},
	StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 123e6, time.UTC), Duration: 1500 * time.Millisecond}

var oddResults = []runner.Result{
	res("fstab", runner.New(runner.Fail, "fstab-odd", "quote \" backslash \\ pipe | hash # amp & lt < gt > tab\tend",
		map[string]string{"true": "yes", "a b: c": "line1\nline2\r\nline3", "ctl": "bell\x07 del\x7f c1\u0085 bad\xff é 日本",
			"k": `back\slash "q" 'single'`},
		"Fix | it # now\nsecond line")),
	res("dns", runner.Passf("dns-ok", "all # fine", nil),
		runner.New(runner.Warn, "dns-fragile", "fragile: 'quoted' = value ; semi", nil, "tune it")),
}

// formatCase is one report every format is rendered from.
type formatCase struct {
	name string
	exit int
	rep  Report
}

func formatCases() []formatCase {
	var out []formatCase
	for _, tc := range cases {
		out = append(out, formatCase{tc.name, tc.exit, New(tc.results, meta)})
	}
	return append(out, formatCase{"escaping", 1, New(oddResults, oddMeta)})
}

// goldenExt is each format's golden file suffix.
var goldenExt = map[Format]string{FormatPrometheus: "prom", FormatNagios: "nagios",
	FormatJUnit: "junit.xml", FormatTAP: "tap", FormatJSONL: "jsonl"}

func render(t *testing.T, r Report, f Format, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, f, o); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return b.Bytes()
}

// TestFormatGoldens pins every format's output for every fixture; the
// consumer tests below feed the same bytes to each format's own tool.
func TestFormatGoldens(t *testing.T) {
	t.Parallel()
	for _, tc := range formatCases() {
		for f, ext := range goldenExt {
			golden(t, fmt.Sprintf("%s.%d.%s", tc.name, tc.exit, ext), render(t, tc.rep, f, Options{}))
		}
	}
}

// runTool runs a consumer's tool with a deadline, stdin from in.
func runTool(t *testing.T, in []byte, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// --- prometheus -----------------------------------------------------------

// TestPrometheusPromtool lints every golden with promtool check metrics,
// Prometheus's own checker, and first proves promtool does reject a bad
// file (a counter without _total).
func TestPrometheusPromtool(t *testing.T) {
	t.Parallel()
	promtool := testenv.Tool(t, "promtool", "prometheus")
	if out, errs, err := runTool(t, []byte("# HELP x_requests Requests.\n# TYPE x_requests counter\nx_requests 1\n"), promtool, "check", "metrics"); err == nil {
		t.Fatalf("promtool accepted a counter without _total:\n%s%s", out, errs)
	}
	for _, tc := range formatCases() {
		b := render(t, tc.rep, FormatPrometheus, Options{})
		if out, errs, err := runTool(t, b, promtool, "check", "metrics"); err != nil || out != "" || errs != "" {
			t.Errorf("%s: promtool check metrics: %v\n%s%s", tc.name, err, out, errs)
		}
	}
}

// TestPrometheusValues reads the output back with a strict parser of the
// exposition format and holds every value to the report.
func TestPrometheusValues(t *testing.T) {
	t.Parallel()
	for _, tc := range formatCases() {
		b := render(t, tc.rep, FormatPrometheus, Options{})
		got, err := parseExposition(string(b))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := map[string]float64{}
		for _, st := range runner.Statuses {
			want[fmt.Sprintf(`guestcheck_status{status=%q}`, st)] = b2f(tc.rep.Status == st)
		}
		for _, c := range tc.rep.Checks {
			for _, st := range runner.Statuses {
				n := 0
				for _, f := range c.Findings {
					if f.Status == st {
						n++
					}
				}
				want[fmt.Sprintf(`guestcheck_check_status{check=%q,status=%q}`, c.ID, st)] = b2f(c.Status == st)
				want[fmt.Sprintf(`guestcheck_findings{check=%q,status=%q}`, c.ID, st)] = float64(n)
			}
			want[fmt.Sprintf(`guestcheck_check_duration_seconds{check=%q}`, c.ID)] = float64(c.DurationMS) / 1000
			want[fmt.Sprintf(`guestcheck_findings_waived{check=%q}`, c.ID)] = float64(waivedIn(c))
		}
		want["guestcheck_run_duration_seconds"] = float64(tc.rep.DurationMS) / 1000
		want["guestcheck_last_run_timestamp_seconds"] = float64(tc.rep.StartedAt.UnixMilli()) / 1000
		want[fmt.Sprintf(`guestcheck_build_info{version=%q}`, tc.rep.Version)] = 1
		if tc.rep.Identity != nil {
			boot, _ := guestid.BootHash(tc.rep.Host.BootID)
			for _, e := range guestid.Export(guestid.Member{ID: *tc.rep.Identity}) {
				want[fmt.Sprintf(`guestcheck_identity_info{boot=%q,item=%q,value=%q}`, boot, e.Item, e.Value)] = 1
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: series (-want +got):\n%s", tc.name, d)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// parseExposition is a strict reader of the text format as the textfile
// collector needs it: HELP and TYPE gauge before a family's samples, each
// family's samples together, no sample timestamp, no duplicate series.
// Series keys use Go-quoted label values.
func parseExposition(s string) (map[string]float64, error) {
	if !strings.HasSuffix(s, "\n") {
		return nil, fmt.Errorf("does not end with a newline")
	}
	out := map[string]float64{}
	help, typ, done := map[string]bool{}, map[string]bool{}, map[string]bool{}
	cur := ""
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		n := i + 1
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			if help[name] || text == "" {
				return nil, fmt.Errorf("line %d: repeated or empty HELP for %s", n, name)
			}
			help[name] = true
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, kind, _ := strings.Cut(rest, " ")
			if kind != "gauge" || typ[name] || !help[name] {
				return nil, fmt.Errorf("line %d: want one TYPE gauge after HELP for %s, got %q", n, name, line)
			}
			typ[name] = true
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			return nil, fmt.Errorf("line %d: unexpected %q", n, line)
		}
		name, series, rest, err := splitSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if !typ[name] {
			return nil, fmt.Errorf("line %d: sample of %s before its TYPE", n, name)
		}
		if name != cur {
			if done[name] {
				return nil, fmt.Errorf("line %d: samples of %s are not together", n, name)
			}
			done[cur], cur = true, name
		}
		fields := strings.Fields(rest)
		if len(fields) != 1 {
			return nil, fmt.Errorf("line %d: want one value and no timestamp, got %q", n, rest)
		}
		var v float64
		if _, err := fmt.Sscan(fields[0], &v); err != nil {
			return nil, fmt.Errorf("line %d: value %q: %v", n, fields[0], err)
		}
		if _, dup := out[series]; dup {
			return nil, fmt.Errorf("line %d: duplicate series %s", n, series)
		}
		out[series] = v
	}
	return out, nil
}

// splitSample parses `name{l="v",...} rest`, unescaping label values.
func splitSample(line string) (name, series, rest string, err error) {
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return "", "", "", fmt.Errorf("no metric name in %q", line)
	}
	name, rest = line[:i], line[i:]
	series = name
	if !strings.HasPrefix(rest, "{") {
		return name, series, rest, nil
	}
	rest = rest[1:]
	var labels []string
	for !strings.HasPrefix(rest, "}") {
		k, after, ok := strings.Cut(rest, `="`)
		if !ok {
			return "", "", "", fmt.Errorf("bad label in %q", line)
		}
		var v strings.Builder
		j := 0
		for ; j < len(after) && after[j] != '"'; j++ {
			if after[j] != '\\' {
				v.WriteByte(after[j])
				continue
			}
			j++
			switch {
			case j >= len(after):
				return "", "", "", fmt.Errorf("dangling backslash in %q", line)
			case after[j] == 'n':
				v.WriteByte('\n')
			case after[j] == '\\' || after[j] == '"':
				v.WriteByte(after[j])
			default:
				return "", "", "", fmt.Errorf("bad escape \\%c in %q", after[j], line)
			}
		}
		if j >= len(after) {
			return "", "", "", fmt.Errorf("unterminated label value in %q", line)
		}
		labels = append(labels, fmt.Sprintf("%s=%q", k, v.String()))
		rest = strings.TrimPrefix(after[j+1:], ",")
	}
	return name, name + "{" + strings.Join(labels, ",") + "}", rest[1:], nil
}

func TestPrometheusParserRejects(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"# HELP a A.\n# TYPE a gauge\na 1 1700000000000\n", // sample timestamp
		"a 1\n",                                // no HELP/TYPE
		"# HELP a A.\n# TYPE a counter\na 1\n", // not a gauge
		"# HELP a A.\n# TYPE a gauge\n# HELP b B.\n# TYPE b gauge\na 1\nb 1\na{x=\"1\"} 1\n", // split family
		"# HELP a A.\n# TYPE a gauge\na{x=\"\\t\"} 1\n",                                      // bad escape
		"# HELP a A.\n# TYPE a gauge\na 1",                                                   // no final newline
	} {
		if _, err := parseExposition(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestNodeExporterTextfile hands the output to node_exporter's textfile
// collector, the consumer it is for, on a loopback port, and checks that
// the collector reads it without error and serves every series. It first
// proves the collector does flag a file whose samples carry timestamps.
func TestNodeExporterTextfile(t *testing.T) {
	t.Parallel()
	ne := testenv.Tool(t, "prometheus-node-exporter", "prometheus-node-exporter")
	bad := []byte("# HELP guestcheck_x X.\n# TYPE guestcheck_x gauge\nguestcheck_x 1 1700000000000\n")
	if m := scrapeTextfile(t, ne, bad); !strings.Contains(m, "node_textfile_scrape_error 1") {
		t.Fatalf("node_exporter did not flag a sample timestamp:\n%s", m)
	}
	for _, tc := range formatCases() {
		b := render(t, tc.rep, FormatPrometheus, Options{})
		m := scrapeTextfile(t, ne, b)
		if !strings.Contains(m, "node_textfile_scrape_error 0") {
			t.Errorf("%s: node_exporter reports a textfile error:\n%s", tc.name, m)
			continue
		}
		want, _ := parseExposition(string(b))
		served := map[string]bool{}
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, "guestcheck_") {
				if name, series, _, err := splitSample(l); err == nil && name != "" {
					served[series] = true
				}
			}
		}
		for s := range want {
			if !served[s] {
				t.Errorf("%s: node_exporter does not serve %s", tc.name, s)
			}
		}
	}
}

// scrapeTextfile runs node_exporter with only the textfile collector over a
// directory holding b as guestcheck.prom, scrapes /metrics once and stops it.
func scrapeTextfile(t *testing.T, ne string, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "guestcheck.prom"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ne, "--collector.disable-defaults", "--collector.textfile",
		"--collector.textfile.directory="+dir, "--web.listen-address="+addr)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	for ctx.Err() == nil {
		if body, err := httpGet(ctx, "http://"+addr+"/metrics"); err == nil {
			return body
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("node_exporter did not answer on %s: %s", addr, logs.String())
	return ""
}

// --- nagios ---------------------------------------------------------------

// nagiosOut is plugin output as the monitoring-plugins guidelines define it.
type nagiosOut struct {
	service, state, text string
	perf                 []perfItem
	long                 []string
}

type perfItem struct{ label, value, uom, warn, crit, min, max string }

// parseNagios enforces the Monitoring Plugins development guidelines on
// plugin output: "SERVICE STATUS: text | perfdata" on the first line, at
// most 80 characters of text, long text after it, each perfdata item
// 'label'=value[UOM];[warn];[crit];[min];[max] with the label rules
// (no '=' or unpaired "'", quotes required around spaces, ” for a quote),
// values in [-0-9.] or U, a known UOM, warn and crit in range format.
func parseNagios(out string, maxText int) (nagiosOut, error) {
	var o nagiosOut
	if !strings.HasSuffix(out, "\n") || strings.Contains(out, "\r") {
		return o, fmt.Errorf("output must be newline-terminated lines without CR")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	text, perf, _ := strings.Cut(lines[0], "|")
	text = strings.TrimRight(text, " ")
	if len(text) > maxText {
		return o, fmt.Errorf("status text is %d characters, over %d: %q", len(text), maxText, text)
	}
	head, info, ok := strings.Cut(text, ": ")
	if !ok || info == "" {
		return o, fmt.Errorf("first line is not \"SERVICE STATUS: text\": %q", text)
	}
	i := strings.LastIndexByte(head, ' ')
	if i <= 0 {
		return o, fmt.Errorf("no service name before the status: %q", head)
	}
	o.service, o.state, o.text = head[:i], head[i+1:], info
	switch o.state {
	case "OK", "WARNING", "CRITICAL", "UNKNOWN":
	default:
		return o, fmt.Errorf("status %q is not OK, WARNING, CRITICAL or UNKNOWN", o.state)
	}
	// Long text; a '|' there starts perfdata that runs to the end.
	for j, l := range lines[1:] {
		if t, p, found := strings.Cut(l, "|"); found {
			o.long = append(o.long, t)
			perf += " " + p + " " + strings.Join(lines[j+2:], " ")
			break
		}
		o.long = append(o.long, l)
	}
	items, err := perfTokens(perf)
	if err != nil {
		return o, err
	}
	for _, it := range items {
		p, err := parsePerf(it)
		if err != nil {
			return o, err
		}
		o.perf = append(o.perf, p)
	}
	return o, nil
}

// perfTokens splits perfdata at spaces outside quoted labels.
func perfTokens(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && quoted && i+1 < len(s) && s[i+1] == '\'':
			cur.WriteString("''")
			i++
		case c == '\'':
			quoted = !quoted
			cur.WriteByte(c)
		case c == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quoted label in %q", s)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out, nil
}

var (
	perfNum   = `-?[0-9]*\.?[0-9]+|-?[0-9]+\.`
	perfValue = mustRe(`^(` + perfNum + `|U)(s|ms|us|%|B|KB|MB|TB|c)?$`)
	perfRange = mustRe(`^@?((~|` + perfNum + `)?:)?(` + perfNum + `)?$`)
	perfMinMx = mustRe(`^(` + perfNum + `)?$`)
)

func parsePerf(it string) (perfItem, error) {
	var p perfItem
	var label, rest string
	if strings.HasPrefix(it, "'") {
		end := -1
		for i := 1; i < len(it); i++ {
			if it[i] == '\'' {
				if i+1 < len(it) && it[i+1] == '\'' {
					i++
					continue
				}
				end = i
				break
			}
		}
		if end < 0 || end+1 >= len(it) || it[end+1] != '=' {
			return p, fmt.Errorf("perfdata %q: bad quoted label", it)
		}
		label, rest = strings.ReplaceAll(it[1:end], "''", "'"), it[end+2:]
	} else {
		var ok bool
		label, rest, ok = strings.Cut(it, "=")
		if !ok || strings.ContainsAny(label, "' ") {
			return p, fmt.Errorf("perfdata %q: want label=value, a quote needs quoting", it)
		}
	}
	if label == "" || strings.Contains(label, "=") {
		return p, fmt.Errorf("perfdata %q: empty label or '=' in it", it)
	}
	f := strings.Split(rest, ";")
	if len(f) > 5 {
		return p, fmt.Errorf("perfdata %q: more than value;warn;crit;min;max", it)
	}
	f = append(f, make([]string, 5-len(f))...)
	m := perfValue.FindStringSubmatch(f[0])
	if m == nil {
		return p, fmt.Errorf("perfdata %q: value %q is not [-0-9.] or U with a known UOM", it, f[0])
	}
	for _, r := range f[1:3] {
		if !perfRange.MatchString(r) {
			return p, fmt.Errorf("perfdata %q: threshold %q is not a range", it, r)
		}
	}
	for _, r := range f[3:5] {
		if !perfMinMx.MatchString(r) {
			return p, fmt.Errorf("perfdata %q: min/max %q is not a number", it, r)
		}
	}
	return perfItem{label, m[1], m[2], f[1], f[2], f[3], f[4]}, nil
}

func TestNagiosParserRejects(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"GUESTCHECK OK: fine",                              // no newline
		"GUESTCHECK FINE: x\n",                             // unknown state
		"all good\n",                                       // no SERVICE STATUS:
		"GUESTCHECK OK: x | a=1;2;3;4;5;6\n",               // too many fields
		"GUESTCHECK OK: x | a b=1\n",                       // space needs quotes
		"GUESTCHECK OK: x | it's=1\n",                      // quote in unquoted label
		"GUESTCHECK OK: x | a=abc\n",                       // not a number
		"GUESTCHECK OK: x | a=1kg\n",                       // unknown UOM
		"GUESTCHECK OK: x | a=1;x\n",                       // bad range
		"GUESTCHECK OK: x | 'a=1\n",                        // unterminated quote
		"GUESTCHECK OK: " + strings.Repeat("x", 70) + "\n", // over 80
		"GUESTCHECK OK: x\nlong | a=\n",                    // empty value in long perfdata
	} {
		if _, err := parseNagios(bad, 80); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	good := "DISK OK: x free | '/ it''s'=3326MB;@10:20;~:30;0;5000 time=0.1s;;;0.0 u=U\nlong text\nmore | x=1\n"
	o, err := parseNagios(good, 80)
	if err != nil || len(o.perf) != 4 || o.perf[0].label != "/ it's" || o.perf[0].uom != "MB" || len(o.long) != 2 {
		t.Errorf("rejected or misread %q: %+v %v", good, o, err)
	}
}

// TestNagiosOutput holds every fixture to the plugin rules and to the
// report: the state word agrees with NagiosExitCode, the perfdata counts
// with the summary, and each problem finding is in the long text.
func TestNagiosOutput(t *testing.T) {
	t.Parallel()
	wantCode := map[string]int{"healthy": NagiosOK, "warn": NagiosWarning, "fail": NagiosCritical, "escaping": NagiosCritical, "waived": NagiosOK}
	for _, tc := range formatCases() {
		for _, o := range []NagiosOptions{{}, {ServiceName: "VM delivery"}, {Verbose: true}} {
			out := string(render(t, tc.rep, FormatNagios, Options{Nagios: o}))
			p, err := parseNagios(out, 80)
			if err != nil {
				t.Errorf("%s %+v: %v\n%s", tc.name, o, err, out)
				continue
			}
			if code := NagiosExitCode(tc.rep); code != wantCode[tc.name] || p.state != NagiosWord(code) {
				t.Errorf("%s: state %s, NagiosExitCode %d; want %s", tc.name, p.state, code, NagiosWord(wantCode[tc.name]))
			}
			if want := stdcmp.Or(o.ServiceName, DefaultServiceName); p.service != want {
				t.Errorf("%s: service %q, want %q", tc.name, p.service, want)
			}
			s := tc.rep.Summary
			want := map[string]string{"checks": fmt.Sprint(len(tc.rep.Checks)), "pass": fmt.Sprint(s.Pass), "warn": fmt.Sprint(s.Warn),
				"fail": fmt.Sprint(s.Fail), "error": fmt.Sprint(s.Error), "skip": fmt.Sprint(s.Skip),
				"duration": millis(tc.rep.DurationMS)}
			if s.Waived > 0 {
				want["waived"] = fmt.Sprint(s.Waived)
			}
			got := map[string]string{}
			for _, it := range p.perf {
				got[it.label] = it.value
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: perfdata (-want +got):\n%s", tc.name, d)
			}
			long := strings.Join(p.long, "\n")
			for _, c := range tc.rep.Checks {
				for _, f := range c.Findings {
					shown := strings.Contains(long, " "+f.Code+": ")
					if wantShown := o.Verbose || (f.Status != runner.Pass && f.Status != runner.Skip); shown != wantShown {
						t.Errorf("%s %+v: finding %s in long text = %v, want %v", tc.name, o, f.Code, shown, wantShown)
					}
				}
			}
		}
	}
	// The pipe in the odd fixture's message must not have become perfdata.
	out := string(render(t, New(oddResults, oddMeta), FormatNagios, Options{}))
	if !strings.Contains(out, "pipe ¦ hash") || strings.Count(out, "|") != 1 {
		t.Errorf("pipes not replaced:\n%s", out)
	}
	if err := WriteNagios(&bytes.Buffer{}, New(oddResults, oddMeta), NagiosOptions{ServiceName: "A|B"}); err == nil {
		t.Error("a service name with a pipe was accepted")
	}
}

func TestNagiosExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sts  []runner.Status
		want int
	}{
		{nil, NagiosUnknown}, // nothing ran: nothing verified
		{[]runner.Status{runner.Skip, runner.Skip}, NagiosUnknown},
		{[]runner.Status{runner.Pass, runner.Skip}, NagiosOK},
		{[]runner.Status{runner.Pass, runner.Warn}, NagiosWarning},
		{[]runner.Status{runner.Warn, runner.Error}, NagiosUnknown},
		{[]runner.Status{runner.Error, runner.Fail}, NagiosCritical},
		{[]runner.Status{runner.Pass, "bogus"}, NagiosUnknown},
	} {
		var rs []runner.Result
		for i, s := range tc.sts {
			rs = append(rs, runner.Result{ID: fmt.Sprint("c", i), Status: s,
				Findings: []runner.Finding{{Status: s, Code: "x", Message: "m"}}})
		}
		if got := NagiosExitCode(New(rs, meta)); got != tc.want {
			t.Errorf("NagiosExitCode(%v) = %d, want %d", tc.sts, got, tc.want)
		}
	}
}

// --- junit ----------------------------------------------------------------

// junitSchemas are the two widely used JUnit XSDs stored in schema/junit.
var junitSchemas = []string{"../../../schema/junit/junit-10.xsd", "../../../schema/junit/JUnit.xsd"}

// TestJUnitSchemas validates every golden with xmllint --schema against
// both schemas, after proving each schema rejects a document it must.
func TestJUnitSchemas(t *testing.T) {
	t.Parallel()
	xmllint := testenv.Tool(t, "xmllint", "libxml2-utils")
	broken := writeTemp(t, "broken.xml", []byte(`<?xml version="1.0"?><testsuites><testsuite name="x"><testcase/></testsuite></testsuites>`))
	for _, xsd := range junitSchemas {
		if _, errs, err := runTool(t, nil, xmllint, "--noout", "--schema", xsd, broken); err == nil {
			t.Errorf("%s accepted a suite without tests/failures/errors: %s", xsd, errs)
		}
	}
	for _, tc := range formatCases() {
		p := writeTemp(t, tc.name+".xml", render(t, tc.rep, FormatJUnit, Options{}))
		for _, xsd := range junitSchemas {
			if out, errs, err := runTool(t, nil, xmllint, "--noout", "--schema", xsd, p); err != nil {
				t.Errorf("%s against %s: %v\n%s%s", tc.name, filepath.Base(xsd), err, out, errs)
			}
		}
	}
}

// TestJUnitContent reads the XML back and holds counts and test cases to
// the report.
func TestJUnitContent(t *testing.T) {
	t.Parallel()
	for _, tc := range formatCases() {
		var doc junitxml.Suites
		if err := xml.Unmarshal(render(t, tc.rep, FormatJUnit, Options{}), &doc); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(doc.Suites) != len(tc.rep.Checks) {
			t.Fatalf("%s: %d suites for %d checks", tc.name, len(doc.Suites), len(tc.rep.Checks))
		}
		for i, c := range tc.rep.Checks {
			s := doc.Suites[i]
			var fails, errs, skips int
			for j, f := range c.Findings {
				tcase := s.Cases[j]
				switch {
				case f.Waived != nil && f.Status != runner.Pass:
					skips++
					if tcase.Skipped == nil || !strings.HasPrefix(tcase.Skipped.Message, "waived "+string(f.Status)+": "+f.Waived.Reason) {
						t.Errorf("%s/%s: waived finding is not <skipped> saying so: %+v", tc.name, c.ID, tcase)
					}
				case f.Status == runner.Fail || f.Status == runner.Warn:
					fails++
					if tcase.Failure == nil || tcase.Failure.Type != string(f.Status) || !strings.Contains(tcase.Failure.Body, f.Remediation) {
						t.Errorf("%s/%s: %s finding is not a failure with its fix: %+v", tc.name, c.ID, f.Status, tcase)
					}
				case f.Status == runner.Error:
					errs++
					if tcase.Error == nil {
						t.Errorf("%s/%s: error finding is not an <error>", tc.name, c.ID)
					}
				case f.Status == runner.Skip:
					skips++
					if tcase.Skipped == nil || tcase.Skipped.Message != strings.ToValidUTF8(f.Message, "\uFFFD") {
						t.Errorf("%s/%s: skip finding is not <skipped> with its reason", tc.name, c.ID)
					}
				case f.Status == runner.Pass:
					if tcase.Failure != nil || tcase.Error != nil || tcase.Skipped != nil {
						t.Errorf("%s/%s: pass finding has a child", tc.name, c.ID)
					}
				}
			}
			if s.Name != c.ID || s.Tests != len(c.Findings) || s.Failures != fails || s.Errors != errs || s.Skipped != skips {
				t.Errorf("%s: suite %+v does not match check %s", tc.name, s, c.ID)
			}
		}
	}
}

// --- tap ------------------------------------------------------------------

// tapParsed is what testdata/tap-parse.pl prints.
type tapParsed struct {
	Version      int      `json:"version"`
	Plan         string   `json:"plan"`
	Passed       []int    `json:"passed"`
	Failed       []int    `json:"failed"`
	Skipped      []int    `json:"skipped"`
	ParseErrors  []string `json:"parse_errors"`
	HasProblems  bool     `json:"has_problems"`
	TestsPlanned int      `json:"tests_planned"`
	Tests        []struct {
		Number      int            `json:"number"`
		OK          bool           `json:"ok"`
		Description string         `json:"description"`
		Directive   string         `json:"directive"`
		Explanation string         `json:"explanation"`
		YAML        map[string]any `json:"yaml"`
	} `json:"tests"`
}

// TestTAPParser parses every golden with Perl's TAP::Parser and compares
// what it read with the report: plan, ok and not ok, SKIP with reason, and
// the YAML block's findings, which a YAML 1.2 parser must read alike. prove
// must pass the healthy run and fail the others.
func TestTAPParser(t *testing.T) {
	t.Parallel()
	perl := testenv.Tool(t, "perl", "perl")
	prove := testenv.Tool(t, "prove", "perl")
	for _, tc := range formatCases() {
		b := render(t, tc.rep, FormatTAP, Options{})
		out, errs, err := runTool(t, b, perl, "testdata/tap-parse.pl")
		if err != nil {
			t.Fatalf("%s: tap-parse.pl: %v\n%s", tc.name, err, errs)
		}
		var p tapParsed
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		if p.Version != 13 || len(p.ParseErrors) > 0 || p.TestsPlanned != len(tc.rep.Checks) || len(p.Tests) != len(tc.rep.Checks) {
			t.Errorf("%s: version %d, errors %q, planned %d, %d tests", tc.name, p.Version, p.ParseErrors, p.TestsPlanned, len(p.Tests))
			continue
		}
		blocks := tapYAMLBlocks(t, string(b))
		for i, c := range tc.rep.Checks {
			pt := p.Tests[i]
			wantOK := c.Status == runner.Pass || c.Status == runner.Skip
			if pt.Number != i+1 || pt.OK != wantOK {
				t.Errorf("%s: test %d (%s): ok=%v, want %v", tc.name, pt.Number, c.ID, pt.OK, wantOK)
			}
			if c.Status == runner.Skip {
				if pt.Directive != "SKIP" || pt.Explanation != tapText(c.Summary) || pt.Description != "- "+c.ID {
					t.Errorf("%s: skipped check %s read as %+v", tc.name, c.ID, pt)
				}
			} else if pt.Directive != "" || pt.Description != "- "+c.ID+": "+tapText(c.Summary) {
				t.Errorf("%s: check %s read as %q %q", tc.name, c.ID, pt.Description, pt.Directive)
			}
			want := tapWantYAML(c)
			if d := cmp.Diff(want, pt.YAML); d != "" {
				t.Errorf("%s: TAP::Parser's YAML of %s (-want +got):\n%s", tc.name, c.ID, d)
			}
			if d := cmp.Diff(want, blocks[i]); d != "" {
				t.Errorf("%s: yaml.v3's YAML of %s (-want +got):\n%s", tc.name, c.ID, d)
			}
		}
		_, _, err = runTool(t, nil, prove, "--exec", "cat", writeTemp(t, tc.name+".tap", b))
		if allOK := tc.rep.Summary.Fail+tc.rep.Summary.Error+tc.rep.Summary.Warn == 0; (err == nil) != allOK {
			t.Errorf("%s: prove error %v, want success only for a run without problems", tc.name, err)
		}
	}
}

// tapWantYAML is a check's YAML block as data, strings as the renderer
// must pass them through (C1 controls and invalid UTF-8 become U+FFFD).
func tapWantYAML(c Check) map[string]any {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 0x80 && r < 0xa0 {
				return '\uFFFD'
			}
			return r
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	m := map[string]any{"message": clean(c.Summary), "severity": string(c.Status), "title": clean(c.Title),
		"duration_ms": fmt.Sprint(c.DurationMS)}
	var fs []any
	for _, f := range c.Findings {
		fm := map[string]any{"status": string(f.Status), "code": f.Code, "message": clean(f.Message)}
		if len(f.Detail) > 0 {
			d := map[string]any{}
			for k, v := range f.Detail {
				d[clean(k)] = clean(v)
			}
			fm["detail"] = d
		}
		if f.Remediation != "" {
			fm["remediation"] = clean(f.Remediation)
		}
		if f.Waived != nil {
			w := map[string]any{"reason": clean(f.Waived.Reason)}
			if f.Waived.Expires != "" {
				w["expires"] = f.Waived.Expires
			}
			fm["waived"] = w
		}
		fs = append(fs, fm)
	}
	if fs != nil {
		m["findings"] = fs
	}
	return m
}

// tapYAMLBlocks parses each YAML block with yaml.v3, numbers as strings
// (as TAP::Parser gives them) so both compare with tapWantYAML.
func tapYAMLBlocks(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	var cur []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		switch {
		case l == "  ---":
			in, cur = true, nil
		case l == "  ..." && in:
			in = false
			var m map[string]any
			if err := yaml.Unmarshal([]byte(strings.Join(cur, "\n")), &m); err != nil {
				t.Fatalf("yaml.v3: %v\n%s", err, strings.Join(cur, "\n"))
			}
			out = append(out, stringifyNumbers(m).(map[string]any))
		case in:
			cur = append(cur, l)
		}
	}
	return out
}

func stringifyNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = stringifyNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stringifyNumbers(e)
		}
	case int:
		return fmt.Sprint(x)
	}
	return v
}

// --- jsonl ----------------------------------------------------------------

// TestJSONLSchema validates every line of every golden against
// schema/finding-line-v1.schema.json, and proves the
// schema rejects a line with the wrong priority or no remediation.
func TestJSONLSchema(t *testing.T) {
	t.Parallel()
	schema := compileSchemaFile(t, "../../../schema/finding-line-v1.schema.json")
	for _, tc := range formatCases() {
		for i, l := range strings.Split(strings.TrimSuffix(string(render(t, tc.rep, FormatJSONL, Options{})), "\n"), "\n") {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(l))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Errorf("%s line %d: %v", tc.name, i+1, err)
			}
		}
	}
	good := `{"time":"2026-11-29T12:00:00.000Z","tool":"guestcheck","version":"1","host":"h","boot_id":"","root":"/","check":"dns","check_status":"fail","status":"fail","priority":3,"code":"dns-x","message":"m","remediation":"r"}`
	for _, bad := range []string{
		strings.Replace(good, `"priority":3`, `"priority":6`, 1),
		strings.Replace(good, `,"remediation":"r"`, ``, 1),
		strings.Replace(good, `"code":"dns-x"`, `"code":"DNS X"`, 1),
	} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if schema.Validate(inst) == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(good))
	if err := schema.Validate(inst); err != nil {
		t.Errorf("schema rejected a good line: %v", err)
	}
}

// TestJSONLWithJq reads every golden with jq, the tool log pipelines are
// scripted with: one object a line, one line per finding, in report order.
func TestJSONLWithJq(t *testing.T) {
	t.Parallel()
	jq := testenv.Tool(t, "jq", "jq")
	for _, tc := range formatCases() {
		b := render(t, tc.rep, FormatJSONL, Options{})
		// -e fails unless every line is an object with the fields set.
		out, errs, err := runTool(t, b, jq, "-e", "-r", `select(type == "object" and (.check|type) == "string" and (.status|type) == "string" and (.priority|type) == "number") | .check + " " + .status + " " + .code`)
		if err != nil {
			t.Fatalf("%s: jq: %v %s", tc.name, err, errs)
		}
		var want []string
		for _, c := range tc.rep.Checks {
			for _, f := range c.Findings {
				want = append(want, c.ID+" "+string(f.Status)+" "+f.Code)
			}
		}
		if d := cmp.Diff(strings.Join(want, "\n")+"\n", out); d != "" {
			t.Errorf("%s: jq's view (-want +got):\n%s", tc.name, d)
		}
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			dec := json.NewDecoder(strings.NewReader(l))
			dec.DisallowUnknownFields()
			var fl FindingLine
			if err := dec.Decode(&fl); err != nil || fl.Host != tc.rep.Host.Hostname || fl.Version != tc.rep.Version {
				t.Errorf("%s line %d: %v %+v", tc.name, i+1, err, fl)
			}
		}
	}
}

// --- helpers --------------------------------------------------------------

func mustRe(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// freeLoopbackAddr is a 127.0.0.1 port that was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

// TestPrometheusAlertRules checks the shipped alerting rules with promtool
// check rules, then runs promtool test rules with each golden's series as
// input: the failing-check alert fires for exactly the fail and error
// checks, the warning alert for the warn checks, and the staleness alert
// only when the timestamp stops moving.
func TestPrometheusAlertRules(t *testing.T) {
	t.Parallel()
	rules := promrules.Load(t, "../../../packaging/examples/prometheus-guestcheck-rules.yml")
	const instance = "vm1:9100"
	var tests []promrules.Test
	for _, tc := range formatCases() {
		got, err := parseExposition(string(render(t, tc.rep, FormatPrometheus, Options{})))
		if err != nil {
			t.Fatal(err)
		}
		rt := promrules.Test{Interval: "1m"}
		for s, v := range got {
			vals := fmt.Sprintf("%gx150", v)
			if strings.HasPrefix(s, "guestcheck_last_run_timestamp_seconds") {
				vals = "0+60x150" // refreshed every minute: never stale
			}
			rt.Input = append(rt.Input, promrules.Series{Series: promrules.WithInstance(s, instance), Values: vals})
		}
		failing := promrules.AlertTest{EvalTime: "2h", Alertname: "GuestcheckCheckFailing", ExpAlerts: []promrules.Alert{}}
		warning := promrules.AlertTest{EvalTime: "2h", Alertname: "GuestcheckCheckWarning", ExpAlerts: []promrules.Alert{}}
		for _, c := range tc.rep.Checks {
			l := map[string]string{"__name__": "guestcheck_check_status", "check": c.ID, "status": string(c.Status), "instance": instance}
			switch c.Status {
			case runner.Fail, runner.Error:
				l2 := map[string]string{"check": c.ID, "status": string(c.Status), "instance": instance, "severity": "critical"}
				failing.ExpAlerts = append(failing.ExpAlerts, promrules.Alert{Labels: l2, Annotations: rules.Annotations(t, failing.Alertname, l, "")})
			case runner.Warn:
				l2 := map[string]string{"check": c.ID, "status": "warn", "instance": instance, "severity": "warning"}
				warning.ExpAlerts = append(warning.ExpAlerts, promrules.Alert{Labels: l2, Annotations: rules.Annotations(t, warning.Alertname, l, "")})
			}
		}
		fresh := promrules.AlertTest{EvalTime: "2h", Alertname: "GuestcheckMetricsStale", ExpAlerts: []promrules.Alert{}}
		rt.Alerts = append(rt.Alerts, failing, warning, fresh)
		tests = append(tests, rt)
	}
	// A timestamp that stops at 0 is 30 minutes old at 30m.
	staleLabels := map[string]string{"instance": instance, "severity": "warning"}
	tests = append(tests, promrules.Test{Interval: "1m",
		Input: []promrules.Series{{Series: promrules.WithInstance("guestcheck_last_run_timestamp_seconds", instance), Values: "0x60"}},
		Alerts: []promrules.AlertTest{{EvalTime: "30m", Alertname: "GuestcheckMetricsStale",
			ExpAlerts: []promrules.Alert{{Labels: staleLabels, Annotations: rules.Annotations(t, "GuestcheckMetricsStale", map[string]string{"instance": instance}, "30m 0s")}}}}})
	rules.Run(t, tests)
}

// BenchmarkPrometheus renders a report with and without its identity:
// the identity series are all that --format prometheus adds to a run,
// since the identity is read on every run anyway.
func BenchmarkPrometheus(b *testing.B) {
	for _, withID := range []bool{false, true} {
		m := meta
		if !withID {
			m.Identity = nil
		}
		rep := New(cases[2].results, m)
		b.Run(fmt.Sprintf("identity=%v", withID), func(b *testing.B) {
			for range b.N {
				if err := WritePrometheus(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
