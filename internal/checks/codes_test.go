package checks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// stubFix matches fixes that send the reader elsewhere instead of saying
// what to do: a fix is read on its own, in a report or from explain.
var stubFix = regexp.MustCompile(`(?i)^(same\.?|as above\.?)$|\bas above\b|\bsee above\b|\bsee the message\b|^unblock it\.?$|^—$|\(see [a-z ]*above\)`)

// statusWords are the words a code's Status may use.
var statusWords = []string{"pass", "warn", "fail", "skip", "error"}

// TestCodes holds every code of every check and of the runner to the
// rules a reader relies on: unique kebab-case IDs, a status in the
// report's words, a meaning, a fix for every status that asks for one
// (warn, fail, error) that is an instruction on its own, and placeholders
// in snake_case.
func TestCodes(t *testing.T) {
	seen := map[string]string{}
	all := append([]runner.Check{{ID: "runner", Codes: runner.Codes}}, All...)
	for _, c := range all {
		for _, k := range c.Codes {
			if !runner.IsKebab(k.ID) {
				t.Errorf("%s: code %q is not kebab-case", c.ID, k.ID)
			}
			if other, dup := seen[k.ID]; dup {
				t.Errorf("code %s is declared by %s and %s", k.ID, other, c.ID)
			}
			seen[k.ID] = c.ID
			// A status may say when it applies ("fail, or warn when
			// `optional`"); it names at least one of the report's.
			needsFix, named := false, false
			for _, w := range strings.FieldsFunc(k.Status, func(r rune) bool { return !unicode.IsLetter(r) }) {
				named = named || slices.Contains(statusWords, w)
				needsFix = needsFix || w == "warn" || w == "fail" || w == "error"
			}
			if !named || k.Meaning == "" {
				t.Errorf("%s: needs a status and a meaning", k.ID)
			}
			if needsFix && k.Fix == "" && k.RootFix == "" && len(k.Cases) == 0 {
				t.Errorf("%s (%s): no fix", k.ID, k.Status)
			}
			for _, f := range k.Fixes() {
				if stubFix.MatchString(f) {
					t.Errorf("%s: fix %q does not say what to do on its own", k.ID, f)
				}
				for _, p := range runner.Placeholders(f) {
					if strings.ToLower(p) != p {
						t.Errorf("%s: placeholder {%s} is not snake_case", k.ID, p)
					}
				}
			}
			if stubFix.MatchString(k.Meaning) {
				t.Errorf("%s: meaning %q refers elsewhere", k.ID, k.Meaning)
			}
		}
	}
}

// TestRegistry holds every check to the conventions: unique kebab-case
// IDs, a title and a description, declared codes, dependencies and
// pending codes that exist.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		if !runner.IsKebab(c.ID) || seen[c.ID] {
			t.Errorf("check ID %q is not unique kebab-case", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" || c.Run == nil || len(c.Codes) == 0 {
			t.Errorf("%s: needs a Title, a Description, a Run and codes", c.ID)
		}
		if strings.HasSuffix(c.Description, ".") || strings.ToLower(c.Description[:1]) != c.Description[:1] {
			t.Errorf("%s: the description is read after the ID in lists: lower-case first, no final period: %q", c.ID, c.Description)
		}
		// Titles are in sentence case: a capital first, unless the
		// title starts with the lower-case name the check is named
		// after (cloud-init, fstab, systemd).
		if first, _, _ := strings.Cut(c.Title, " "); first != c.ID && strings.ToUpper(first[:1]) != first[:1] {
			t.Errorf("%s: title %q: sentence case, a capital first unless it starts with the check's own name", c.ID, c.Title)
		}
		for _, p := range c.Pending {
			if !c.Has(p) {
				t.Errorf("%s: pending code %q is not one of its codes", c.ID, p)
			}
		}
	}
	for _, c := range All {
		for _, d := range c.DependsOn {
			if !seen[d] {
				t.Errorf("%s depends on unknown check %q", c.ID, d)
			}
		}
	}
	// Each check's own section has a name no other key of the file has,
	// and what a check also reads is a general section of the file.
	general := config.Describe()
	owner := map[string]string{}
	for _, c := range All {
		if n := c.Settings.Name; n != "" {
			if other, dup := owner[n]; dup {
				t.Errorf("configuration section %q is declared by %s and %s", n, other, c.ID)
			}
			if slices.ContainsFunc(general, func(k config.Key) bool { return k.Path == n }) {
				t.Errorf("%s: its section %q is a general key of the file", c.ID, n)
			}
			owner[n] = c.ID
		}
		for _, sec := range c.AlsoReads {
			if !slices.ContainsFunc(general, func(k config.Key) bool { return k.Path == sec && !k.Leaf() }) {
				t.Errorf("%s: AlsoReads %q, which is no general section of the file", c.ID, sec)
			}
		}
	}
	if c, _ := ByID("cloud-init"); len(c.Pending) == 0 {
		t.Error("cloud-init lists no pending codes: the probe would call a machine still provisioning ready")
	}
}

// TestCodesWrittenOnce: a code's ID is written once, in its description's
// ID field; anywhere else in the source a finding would carry a code (or
// a fix) that its description does not give.
func TestCodesWrittenOnce(t *testing.T) {
	known := map[string]bool{}
	for _, c := range append([]runner.Check{{Codes: runner.Codes}}, All...) {
		for _, k := range c.Codes {
			known[k.ID] = true
		}
	}
	for _, dir := range []string{".", "../shared", "../fact", "../../cmd"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "ID" {
						return false // the description's own ID
					}
				}
				if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
					if v, err := strconv.Unquote(b.Value); err == nil && known[v] {
						t.Errorf("%s: code %q written as a literal: use its description's ID", p, v)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// midSentenceCapital is a plain capitalised English word after "; ",
// where one clause of a fix joins the next ("...win; Correct the VM's
// network data..." was two fixes pasted together). A proper noun or a
// name spelt with capitals inside (NetworkManager, KubeVirt) may follow.
var midSentenceCapital = regexp.MustCompile(`; ([A-Z][a-z]+)\b`)

// properNouns may start a clause after "; " in a fix.
var properNouns = []string{"Debian", "Ubuntu", "Fedora", "Proxmox", "Packer", "Harvester", "Linux", "Nagios", "Icinga"}

// TestFixClausesJoinLowerCase: a fix written as clauses joined by "; "
// (a code's fix and a shared ending such as reseal) reads as one
// sentence, so the clause after "; " starts lower-case.
func TestFixClausesJoinLowerCase(t *testing.T) {
	codes := slices.Clone(runner.Codes)
	for _, c := range All {
		codes = append(codes, c.Codes...)
	}
	for _, k := range codes {
		for _, f := range k.Fixes() {
			for _, m := range midSentenceCapital.FindAllStringSubmatch(f, -1) {
				if !slices.Contains(properNouns, m[1]) {
					t.Errorf("%s: %q mid-sentence: lower-case the clause after \"; \" (%q)", k.ID, m[0], f)
				}
			}
		}
	}
}

// TestFixesHaveNoPipe: Nagios plugin output reads everything after the
// first '|' on any line as performance data, so the nagios renderer
// shows a '|' as '¦', which breaks a copied command. No fix is written
// with one: a command in a fix runs as shown in every format.
func TestFixesHaveNoPipe(t *testing.T) {
	codes := slices.Clone(runner.Codes)
	for _, c := range All {
		codes = append(codes, c.Codes...)
	}
	for _, k := range codes {
		for _, f := range k.Fixes() {
			if strings.Contains(f, "|") {
				t.Errorf("%s: a '|' in the fix, which Nagios output cannot carry; write the command without a pipe: %q", k.ID, f)
			}
		}
	}
}
