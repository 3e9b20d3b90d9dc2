package examples

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

const repo = "../.."

// guestcheckBin is guestcheck built by TestMain, for check-config.
var guestcheckBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	guestcheckBin = filepath.Join(dir, "guestcheck")
	if out, err := exec.Command("go", "build", "-o", guestcheckBin, "github.com/guestcheck/guestcheck/cmd/guestcheck").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build guestcheck: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// walks says, for each kind of example, how and where it is walked. An
// example whose kind is missing here fails TestEveryExampleIsWalked.
var walks = map[Kind]string{
	Shell:            "bash -n and shellcheck here (TestShell); each command line by its program (below)",
	CommandLines:     "each command line by its program (below)",
	Output:           "what a command prints: read, not run (TestOutput holds text reports to 80 columns)",
	CloudConfig:      "cloud-init schema -c here (TestCloudConfig); its runcmd entries as command lines; the README's runs in the healthy VM guest's user-data",
	NoCloudMetaData:  "parses as YAML with an instance-id (TestYAML)",
	KubeVirtProbe:    "parses as YAML, its command path is the packaged one (TestYAML); the command runs in test/vm",
	PromConfig:       "promtool check config, with rule_files pointed at the example rules (TestPromConfig)",
	PromRules:        "promtool check rules (TestPromRules); promtool test rules in internal/shared/report TestPrometheusAlertRules",
	GitLabCI:         "parses as YAML; its junit report is the one the Packer example downloads (TestYAML)",
	GuestcheckConfig: "guestcheck check-config FILE, the real binary (TestGuestcheckConfig)",
	JSONReport:       "validates against schema/report-v1.schema.json (TestJSONReport)",
	Packer:           "a real packer build in test/vm/packer_test.go, packer validate and the README's quotes in packaging/examples/packer",
	GoTest:           "the example directory's own test, run by go test ./...",
	Kubernetes:       "created in a real API server serving the published CRD schemas, unknown fields refused (test/kube TestExamples); a VirtualMachine's probe commands as command lines, its user-data as a cloud-config",
	SystemdUnit:      "systemd-analyze verify with the units of its directory, guestcheck built here in place of /usr/bin/guestcheck (TestSystemdUnits); its ExecStart= as command lines",
}

// packerTests are the tests that walk Packer examples; they must exist.
var packerTests = []string{"test/vm/packer_test.go"}

// others are the programs of example command lines other than
// guestcheck, sealprep (cmd/*/examples_test.go parse each line, test/vm
// runs them) and make (TestMakeTargets): how each is walked.
var others = map[string]func(t *testing.T, c Command){
	// kubectl create ...: the cluster set-up of guestcheck fleet --kubevirt
	// (docs/fleet.md); read-only access is the kubevirt.io:view role the
	// source's 403 message names.
	"kubectl": func(t *testing.T, c Command) {
		if len(c.Args) < 2 || c.Args[0] != "create" || !slices.Contains([]string{"serviceaccount", "clusterrolebinding", "token"}, c.Args[1]) {
			t.Errorf("%s: %s: not kubectl create serviceaccount|clusterrolebinding|token", c.Where, c.Line)
			return
		}
		if c.Args[1] == "clusterrolebinding" && !slices.Contains(c.Args, "--clusterrole=kubevirt.io:view") {
			t.Errorf("%s: %s: the binding must be to kubevirt.io:view, the read-only role guestcheck fleet needs", c.Where, c.Line)
		}
	},
	// apt install ./dist/guestcheck_*_amd64.deb: the glob matches the
	// name make package gives the .deb (test/vm checks it against dist/).
	"apt": func(t *testing.T, c Command) {
		if len(c.Args) != 2 || c.Args[0] != "install" {
			t.Errorf("%s: %s: not apt install FILE", c.Where, c.Line)
			return
		}
		if ok, _ := filepath.Match(strings.TrimPrefix(c.Args[1], "./"), "dist/guestcheck_1.0.0-1_amd64.deb"); !ok {
			t.Errorf("%s: %s does not match dist/guestcheck_1.0.0-1_amd64.deb, what make package writes", c.Where, c.Args[1])
		}
	},
	// install -m 0755 bin/X DEST: X is what make build writes, DEST where
	// the packages install it.
	"install": func(t *testing.T, c Command) {
		mk, nfpm := readFile(t, "Makefile"), readFile(t, "nfpm.yaml")
		src, dst := c.Args[len(c.Args)-2], c.Args[len(c.Args)-1]
		if !strings.Contains(mk, "-o "+src+" ") {
			t.Errorf("%s: make build does not write %s", c.Where, src)
		}
		if !strings.Contains(nfpm, "src: ./"+src+"\n    dst: "+dst+"\n") {
			t.Errorf("%s: the packages do not install %s as %s", c.Where, src, dst)
		}
	},
	// apt-get install PKG: a package the test suite installs too.
	"apt-get": func(t *testing.T, c Command) {
		deps := readFile(t, "scripts/test-deps.sh")
		for _, p := range c.Args[1:] {
			if !regexp.MustCompile(`[ (\t]` + regexp.QuoteMeta(p) + `[ )\n]`).MatchString(deps) {
				t.Errorf("%s: %s is not a package scripts/test-deps.sh installs", c.Where, p)
			}
		}
	},
	// systemctl enable --now UNIT: a unit the packages ship, or one of
	// the example units (TestSystemdUnits).
	"systemctl": func(t *testing.T, c Command) {
		unit := c.Args[len(c.Args)-1]
		if !strings.Contains(readFile(t, "nfpm.yaml"), "/"+unit+"\n") && !exampleUnit(t, unit) {
			t.Errorf("%s: neither the packages nor %s ship %s", c.Where, ExampleDir, unit)
		}
	},
	// curl ... | grep: needs node_exporter serving the textfile; not run.
	// internal/shared/report runs a real node_exporter on the .prom output.
	"curl": nil,
	"grep": nil,
}

func all(t *testing.T) ([]Example, []Command) {
	t.Helper()
	ex, cmds, err := All(repo)
	if err != nil {
		t.Fatal(err)
	}
	return ex, cmds
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ofKind(ex []Example, k Kind) []Example {
	var out []Example
	for _, e := range ex {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestEveryExampleIsWalked: every example block and file is of a kind
// the walk knows, and every command line's program has a walk.
func TestEveryExampleIsWalked(t *testing.T) {
	ex, cmds := all(t)
	for _, e := range ex {
		how, ok := walks[e.Kind]
		if !ok {
			t.Errorf("%s: example %q (%s) is of no kind the example walk knows: add it to test/examples (walk.go's classifier, and a walk in examples_test.go)", e.Where, e.First(), e.Lang)
			continue
		}
		t.Logf("%s: %s: %s", e.Where, e.Kind, how)
	}
	if len(ofKind(ex, Packer)) > 0 {
		for _, p := range packerTests {
			if _, err := os.Stat(filepath.Join(repo, p)); err != nil {
				t.Errorf("the Packer examples are walked by %s, which is missing", p)
			}
		}
	}
	for _, c := range cmds {
		switch {
		case c.Tool == "guestcheck" || c.Tool == "sealprep":
			t.Logf("%s: %s: parsed by cmd/%s TestExamplesParse; run in test/vm when safe", c.Where, c.Line, c.Tool)
		case c.Tool == "make":
		default:
			if _, ok := others[c.Tool]; !ok {
				t.Errorf("%s: command %q: the example walk does not know how to walk %s (add it to others in test/examples)", c.Where, c.Line, c.Tool)
			}
		}
	}
	var docs strings.Builder
	for _, d := range Docs {
		docs.WriteString(strings.Join(strings.Fields(readFile(t, d)), " ") + "\n")
	}
	for f := range Fragments {
		if !strings.Contains(docs.String(), "`"+f+"`") {
			t.Errorf("fragment %q is in none of %s: drop it from Fragments", f, strings.Join(Docs, ", "))
		}
	}
}

// TestOtherCommands walks the command lines of other programs.
func TestOtherCommands(t *testing.T) {
	_, cmds := all(t)
	for _, c := range cmds {
		if f := others[c.Tool]; f != nil {
			f(t, c)
		}
	}
}

var makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z-]*):`)

// TestMakeTargets: every make line names targets the Makefile has, and
// variables it reads.
func TestMakeTargets(t *testing.T) {
	_, cmds := all(t)
	mk := readFile(t, "Makefile")
	var targets []string
	for _, m := range makeTarget.FindAllStringSubmatch(mk, -1) {
		targets = append(targets, m[1])
	}
	n := 0
	for _, c := range cmds {
		if c.Tool != "make" {
			continue
		}
		n++
		for _, a := range c.Args {
			if name, _, ok := strings.Cut(a, "="); ok {
				if !strings.Contains(mk, "$("+name+")") {
					t.Errorf("%s: %s: the Makefile does not read %s", c.Where, c.Line, name)
				}
			} else if !slices.Contains(targets, a) {
				t.Errorf("%s: %s: no target %s in the Makefile (it has %s)", c.Where, c.Line, a, strings.Join(targets, ", "))
			}
		}
	}
	if n == 0 {
		t.Fatal("no make line found: the walk is broken")
	}
}

// writeExample writes e's text to a file named name in a new directory.
func writeExample(t *testing.T, e Example, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(e.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runTool(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// TestShell: every shell block and script is bash -n and shellcheck
// clean (a #!/bin/sh script as sh, with dash -n too).
func TestShell(t *testing.T) {
	ex, _ := all(t)
	shellcheck := testenv.Tool(t, "shellcheck", "shellcheck")
	for _, e := range ofKind(ex, Shell) {
		p := writeExample(t, e, "example.sh")
		if out, err := runTool("bash", "-n", p); err != nil {
			t.Errorf("%s: bash -n: %v\n%s", e.Where, err, out)
		}
		dialect := "bash"
		if strings.HasPrefix(e.Text, "#!/bin/sh") {
			dialect = "sh"
			if out, err := runTool(testenv.Tool(t, "dash", "dash"), "-n", p); err != nil {
				t.Errorf("%s: dash -n: %v\n%s", e.Where, err, out)
			}
		}
		if out, err := runTool(shellcheck, "-s", dialect, p); err != nil {
			t.Errorf("%s: shellcheck -s %s: %v\n%s", e.Where, dialect, err, out)
		}
	}
}

// TestCloudConfig: every cloud-config passes cloud-init's own schema,
// which first proves it rejects a wrong one.
func TestCloudConfig(t *testing.T) {
	t.Parallel()
	ex, _ := all(t)
	ci := testenv.Tool(t, "cloud-init", "cloud-init")
	if out, err := runTool(ci, "schema", "-c", writeExample(t, Example{Text: "#cloud-config\nruncmd: 5\n"}, "bad.yaml")); err == nil {
		t.Fatalf("cloud-init schema accepted runcmd: 5:\n%s", out)
	}
	for _, e := range ofKind(ex, CloudConfig) {
		if out, err := runTool(ci, "schema", "-c", writeExample(t, e, "user-data")); err != nil {
			t.Errorf("%s: cloud-init schema -c: %v\n%s", e.Where, err, out)
		}
	}
}

// TestYAML: the snippets that no tool here can load whole parse, and say
// what the rest of the repository says.
func TestYAML(t *testing.T) {
	ex, cmds := all(t)
	for _, e := range ex {
		var v map[string]any
		switch e.Kind {
		case NoCloudMetaData, KubeVirtProbe, GitLabCI:
			if err := yaml.Unmarshal([]byte(e.Text), &v); err != nil {
				t.Errorf("%s: %v", e.Where, err)
			}
		}
		switch e.Kind {
		case NoCloudMetaData:
			if v["instance-id"] == nil {
				t.Errorf("%s: no instance-id", e.Where)
			}
		case GitLabCI:
			for _, p := range regexp.MustCompile(`junit: (\S+)`).FindAllStringSubmatch(e.Text, -1) {
				if !packerMentions(t, ex, p[1]) {
					t.Errorf("%s: no Packer example writes %s", e.Where, p[1])
				}
			}
		}
	}
	for _, c := range cmds {
		if c.Argv && strings.HasPrefix(c.Path, "/") && !strings.Contains(readFile(t, "nfpm.yaml"), "dst: "+c.Path+"\n") {
			t.Errorf("%s: the packages do not install %s", c.Where, c.Path)
		}
	}
}

func packerMentions(t *testing.T, ex []Example, s string) bool {
	for _, e := range ofKind(ex, Packer) {
		if strings.Contains(e.Text, s) && !strings.HasPrefix(e.Where, "README") {
			return true
		}
	}
	return false
}

// exampleUnit reports whether unit is a unit file of ExampleDir.
func exampleUnit(t *testing.T, unit string) bool {
	ex, _ := all(t)
	for _, e := range ofKind(ex, SystemdUnit) {
		if filepath.Base(e.Where) == unit {
			return true
		}
	}
	return false
}

// TestSystemdUnits: the example units pass systemd-analyze verify, each
// with the other units of its directory (a timer with its service), with
// guestcheck built here in place of /usr/bin/guestcheck (verify wants
// ExecStart='s program to exist); a warning fails too. It first proves
// verify rejects a bad unit.
func TestSystemdUnits(t *testing.T) {
	ex, _ := all(t)
	sa := testenv.Tool(t, "systemd-analyze", "systemd")
	bad := writeExample(t, Example{Text: "[Unit]\nDescription=x\n[Timer]\nOnCalendar=never ever\n"}, "bad.timer")
	if out, err := runTool(sa, "verify", "--man=no", bad); err == nil && out == "" {
		t.Fatalf("systemd-analyze verify accepted a timer without a valid OnCalendar=")
	}
	dirs := map[string][]Example{}
	for _, e := range ofKind(ex, SystemdUnit) {
		dirs[filepath.Dir(e.Where)] = append(dirs[filepath.Dir(e.Where)], e)
	}
	for dir, units := range dirs {
		tmp := t.TempDir()
		var files []string
		for _, e := range units {
			p := filepath.Join(tmp, filepath.Base(e.Where))
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(e.Text, "=/usr/bin/guestcheck ", "="+guestcheckBin+" ")), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
		if out, err := runTool(sa, append([]string{"verify", "--man=no"}, files...)...); err != nil || out != "" {
			t.Errorf("%s: systemd-analyze verify: %v\n%s", dir, err, out)
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no example unit found: the walk is broken")
	}
}

// TestPromRules: the alerting rules pass promtool check rules.
func TestPromRules(t *testing.T) {
	ex, _ := all(t)
	promtool := testenv.Tool(t, "promtool", "prometheus")
	for _, e := range ofKind(ex, PromRules) {
		if out, err := runTool(promtool, "check", "rules", writeExample(t, e, "rules.yml")); err != nil {
			t.Errorf("%s: promtool check rules: %v\n%s", e.Where, err, out)
		}
	}
}

// shippedRules is the example rule file packaging/examples ships; other
// rule blocks (the docs') are excerpts of it.
func shippedRules(t *testing.T, ex []Example) Example {
	t.Helper()
	var out []Example
	for _, e := range ofKind(ex, PromRules) {
		if strings.HasPrefix(e.Where, "packaging/examples/") {
			out = append(out, e)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d example rule files in packaging/examples, want 1", len(out))
	}
	return out[0]
}

// alertExprs maps each alert of a rules document to its expression.
func alertExprs(t *testing.T, e Example) map[string]string {
	t.Helper()
	var doc struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal([]byte(e.Text), &doc); err != nil {
		t.Fatalf("%s: %v", e.Where, err)
	}
	m := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			m[r.Alert] = r.Expr
		}
	}
	return m
}

// TestRuleExcerpts: an alert a document quotes is the shipped one, with
// the same expression.
func TestRuleExcerpts(t *testing.T) {
	ex, _ := all(t)
	shipped := alertExprs(t, shippedRules(t, ex))
	for _, e := range ofKind(ex, PromRules) {
		for name, expr := range alertExprs(t, e) {
			if shipped[name] != expr {
				t.Errorf("%s: alert %s has expr %q; the shipped rules say %q", e.Where, name, expr, shipped[name])
			}
		}
	}
}

// TestPromConfig: a prometheus.yml excerpt passes promtool check config,
// its rule_files pointed at the example rules it names.
func TestPromConfig(t *testing.T) {
	ex, _ := all(t)
	promtool := testenv.Tool(t, "promtool", "prometheus")
	rules := shippedRules(t, ex)
	rp := writeExample(t, rules, "guestcheck.yml")
	for _, e := range ofKind(ex, PromConfig) {
		text := regexp.MustCompile(`(?m)^(\s+- )/etc/prometheus/rules/guestcheck.yml`).ReplaceAllString(e.Text, "${1}"+rp)
		if text == e.Text {
			t.Errorf("%s: no rule_files entry /etc/prometheus/rules/guestcheck.yml", e.Where)
		}
		if out, err := runTool(promtool, "check", "config", writeExample(t, Example{Text: text}, "prometheus.yml")); err != nil {
			t.Errorf("%s: promtool check config: %v\n%s", e.Where, err, out)
		}
	}
}

// TestGuestcheckConfig: every configuration example passes the real
// guestcheck check-config.
func TestGuestcheckConfig(t *testing.T) {
	ex, _ := all(t)
	for _, e := range ofKind(ex, GuestcheckConfig) {
		out, err := runTool(guestcheckBin, "check-config", writeExample(t, e, "guestcheck.yaml"))
		if err != nil {
			t.Errorf("%s: guestcheck check-config: %v\n%s", e.Where, err, out)
		}
	}
}

// TestJSONReport: report excerpts validate against the report schema.
func TestJSONReport(t *testing.T) {
	ex, _ := all(t)
	s := testenv.Schema(t, filepath.Join(repo, "schema"), "report-v1.schema.json")
	for _, e := range ofKind(ex, JSONReport) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(e.Text)))
		if err != nil {
			t.Errorf("%s: %v", e.Where, err)
			continue
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: does not validate against schema/report-v1.schema.json: %v", e.Where, err)
		}
	}
}

// TestOutput: sample text reports fit the 80-column console they are
// shown on.
func TestOutput(t *testing.T) {
	ex, _ := all(t)
	for _, e := range ofKind(ex, Output) {
		if !summaryLine.MatchString(e.Text) {
			continue
		}
		for i, l := range strings.Split(e.Text, "\n") {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("%s+%d: %d columns, the text report has 80: %s", e.Where, i+1, n, l)
			}
		}
	}
}

// TestUnknownBlocks: blocks of no known kind are Unknown, so that
// TestEveryExampleIsWalked names them; the known kinds are recognised.
func TestUnknownBlocks(t *testing.T) {
	md := "```toml\na = 1\n```\n```\nvirsh console vm1\n```\n```yaml\nkind: VirtualMachine\n```\n```json\n{\"a\": 1}\n```\n" +
		"```yaml\n#cloud-config\nruncmd: [[guestcheck, --list]]\n```\n```\nsealprep plan \\\n  --ops -tmp\n```\n"
	got := Blocks("doc.md", md)
	want := []Kind{Unknown, Unknown, Unknown, Unknown, CloudConfig, CommandLines}
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(got), len(want), got)
	}
	for i, b := range got {
		if b.Kind != want[i] {
			t.Errorf("%s %q: kind %q, want %q", b.Where, b.First(), b.Kind, want[i])
		}
	}
	cmds := Commands(got)
	if len(cmds) != 2 || cmds[0].Line != "guestcheck --list" || !cmds[0].Argv || cmds[1].Where != "doc.md:18" || strings.Join(cmds[1].Args, " ") != "plan --ops -tmp" {
		t.Errorf("commands: %+v", cmds)
	}
}

// TestSplitLine: the shell reading the commands are taken from.
func TestSplitLine(t *testing.T) {
	for line, want := range map[string]string{
		`rc=0; sudo -n /usr/bin/guestcheck --output 'junit:/tmp/a b.xml' || rc=$?; echo $rc > /tmp/rc`: "guestcheck[--output junit:/tmp/a b.xml] echo[$rc]",
		`guestcheck --exit-zero 2>&1 >/dev/null | tail -n 1 # comment`:                                 "guestcheck[--exit-zero] tail[-n 1]",
		`X=1 sealprep list --format "j\"son"`:                                                          `sealprep[list --format j"son]`,
	} {
		var parts []string
		for _, c := range SplitLine(line) {
			parts = append(parts, c.Tool+"["+strings.Join(c.Args, " ")+"]")
		}
		if got := strings.Join(parts, " "); got != want {
			t.Errorf("SplitLine(%s) = %s, want %s", line, got, want)
		}
	}
}

// TestSpans: which inline code is a command line.
func TestSpans(t *testing.T) {
	md := "Run `guestcheck --list`, see `guestcheck(8)` and `/run/guestcheck`, `guestcheck explain CODE`,\n" +
		"`command[check_guestcheck]=/usr/bin/sudo -n /usr/bin/guestcheck --format nagios`, `shutdown_command = \"sudo /usr/sbin/sealprep apply --yes\n  --poweroff\"`.\n" +
		"```sh\nguestcheck --only `cat ids`\n```\n`make build`"
	var got []string
	for _, c := range Spans("doc.md", md) {
		got = append(got, c.Where+" "+c.Tool+" "+strings.Join(c.Args, " "))
	}
	want := []string{"doc.md:1 guestcheck --list", "doc.md:2 guestcheck --format nagios", "doc.md:2 sealprep apply --yes --poweroff", "doc.md:7 make build"}
	if !slices.Equal(got, want) {
		t.Errorf("Spans = %q, want %q", got, want)
	}
}

// runcmdExample is the shipped runcmd example the README quotes.
const runcmdExample = "packaging/examples/cloud-init-runcmd.yaml"

// TestReadmeRuncmdIsTheExample: the README's cloud-config is the shipped
// runcmd example without its comment lines, so that what a reader copies
// from the README and what the package installs run the same way.
func TestReadmeRuncmdIsTheExample(t *testing.T) {
	ex, _ := all(t)
	var readme, file []Example
	for _, e := range ofKind(ex, CloudConfig) {
		switch {
		case strings.HasPrefix(e.Where, "README.md:"):
			readme = append(readme, e)
		case e.Where == runcmdExample:
			file = append(file, e)
		}
	}
	if len(readme) != 1 || len(file) != 1 {
		t.Fatalf("%d cloud-configs in README.md and %d in %s, want 1 each", len(readme), len(file), runcmdExample)
	}
	var want []string
	for _, l := range strings.Split(file[0].Text, "\n") {
		if !strings.HasPrefix(l, "#") || l == "#cloud-config" {
			want = append(want, l)
		}
	}
	if got := readme[0].Text; got != strings.Join(want, "\n") {
		t.Errorf("%s is not %s without its comments:\n%s", readme[0].Where, runcmdExample, testenv.LineDiff(strings.Join(want, "\n"), got))
	}
}
