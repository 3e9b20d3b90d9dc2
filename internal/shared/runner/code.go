package runner

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Code describes one finding code: the one source of its reference entry
// (the page's table row, `guestcheck explain`) and of the fix its
// findings carry. A check declares its codes as values of this type
// beside its judge and builds each finding's remediation from the code's
// own fix, so that what a report says and what the reference says are
// the same words.
type Code struct {
	// ID is the stable kebab-case code.
	ID string
	// Group is the heading of the reference table the code is listed
	// under; consecutive codes with one group share a table.
	Group string
	// Status is the status or statuses the code is reported with, as the
	// reference says it: "fail", "fail, or warn", "pass".
	Status string
	// Meaning says what the finding means and why it matters (Markdown,
	// one paragraph).
	Meaning string
	// Fix is the instruction on the running system (Markdown, one
	// paragraph); "" when there is nothing to do. {name} placeholders
	// are what a finding fills in (a path, a unit, a line): the reference
	// shows them as NAME.
	Fix string
	// RootFix is the instruction under an image root (--root), where a
	// command such as systemctl or blkid would act on the host instead;
	// "" when Fix holds there too.
	RootFix string
	// Cases are the other wordings a finding of this code may carry, each
	// with the case it applies to.
	Cases []Case
}

// Case is one more wording of a code's fix and when it applies.
type Case struct {
	// When says in a few words when this fix is the one given ("when the
	// device could not be read").
	When string
	// Fix is the instruction, with placeholders as in Code.Fix.
	Fix string
}

var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`) })

// placeholders returns where t's placeholders are: each {name} that does
// not follow a letter, digit, "_" or "$", so that udev's ATTR{online},
// a shell's ${VAR} and Go's map[string]{...} in a fix stay text.
func placeholders(t string) [][]int {
	var out [][]int
	for _, m := range placeholderRE().FindAllStringIndex(t, -1) {
		if m[0] > 0 {
			if c := t[m[0]-1]; c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// replacePlaceholders rewrites each placeholder of t by f of its name.
func replacePlaceholders(t string, f func(name string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range placeholders(t) {
		b.WriteString(t[last:m[0]])
		b.WriteString(f(t[m[0]+1 : m[1]-1]))
		last = m[1]
	}
	return b.String() + t[last:]
}

// Fixf is the code's fix on the running system with its placeholders
// filled from kv, pairs of name and value.
func (c Code) Fixf(kv ...string) string { return fill(c.Fix, kv) }

// FixOn is the code's fix on the running system when live, else its fix
// under an image root, filled from kv.
func (c Code) FixOn(live bool, kv ...string) string {
	if !live && c.RootFix != "" {
		return fill(c.RootFix, kv)
	}
	return fill(c.Fix, kv)
}

// CaseFix is the fix of the case named when, filled from kv. A name that
// is not one of the code's cases is a bug in the check: it panics, and
// the runner reports the check as crashed rather than give a wrong fix.
func (c Code) CaseFix(when string, kv ...string) string {
	for _, k := range c.Cases {
		if k.When == when {
			return fill(k.Fix, kv)
		}
	}
	panic(fmt.Sprintf("code %s has no fix for the case %q", c.ID, when))
}

// WhenRootDenied names the case of a read that permission stopped
// although guestcheck runs as root (RootDenied).
const WhenRootDenied = "when root is denied"

// RootDenied is the case every check has where a read fails with
// permission denied to root itself: what names the file or files, as a
// placeholder ("{path}") or a path.
func RootDenied(what string) Case {
	return Case{When: WhenRootDenied, Fix: "Find what denies root access to " + what + ": the file mode and owner, an SELinux or AppArmor denial (the audit log), or a FUSE or NFS root that squashes root; fix that and run guestcheck again."}
}

// Fixes returns every fix template of the code: the running system's,
// the image root's and each case's, the non-empty ones.
func (c Code) Fixes() []string {
	var out []string
	for _, s := range []string{c.Fix, c.RootFix} {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, k := range c.Cases {
		if k.Fix != "" {
			out = append(out, k.Fix)
		}
	}
	return out
}

// New returns a finding of this code; fix is one of the code's fixes,
// filled (Fixf, FixOn, CaseFix), or "" for a pass.
func (c Code) New(st Status, msg string, d map[string]string, fix string) Finding {
	return Finding{Status: st, Code: c.ID, Message: msg, Detail: d, Remediation: fix}
}

// Matches reports whether remediation is one of the code's fixes with its
// placeholders filled in; tests hold every finding to it.
func (c Code) Matches(remediation string) bool {
	for _, t := range c.Fixes() {
		if templateRE(t).MatchString(remediation) {
			return true
		}
	}
	return false
}

func templateRE(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s)`)
	last := 0
	for _, m := range placeholders(t) {
		b.WriteString(regexp.QuoteMeta(t[last:m[0]]))
		b.WriteString(`.*`)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(t[last:]) + `$`)
	return regexp.MustCompile(b.String())
}

// Placeholders returns the names of the placeholders in a fix template.
func Placeholders(t string) []string {
	var out []string
	for _, m := range placeholders(t) {
		out = append(out, t[m[0]+1:m[1]-1])
	}
	return out
}

// Metavars is a fix template as the reference shows it: each placeholder
// as its name in capitals, the way a man page names what the reader puts
// in (replace line LINE with FSTAB_LINE).
func Metavars(t string) string {
	return replacePlaceholders(t, metavar)
}

// metavar is a placeholder's name as a reader sees it: MOUNT-POINT.
func metavar(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "_", "-")) }

// fill replaces the placeholders of t with the values in kv (name, value
// pairs). A placeholder kv does not fill stays as its metavariable, so a
// reader still sees what goes there; tests hold fills complete.
func fill(t string, kv []string) string {
	if len(kv) == 0 {
		return Metavars(t)
	}
	return replacePlaceholders(t, func(name string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1]
			}
		}
		return metavar(name)
	})
}

// IDs returns the codes' IDs in order.
func IDs(cs []Code) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// CodeByID returns the check's code with the given ID.
func (c Check) CodeByID(id string) (Code, bool) {
	for _, k := range c.Codes {
		if k.ID == id {
			return k, true
		}
	}
	return Code{}, false
}

// Has reports whether the check declares the code.
func (c Check) Has(id string) bool {
	_, ok := c.CodeByID(id)
	return ok
}
