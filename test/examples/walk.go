// Package examples finds every example a user can copy from README.md,
// the docs pages in Docs and packaging/examples/: fenced code blocks, command lines in inline code,
// and the example files. Each is classified by what it is (a shell block,
// a cloud-config, a report excerpt...), so that its tests know how to walk
// it; one the classifier does not know is Unknown, and the walk's test
// fails naming it, so that no example goes unwalked.
//
// The walk itself is in this package's test (plain go test: each example
// checked by the real tool for its kind), in cmd/guestcheck and
// cmd/sealprep (every command line through the real parser) and in
// test/vm (the command lines run in a booted guest).
package examples

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Kind says what an example is, and so how it is walked.
type Kind string

// The kinds of example.
const (
	Unknown          Kind = ""
	Shell            Kind = "shell"             // a sh block or a shell script
	CommandLines     Kind = "command-lines"     // a plain block of command lines
	Output           Kind = "output"            // what a command prints: read, not run
	CloudConfig      Kind = "cloud-config"      // #cloud-config user-data
	NoCloudMetaData  Kind = "nocloud-meta-data" // a NoCloud seed's meta-data
	KubeVirtProbe    Kind = "kubevirt-probe"    // a readinessProbe snippet
	PromConfig       Kind = "prometheus-config" // a prometheus.yml excerpt
	PromRules        Kind = "prometheus-rules"  // alerting rules
	GitLabCI         Kind = "gitlab-ci"         // a .gitlab-ci.yml excerpt
	GuestcheckConfig Kind = "guestcheck-config" // guestcheck.yaml
	JSONReport       Kind = "json-report"       // a --format json report
	Packer           Kind = "packer"            // Packer HCL, walked by the Packer tests
	GoTest           Kind = "go-test"           // an example directory's own Go test
	Kubernetes       Kind = "kubernetes"        // a Kubernetes object (apiVersion, kind)
	SystemdUnit      Kind = "systemd-unit"      // a .service or .timer file
)

// Example is one example as a user sees it.
type Example struct {
	// Where is "README.md:52" (the fence's line) or the file's path,
	// relative to the repository.
	Where string
	// Lang is the fence's info string ("sh", "yaml", "" for a plain
	// fence), or the file's base name.
	Lang string
	Text string
	Kind Kind
}

// First is the example's first non-empty line, to name it in messages.
func (e Example) First() string {
	for _, l := range strings.Split(e.Text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Docs are the Markdown files whose examples are walked: the README and
// the pages its reference, figures and test notes moved to.
var Docs = []string{"README.md", "docs/reference.md", "docs/testing.md", "docs/fleet.md", "docs/freeze-drill.md"}

// ExampleDir is the directory of example files, every file under it walked.
const ExampleDir = "packaging/examples"

// Walk returns every example of Docs and ExampleDir under repo, in order,
// each classified (Kind Unknown when the classifier does not know it).
func Walk(repo string) ([]Example, error) {
	var out []Example
	for _, d := range Docs {
		b, err := os.ReadFile(filepath.Join(repo, d))
		if err != nil {
			return nil, err
		}
		out = append(out, Blocks(d, string(b))...)
	}
	err := filepath.WalkDir(filepath.Join(repo, ExampleDir), func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		e := Example{Where: filepath.ToSlash(rel), Lang: de.Name(), Text: string(b)}
		e.Kind = classifyFile(e)
		out = append(out, e)
		if e.Kind == Kubernetes {
			out = append(out, embedded(e)...)
		}
		return nil
	})
	return out, err
}

var fence = regexp.MustCompile("^```\\s*([A-Za-z0-9_-]*)\\s*$")

// Blocks returns the fenced code blocks of the Markdown text of file.
func Blocks(file, text string) []Example {
	var out []Example
	var cur *Example
	var body []string
	for i, l := range strings.Split(text, "\n") {
		m := fence.FindStringSubmatch(l)
		switch {
		case m != nil && cur == nil:
			cur = &Example{Where: fmt.Sprintf("%s:%d", file, i+1), Lang: m[1]}
			body = nil
		case strings.TrimSpace(l) == "```" && cur != nil:
			cur.Text = strings.Join(body, "\n") + "\n"
			cur.Kind = classifyBlock(*cur)
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body = append(body, l)
		}
	}
	return out
}

// Prose is text with its fenced blocks blanked, line numbers kept.
func Prose(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) || (in && strings.TrimSpace(l) == "```") {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// summaryLine ends a text report: "guestcheck: FAIL (9 checks: 1 fail,
// 0 error, ...) in 80 ms", or as it was before, "guestcheck: FAIL 9
// checks: 1 fail, 0 error, ... (80 ms)".
var summaryLine = regexp.MustCompile(`(?m)^guestcheck: [A-Z]+ \(?(\d+ checks?: )?\d+ fail, \d+ error`)

// fleetSummary ends guestcheck fleet's table.
var fleetSummary = regexp.MustCompile(`(?m)^guestcheck fleet: [A-Z]+: \d+ VMs?\b`)

// proveSummary ends sealprep prove's text report.
var proveSummary = regexp.MustCompile(`(?m)^(PROVEN|NOT PROVEN): .*\(\d+m?[\d.]*s\)$`)

// promSample is one line of the Prometheus text format: a sample (its
// label values may be shortened with "...") or a comment.
var promSample = regexp.MustCompile(`^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? -?[0-9.eE+]+)$`)

// configMessage is a configuration error as guestcheck prints it.
var configMessage = regexp.MustCompile(`^[\w./-]+\.ya?ml:\d+: \S`)

func classifyBlock(e Example) Kind {
	switch e.Lang {
	case "sh":
		return Shell
	case "yaml", "yml":
		return classifyYAML(e.Text)
	case "json":
		var top map[string]any
		if yaml.Unmarshal([]byte(e.Text), &top) == nil && top["schema_version"] != nil && top["checks"] != nil {
			return JSONReport
		}
	case "hcl":
		return Packer
	case "":
		// A report first: sealprep prove's starts with "sealprep prove IMAGE".
		if summaryLine.MatchString(e.Text) || fleetSummary.MatchString(e.Text) || proveSummary.MatchString(e.Text) {
			return Output
		}
		lines := nonEmpty(e.Text)
		if len(lines) > 0 && isTool(firstTool(lines[0]), "guestcheck", "sealprep") {
			return CommandLines
		}
		if len(lines) > 0 && !slices.ContainsFunc(lines, func(l string) bool { return !configMessage.MatchString(l) }) {
			return Output
		}
		// Prometheus samples, as /metrics and the textfile show them.
		if len(lines) > 0 && !slices.ContainsFunc(lines, func(l string) bool { return !promSample.MatchString(l) }) {
			return Output
		}
	}
	return Unknown
}

func classifyFile(e Example) Kind {
	name := e.Lang
	switch {
	case strings.HasSuffix(name, "_test.go"):
		return GoTest
	case strings.HasSuffix(name, ".pkr.hcl"):
		return Packer
	case strings.HasSuffix(name, ".sh"):
		return Shell
	case strings.HasSuffix(name, ".service"), strings.HasSuffix(name, ".timer"):
		return SystemdUnit
	case name == "meta-data":
		return NoCloudMetaData
	case name == "user-data", strings.HasSuffix(name, ".yaml"), strings.HasSuffix(name, ".yml"):
		return classifyYAML(e.Text)
	}
	return Unknown
}

// isConfigKey says whether k is a top-level key of guestcheck.yaml.
func isConfigKey(k string) bool {
	for _, key := range config.Describe(runner.Sections(checks.All)...) {
		if top, _, _ := strings.Cut(key.Path, "."); top == k {
			return true
		}
	}
	return false
}

func classifyYAML(text string) Kind {
	first := ""
	if l := nonEmpty(text); len(l) > 0 {
		first = l[0]
	}
	var top map[string]any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		return Unknown
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	switch {
	case first == "#cloud-config":
		return CloudConfig
	case strings.HasPrefix(first, "# .gitlab-ci.yml"):
		return GitLabCI
	case top["apiVersion"] != nil && top["kind"] != nil:
		return Kubernetes
	case top["readinessProbe"] != nil && len(top) == 1:
		return KubeVirtProbe
	case top["scrape_configs"] != nil:
		return PromConfig
	case top["groups"] != nil && len(top) == 1:
		return PromRules
	case len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool { return !isConfigKey(k) }):
		return GuestcheckConfig
	}
	return Unknown
}

func nonEmpty(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Command is one simple command of an example: a line of a shell block,
// a runcmd entry, a probe's exec command or a command line in inline code.
type Command struct {
	// Where is the line it is on ("README.md:52"); From is the Where of
	// the example it is in ("" for inline code).
	Where, From string
	// Line is the command line as written (continuation lines joined;
	// for an argv list, its words joined by spaces), so that a guest can
	// run it through sh -c.
	Line string
	// Argv says Line came from an argv list (runcmd's list form, a
	// probe's command): run Args, not a shell.
	Argv bool
	// Tool is the command's program name without its directory
	// ("guestcheck" for /usr/bin/guestcheck); Path is it as written.
	Tool, Path string
	// Args are the words after the program, up to the first shell
	// operator, quotes removed.
	Args []string
}

// Commands returns the simple commands of the examples: every line of
// the Shell blocks of Docs (not of shell script files, which are walked
// whole), of the CommandLines blocks, the runcmd entries of cloud-configs
// and the exec command of probe snippets.
func Commands(examples []Example) []Command {
	var out []Command
	for _, e := range examples {
		file, line := splitWhere(e.Where)
		switch {
		case e.Kind == Shell && line > 0, e.Kind == CommandLines:
			for _, l := range logicalLines(e.Text) {
				for _, c := range SplitLine(l.text) {
					c.Where, c.From = fmt.Sprintf("%s:%d", file, line+1+l.n), e.Where
					out = append(out, c)
				}
			}
		case e.Kind == SystemdUnit:
			out = append(out, execStarts(e)...)
		case e.Kind == CloudConfig:
			for _, c := range runcmds(e) {
				c.From = e.Where
				out = append(out, c)
			}
		case e.Kind == Kubernetes:
			for _, argv := range ProbeCommands(e) {
				c := argvCommand(e.Where, argv)
				c.From = e.Where
				out = append(out, c)
			}
		case e.Kind == KubeVirtProbe:
			var p struct {
				ReadinessProbe struct {
					Exec struct{ Command []string } `yaml:"exec"`
				} `yaml:"readinessProbe"`
			}
			if yaml.Unmarshal([]byte(e.Text), &p) == nil && len(p.ReadinessProbe.Exec.Command) > 0 {
				c := argvCommand(e.Where, p.ReadinessProbe.Exec.Command)
				c.From = e.Where
				out = append(out, c)
			}
		}
	}
	return out
}

// execStarts are the ExecStart= command lines of a unit file (systemd
// runs them without a shell; they hold no shell syntax here).
func execStarts(e Example) []Command {
	var out []Command
	for i, l := range strings.Split(e.Text, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(l), "ExecStart=")
		if !ok {
			continue
		}
		for _, c := range SplitLine(v) {
			c.Where, c.From = fmt.Sprintf("%s:%d", e.Where, i+1), e.Where
			out = append(out, c)
		}
	}
	return out
}

func runcmds(e Example) []Command {
	var c struct {
		Runcmd []yaml.Node `yaml:"runcmd"`
	}
	if yaml.Unmarshal([]byte(e.Text), &c) != nil {
		return nil
	}
	file, line := splitWhere(e.Where)
	var out []Command
	for _, n := range c.Runcmd {
		// The node's line counts from the block's first line, the one
		// after the fence.
		where := fmt.Sprintf("%s:%d", file, line+n.Line)
		if line == 0 {
			where = fmt.Sprintf("%s:%d", file, n.Line)
		}
		var argv []string
		if n.Kind == yaml.SequenceNode && n.Decode(&argv) == nil {
			out = append(out, argvCommand(where, argv))
			continue
		}
		for _, c := range SplitLine(n.Value) {
			c.Where = where
			out = append(out, c)
		}
	}
	return out
}

func argvCommand(where string, argv []string) Command {
	return Command{Where: where, Line: strings.Join(argv, " "), Argv: true, Path: argv[0], Tool: path.Base(argv[0]), Args: argv[1:]}
}

func splitWhere(where string) (string, int) {
	file, n, ok := strings.Cut(where, ":")
	if !ok {
		return where, 0
	}
	var line int
	fmt.Sscan(n, &line)
	return file, line
}

type logical struct {
	n    int // the index of its first line
	text string
}

// logicalLines joins backslash continuations and drops comment lines.
func logicalLines(text string) []logical {
	var out []logical
	sc := bufio.NewScanner(strings.NewReader(text))
	var cur strings.Builder
	start, i := 0, -1
	for sc.Scan() {
		i++
		l := sc.Text()
		if cur.Len() == 0 {
			start = i
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSpace(strings.TrimSuffix(l, "\\")) + " ")
			continue
		}
		cur.WriteString(strings.TrimSpace(l))
		t := cur.String()
		cur.Reset()
		if t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, logical{start, t})
		}
	}
	return out
}

// All walks repo: its examples, and the simple commands in them and in
// the inline code of Docs.
func All(repo string) ([]Example, []Command, error) {
	ex, err := Walk(repo)
	if err != nil {
		return nil, nil, err
	}
	cmds := Commands(ex)
	for _, d := range Docs {
		b, err := os.ReadFile(filepath.Join(repo, d))
		if err != nil {
			return nil, nil, err
		}
		for _, c := range Spans(d, string(b)) {
			if Fragments[c.Line] == "" {
				cmds = append(cmds, c)
			}
		}
	}
	return ex, cmds, nil
}

// Fragments are inline code spans that look like a command line but name
// an option in prose, or quote output: not walked. A span that is in
// neither this list nor valid fails the parse tests.
var Fragments = map[string]string{
	"sealprep --image":       "names the option",
	"sealprep verify --root": "names the option",
	"make test: skipped the root tier (41 tests: needs root for loop devices); tool mmdebstrap (...)": "quotes make test's last line",
}

// ProbeCommands are the exec commands of a VirtualMachine's readiness
// and liveness probes (KubeVirt runs them in the guest, through its
// agent).
func ProbeCommands(e Example) [][]string {
	var vm struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					ReadinessProbe probe `yaml:"readinessProbe"`
					LivenessProbe  probe `yaml:"livenessProbe"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if yaml.Unmarshal([]byte(e.Text), &vm) != nil || vm.Kind != "VirtualMachine" {
		return nil
	}
	var out [][]string
	for _, p := range []probe{vm.Spec.Template.Spec.ReadinessProbe, vm.Spec.Template.Spec.LivenessProbe} {
		if len(p.Exec.Command) > 0 {
			out = append(out, p.Exec.Command)
		}
	}
	return out
}

type probe struct {
	Exec struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
}

// embedded are the examples inside a Kubernetes object: a
// VirtualMachine's cloud-init user-data, each placed at its userData
// key's line so that a runcmd entry's line is its line in the file.
func embedded(e Example) []Example {
	var vm struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					Volumes []struct {
						CloudInitNoCloud struct {
							UserData yaml.Node `yaml:"userData"`
						} `yaml:"cloudInitNoCloud"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if yaml.Unmarshal([]byte(e.Text), &vm) != nil || vm.Kind != "VirtualMachine" {
		return nil
	}
	var out []Example
	for _, v := range vm.Spec.Template.Spec.Volumes {
		n := v.CloudInitNoCloud.UserData
		if n.Kind != yaml.ScalarNode {
			continue
		}
		u := Example{Where: fmt.Sprintf("%s:%d", e.Where, n.Line), Lang: "userData", Text: n.Value}
		u.Kind = classifyYAML(u.Text)
		out = append(out, u)
	}
	return out
}
