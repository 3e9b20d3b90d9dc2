package cloudinit_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file generates the corpus of TestDiffersFromCloudInitOnlyAsDocumented:
// status.json / result.json / boot-state combinations, from a fixed seed,
// so that the corpus is the same on every run.

// corpusSeed fixes the generator; change it only together with the
// figures quoted in docs/checks/cloud-init.md.
const corpusSeed = 20261201

// diffUptime is the fake system's uptime: every generated stage time lies
// within it, so that no status.json reads as one from an earlier boot.
const diffUptime = 300.0

// diffBootEpoch is the fake system's boot time (2026-11-29 22:00:00 UTC);
// epoch-encoded stage times lie between it and diffBootEpoch+diffUptime.
const diffBootEpoch = 1795989600

// stageNames are the v1 keys cloud-init writes, in boot order; 22.4 also
// writes modules-init, always with null times.
var stageNames = []string{"init-local", "init", "modules-config", "modules-final"}

// stageState is what one stage's record says.
type stageState int

const (
	stAbsent  stageState = iota // no key at all
	stPending                   // start and finished null
	stRunning                   // start set, finished null
	stDone                      // start and finished set, no errors
	stError                     // start and finished set, with errors
)

// genStatus describes a generated, well-formed status.json.
type genStatus struct {
	epoch      bool
	datasource string // "" absent, "null" JSON null, else the string
	stage      string // "" null, "-" key absent, else the stage name
	stages     [4]stageState
	// errors per stage index, used when that stage is stError (or, for a
	// running stage, errors recorded before the run ended).
	errors [4][]string
	// recoverable adds recoverable_errors (23.4+) to these stage indexes.
	recoverable []int
	// modulesInit adds 22.4's null modules-init key; extra adds an unknown
	// object-valued key with an error, which cloud-init treats as a stage.
	modulesInit, extra bool
	// nanStart writes NaN (not JSON, accepted by Python) as the first
	// started stage's start; errorsString writes a stage's errors as a
	// string, which Python's list.extend takes character by character.
	nanStart, errorsString bool
	// seed draws the stage times, so that marshal stays a pure function.
	seed uint64
}

// corpusCase is one combination.
type corpusCase struct {
	name string
	// status and result are the file contents; nil: absent. statusDir and
	// resultDir put a directory there instead.
	status, result       []byte
	statusDir, resultDir bool
	// statusLink and resultLink write the file as cloud-init does: in
	// /var/lib/cloud/data, with a relative symlink to it in
	// /run/cloud-init. A link with no content (result nil) dangles.
	statusLink, resultLink bool
	gen                    *genStatus // nil for hand-written status.json
	// resultValid: result.json exists and is a well-formed result.
	resultValid bool
	// boot state
	sysvinit     bool
	marker       bool   // /etc/cloud/cloud-init.disabled
	generator    string // "", "enabled" or "disabled": /run/cloud-init/<it>
	cmdline      string
	bootFinished string // "" absent, else its content
}

// statusShape is a named way to build status.json.
type statusShape struct {
	name string
	gen  func(r *rand.Rand) *genStatus // nil for raw shapes
	raw  func(r *rand.Rand) []byte
	dir  bool
}

var errTexts = []string{
	"('scripts-user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))",
	"('write-files', FileNotFoundError(2, 'No such file or directory'))",
	"('locale', ProcessExecutionError(\"Unexpected error while running command.\\nCommand: ['update-locale', 'LANG=en_US.UTF-8']\\nExit code: 255\"))",
	"('runcmd', TypeError(\"Failed to shellify [False] into file /var/lib/cloud/instances/iid/scripts/runcmd\"))",
	"Consuming user data failed!",
	"('users-groups', KeyError('héllo — ünïcode'))",
}

func pickErrors(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = errTexts[r.IntN(len(errTexts))]
	}
	return out
}

// healthy is every stage done, as after a clean boot.
func healthy(r *rand.Rand) *genStatus {
	return &genStatus{epoch: r.IntN(2) == 0, datasource: "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]", stage: "",
		stages: [4]stageState{stDone, stDone, stDone, stDone}, modulesInit: r.IntN(2) == 0, seed: r.Uint64()}
}

func withError(stages ...int) func(r *rand.Rand) *genStatus {
	return func(r *rand.Rand) *genStatus {
		g := healthy(r)
		for _, i := range stages {
			g.stages[i] = stError
			g.errors[i] = pickErrors(r, 1+r.IntN(2))
		}
		return g
	}
}

// runningIn is cloud-init in stage i: earlier stages done, later pending.
func runningIn(i int, stageKey bool) func(r *rand.Rand) *genStatus {
	return func(r *rand.Rand) *genStatus {
		g := healthy(r)
		g.stage = "-"
		if stageKey {
			g.stage = stageNames[i]
		}
		if i == 0 {
			g.datasource = "null"
		}
		g.stages[i] = stRunning
		for j := i + 1; j < 4; j++ {
			g.stages[j] = stPending
		}
		return g
	}
}

// parsable are the hand-written status.json shapes that are well-formed.
var parsable = []string{"v1-empty", "no-v1"}

func statusShapes() []statusShape {
	s := []statusShape{
		{name: "healthy", gen: healthy},
		{name: "error-init-local", gen: withError(0)},
		{name: "error-init", gen: withError(1)},
		{name: "error-modules-config", gen: withError(2)},
		{name: "error-modules-final", gen: withError(3)},
		{name: "errors-in-two-stages", gen: withError(1, 3)},
		{name: "running-init-local", gen: runningIn(0, true)},
		{name: "running-init", gen: runningIn(1, true)},
		{name: "running-modules-config", gen: runningIn(2, true)},
		{name: "running-modules-final", gen: runningIn(3, true)},
		{name: "running-final-no-stage-key", gen: runningIn(3, false)},
		{name: "running-final-after-error", gen: func(r *rand.Rand) *genStatus {
			g := runningIn(3, true)(r)
			g.stages[1], g.errors[1] = stError, pickErrors(r, 1)
			return g
		}},
		{name: "between-stages", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.stages[2], g.stages[3] = stPending, stPending
			return g
		}},
		{name: "missing-stages", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.stages[2], g.stages[3] = stAbsent, stAbsent
			return g
		}},
		{name: "all-pending", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.datasource = "null"
			g.stages = [4]stageState{stPending, stPending, stPending, stPending}
			return g
		}},
		{name: "stage-key-but-all-done", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.stage = "modules-final"
			return g
		}},
		{name: "degraded", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.recoverable = []int{1, 2}
			return g
		}},
		{name: "degraded-and-error", gen: func(r *rand.Rand) *genStatus {
			g := withError(2)(r)
			g.recoverable = []int{2}
			return g
		}},
		{name: "datasource-none", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.datasource = "DataSourceNone"
			return g
		}},
		{name: "datasource-key-absent", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.datasource = ""
			return g
		}},
		{name: "unknown-stage-key-with-error", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.extra = true
			return g
		}},
		{name: "errors-is-a-string", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.errorsString = true
			return g
		}},
		{name: "nan-start", gen: func(r *rand.Rand) *genStatus {
			g := healthy(r)
			g.nanStart = true
			return g
		}},
	}
	raw := func(name, text string) statusShape {
		return statusShape{name: name, raw: func(*rand.Rand) []byte { return []byte(text) }}
	}
	s = append(s,
		raw("v1-empty", `{"v1": {}}`),
		raw("no-v1", `{}`),
		raw("empty", ``),
		statusShape{name: "truncated", raw: func(r *rand.Rand) []byte {
			b := healthy(r).marshal()
			return b[:1+r.IntN(len(b)-2)]
		}},
		raw("array", `[]`),
		raw("null", `null`),
		raw("string", `"done"`),
		raw("number", `42`),
		raw("v1-null", `{"v1": null}`),
		raw("v1-array", `{"v1": []}`),
		raw("errors-null", `{"v1": {"datasource": null, "init": {"errors": null, "start": 5.5, "finished": 9.5}}}`),
		raw("start-string", `{"v1": {"datasource": null, "init": {"errors": [], "start": "soon", "finished": null}}}`),
		raw("datasource-number", `{"v1": {"datasource": 7, "init": {"errors": [], "start": 5.5, "finished": 9.5}}}`),
		raw("utf8-bom", "\ufeff"+`{"v1": {"datasource": null}}`),
		raw("invalid-utf8", "{\"v1\": {\"datasource\": null, \"init\": {\"errors\": [\"caf\xe9\"], \"start\": 5.5, \"finished\": 9.5}}}"),
		statusShape{name: "directory", dir: true},
	)
	return s
}

// marshal renders g as cloud-init would write it (indented, sorted keys).
func (g *genStatus) marshal() []byte {
	r := rand.New(rand.NewPCG(g.seed, 7))
	v1 := map[string]any{}
	switch g.datasource {
	case "":
	case "null":
		v1["datasource"] = nil
	default:
		v1["datasource"] = g.datasource
	}
	switch g.stage {
	case "":
		v1["stage"] = nil
	case "-":
	default:
		v1["stage"] = g.stage
	}
	base := 0.0
	if g.epoch {
		base = diffBootEpoch
	}
	t := 3.0 + r.Float64()
	nanDone := false
	for i, st := range g.stages {
		if st == stAbsent {
			continue
		}
		rec := map[string]any{"errors": []string{}, "start": nil, "finished": nil}
		if g.errors[i] != nil {
			rec["errors"] = g.errors[i]
		}
		if st >= stRunning {
			start := base + round(t)
			t += 1 + 40*r.Float64()
			rec["start"] = start
			if g.nanStart && !nanDone {
				rec["start"] = "NaN-placeholder"
				nanDone = true
			}
			if st != stRunning {
				rec["finished"] = base + round(t)
				t += 1 + 20*r.Float64()
			}
		}
		if slices.Contains(g.recoverable, i) {
			rec["recoverable_errors"] = map[string][]string{
				"WARNING":    {"Invalid cloud-config provided:\npermissions: 420 is not of type 'string'"},
				"DEPRECATED": {"Deprecated cloud-config provided: apt_upgrade:  Deprecated in version 22.2."},
			}
		}
		if g.errorsString && i == 1 {
			rec["errors"] = "no errors"
		}
		v1[stageNames[i]] = rec
	}
	if g.modulesInit {
		v1["modules-init"] = map[string]any{"errors": []string{}, "start": nil, "finished": nil}
	}
	if g.extra {
		v1["modules-custom"] = map[string]any{"errors": []string{"('custom', ValueError('extra stage'))"},
			"start": base + round(t), "finished": base + round(t+1)}
	}
	b, err := json.MarshalIndent(map[string]any{"v1": v1}, "", " ")
	if err != nil {
		panic(err)
	}
	return []byte(strings.Replace(string(b), `"NaN-placeholder"`, "NaN", 1))
}

// round keeps two decimals, as 24.2+ writes them (22.4 writes more; two
// suffice to test the reading).
func round(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 2, 64), 64)
	return v
}

// startedUnfinished: some stage has a start but no finish (22.4 then says
// running whatever result.json says).
func (g *genStatus) startedUnfinished() bool {
	return slices.Contains(g.stages[:], stRunning)
}

// resultKind is a way to write result.json.
type resultKind struct {
	name  string
	valid bool
	dir   bool
	link  bool                      // through a symlink into /var/lib/cloud/data
	text  func(r *rand.Rand) string // nil: absent (or, with link, dangling)
}

var resultOK = `{
 "v1": {
  "datasource": "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]",
  "errors": []
 }
}`

func resultKinds() []resultKind {
	return []resultKind{
		{name: "absent"},
		{name: "valid", valid: true, text: func(*rand.Rand) string { return resultOK }},
		{name: "valid-symlink", valid: true, link: true, text: func(*rand.Rand) string { return resultOK }},
		{name: "dangling-symlink", link: true},
		{name: "valid-with-errors", valid: true, text: func(*rand.Rand) string {
			return `{"v1": {"datasource": "DataSourceNoCloud", "errors": ["('scripts-user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))"]}}`
		}},
		{name: "empty", text: func(*rand.Rand) string { return "" }},
		{name: "truncated", text: func(r *rand.Rand) string { return resultOK[:1+r.IntN(len(resultOK)-2)] }},
		{name: "array", text: func(*rand.Rand) string { return "[]" }},
		{name: "null", text: func(*rand.Rand) string { return "null" }},
		{name: "string", text: func(*rand.Rand) string { return `"done"` }},
		{name: "directory", dir: true},
	}
}

// bootKind is a boot status setup.
type bootKind struct {
	name      string
	sysvinit  bool
	marker    bool
	generator string
	cmdline   string
}

const baseCmdline = "root=/dev/vda rw console=ttyS0 panic=-1"

func bootKinds() []bootKind {
	return []bootKind{
		{name: "enabled-by-generator", generator: "enabled", cmdline: baseCmdline},
		{name: "unknown", cmdline: baseCmdline},
		{name: "sysvinit", sysvinit: true, marker: true, cmdline: baseCmdline + " cloud-init=disabled"},
		{name: "enabled-by-cmdline-over-marker", marker: true, generator: "disabled", cmdline: baseCmdline + " cloud-init=enabled"},
		{name: "disabled-by-marker", marker: true, generator: "enabled", cmdline: baseCmdline},
		{name: "disabled-by-cmdline", generator: "enabled", cmdline: baseCmdline + " cloud-init=disabled"},
		{name: "disabled-by-generator", generator: "disabled", cmdline: baseCmdline},
	}
}

// buildCorpus makes the corpus:
//   - every well-formed status.json shape with result.json absent, valid,
//     and one broken kind (cycling through them); the hand-written ones
//     that parse with result.json absent and one broken kind; each
//     malformed one once, with result.json absent or broken;
//   - every result.json kind under a healthy, an erroring and a running
//     status.json, and every broken or dangling one without status.json;
//   - every boot setup under a healthy (result valid), an erroring (result
//     empty) and a running (result absent) status.json, and with no
//     status.json at all.
//
// The boot setup of the first group is drawn from the seeded generator
// (enabled-by-generator most of the time), and so is boot-finished.
func buildCorpus() []corpusCase {
	r := rand.New(rand.NewPCG(corpusSeed, corpusSeed>>3))
	shapes := statusShapes()
	results := resultKinds()
	boots := bootKinds()
	var broken []resultKind
	for _, k := range results {
		if !k.valid && (k.text != nil || k.dir) && !k.link {
			broken = append(broken, k)
		}
	}
	shape := func(name string) statusShape {
		for _, s := range shapes {
			if s.name == name {
				return s
			}
		}
		panic("no shape " + name)
	}
	var out []corpusCase
	add := func(s statusShape, rk resultKind, b bootKind) {
		c := corpusCase{sysvinit: b.sysvinit, marker: b.marker, generator: b.generator, cmdline: b.cmdline}
		switch {
		case s.gen != nil:
			c.gen = s.gen(r)
			c.status = c.gen.marshal()
			c.statusLink = r.IntN(2) == 0
		case s.raw != nil:
			c.status = s.raw(r)
		case s.dir:
			c.statusDir = true
		}
		if rk.text != nil {
			c.result = []byte(rk.text(r))
		}
		c.resultDir, c.resultValid, c.resultLink = rk.dir, rk.valid, rk.link
		if r.IntN(2) == 0 {
			c.bootFinished = fmt.Sprintf("%.2f - Sun, 29 Nov 2026 22:0%d:00 +0000 - v. 22.4.2\n", 20+200*r.Float64(), r.IntN(4))
		}
		c.name = fmt.Sprintf("%03d-%s/result-%s/%s", len(out), s.name, rk.name, b.name)
		out = append(out, c)
	}
	pickBoot := func() bootKind {
		if r.IntN(10) < 6 {
			return boots[0]
		}
		return boots[1+r.IntN(len(boots)-1)]
	}
	i := 0
	for _, s := range shapes {
		k := broken[i%len(broken)]
		i++
		if s.gen == nil && !slices.Contains(parsable, s.name) {
			// cloud-init stops at such a status.json whatever result.json
			// is, so one row each, with an absent or a broken result.json.
			if i%3 == 0 {
				k = results[0]
			}
			add(s, k, pickBoot())
			continue
		}
		add(s, results[0], pickBoot())
		if s.gen != nil {
			add(s, results[1], pickBoot())
		}
		add(s, k, pickBoot())
	}
	for _, rk := range results {
		for _, sn := range []string{"healthy", "error-modules-final", "running-modules-final"} {
			add(shape(sn), rk, boots[0])
		}
		if !rk.valid && rk.name != "absent" {
			// A result.json without status.json: cloud-init ignores it.
			add(statusShape{name: "no-status"}, rk, boots[0])
		}
	}
	for _, b := range boots {
		add(shape("healthy"), results[1], b)
		add(shape("error-init"), results[3], b)
		add(shape("running-modules-config"), results[0], b)
		add(statusShape{name: "no-status"}, results[0], b)
	}
	return out
}

// TestCorpus holds the generator to its promises, as any user: the same
// corpus on every run, every status.json shape, result.json kind and boot
// setup in it, every result.json kind under an erroring status.json, and a
// size that keeps the differential test near a minute.
func TestCorpus(t *testing.T) {
	a, b := buildCorpus(), buildCorpus()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("buildCorpus is not deterministic")
	}
	if n := len(a); n < 100 || n > 160 {
		t.Errorf("corpus has %d cases; keep it between 100 and 160 (each costs a cloud-init start)", n)
	}
	names := map[string]bool{}
	for _, c := range a {
		if names[c.name] {
			t.Errorf("duplicate case name %s", c.name)
		}
		names[c.name] = true
	}
	has := func(part string) bool {
		for n := range names {
			if strings.Contains(n, part) {
				return true
			}
		}
		return false
	}
	for _, s := range statusShapes() {
		if !has("-" + s.name + "/") {
			t.Errorf("no case with status.json shape %s", s.name)
		}
	}
	for _, k := range resultKinds() {
		if !has("error-modules-final/result-" + k.name + "/") {
			t.Errorf("no case with result.json %s under an error", k.name)
		}
	}
	for _, bk := range bootKinds() {
		if !has("/" + bk.name) {
			t.Errorf("no case with boot setup %s", bk.name)
		}
	}
	for _, c := range a {
		if c.gen == nil {
			continue
		}
		// Generated stage times stay within this boot, so that no case
		// reads as a status.json from an earlier boot.
		var doc struct {
			V1 map[string]any `json:"v1"`
		}
		if c.gen.nanStart {
			continue
		}
		if err := json.Unmarshal(c.status, &doc); err != nil {
			t.Fatalf("%s: generated status.json does not parse: %v", c.name, err)
		}
		for k, v := range doc.V1 {
			st, ok := v.(map[string]any)
			if !ok {
				continue
			}
			for _, f := range []string{"start", "finished"} {
				x, ok := st[f].(float64)
				if !ok {
					continue
				}
				if c.gen.epoch {
					x -= diffBootEpoch
				}
				if x <= 0 || x >= diffUptime {
					t.Errorf("%s: v1.%s.%s = %v lies outside this boot", c.name, k, f, st[f])
				}
			}
		}
	}
}
