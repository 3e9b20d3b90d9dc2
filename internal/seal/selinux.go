package seal

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/parse/selinuxconfig"
)

// SELinuxInfo is what an offline seal does about the image's SELinux
// labels. Files sealprep creates (a machine-id, a symlink, a unit) are new
// inodes: on an image whose SELinux is enforcing or permissive they need
// the label the image's policy gives their path, or a relabel at boot.
type SELinuxInfo struct {
	Mode   string `json:"mode"`   // enforcing or permissive
	Policy string `json:"policy"` // SELINUXTYPE, e.g. targeted
	// FileContexts is the file_contexts used; empty when none was usable.
	FileContexts string `json:"file_contexts,omitempty"`
	// Created counts the files the plan creates.
	Created int `json:"created"`
	// Labels are the labels the created files get (plan) or got (apply).
	Labels []FileLabel `json:"labels,omitempty"`
	// Relabel is set when labels come from a relabel at boot instead:
	// no usable file_contexts, or a path it has no entry for.
	Relabel bool `json:"relabel"`
	// RelabelFiles is the number of inodes in use on the root filesystem:
	// what a full relabel walks.
	RelabelFiles uint64 `json:"relabel_files,omitempty"`
	Message      string `json:"message"`

	fcs     *FileContexts
	created []createdFile
}

// FileLabel is one created file and its label.
type FileLabel struct {
	Path  string `json:"path"`
	Label string `json:"label,omitempty"`
	Done  bool   `json:"done"`
	Error string `json:"error,omitempty"`
}

type createdFile struct {
	path string
	kind fs.Kind
}

// ParseSELinuxConfig reads /etc/selinux/config as libselinux does (see
// guestfile/selinuxconfig): the mode and the policy name.
func ParseSELinuxConfig(b []byte) (mode, policy string) {
	c := selinuxconfig.Parse(b)
	return c.Mode, c.Type
}

// FileContext is one line of a file_contexts file.
type FileContext struct {
	Regex string
	// Kind is the file type the line is limited to (0 for any).
	Kind fs.Kind
	// Context is the label; "<<none>>" means "do not label".
	Context string
	re      *regexp.Regexp
	meta    bool
}

// FileContexts is a parsed file_contexts, in libselinux's lookup order.
type FileContexts struct{ specs []FileContext }

var fcKinds = map[string]fs.Kind{"--": fs.KindRegular, "-d": fs.KindDir, "-l": fs.KindSymlink,
	"-p": fs.KindFIFO, "-s": fs.KindSocket, "-c": fs.KindCharDevice, "-b": fs.KindBlockDevice}

// ParseFileContexts parses file_contexts text. Bad lines (a regex RE2
// cannot compile, a wrong field count) are returned as Problems and
// skipped; libselinux would refuse the whole file, sealprep then leaves
// the unmatched paths to a relabel.
func ParseFileContexts(b []byte) (*FileContexts, []problem.Problem) {
	var specs, exact []FileContext
	var bad []problem.Problem
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		var fc FileContext
		switch len(f) {
		case 2:
			fc = FileContext{Regex: f[0], Context: f[1]}
		case 3:
			k, ok := fcKinds[f[1]]
			if !ok {
				bad = append(bad, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("unknown file type %q", f[1])})
				continue
			}
			fc = FileContext{Regex: f[0], Kind: k, Context: f[2]}
		default:
			bad = append(bad, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("%d fields, want 2 or 3", len(f))})
			continue
		}
		re, err := regexp.Compile(`^(?:` + fc.Regex + `)$`)
		if err != nil {
			bad = append(bad, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("regex %q: %v", fc.Regex, err)})
			continue
		}
		fc.re = re
		fc.meta = strings.ContainsAny(fc.Regex, `.^$?*+|[({\`)
		// libselinux tries specs without regex characters after (that is,
		// before, searching from the end) those with them.
		if fc.meta {
			specs = append(specs, fc)
		} else {
			exact = append(exact, fc)
		}
	}
	return &FileContexts{specs: append(specs, exact...)}, bad
}

// Lookup is the label for path of kind: the last matching spec, exact
// paths before regexes, as selabel_lookup(3) finds it. ok is false when
// no spec matches or the match says <<none>>.
func (f *FileContexts) Lookup(path string, kind fs.Kind) (string, bool) {
	if f == nil {
		return "", false
	}
	for i := len(f.specs) - 1; i >= 0; i-- {
		s := f.specs[i]
		if s.Kind != 0 && s.Kind != kind {
			continue
		}
		if s.re.MatchString(path) {
			if s.Context == "<<none>>" {
				return "", false
			}
			return s.Context, true
		}
	}
	return "", false
}

// PlanSELinux returns what the plan means for an offline image's SELinux
// labels, or nil when there is nothing to say: a live system (the running
// policy labels new files itself), or SELinux disabled or absent on the
// image.
func PlanSELinux(root View, plan Plan, live bool) *SELinuxInfo {
	if live {
		return nil
	}
	b, err := root.ReadFileLimit("/etc/selinux/config", 1<<16)
	if err != nil {
		return nil
	}
	mode, policy := ParseSELinuxConfig(b)
	if mode != "enforcing" && mode != "permissive" {
		return nil
	}
	in := &SELinuxInfo{Mode: mode, Policy: policy}
	for _, a := range plan.Actions {
		var kind fs.Kind
		switch a.Kind {
		case WriteFile:
			kind = fs.KindRegular
		case Symlink:
			kind = fs.KindSymlink
		case Mkdir:
			kind = fs.KindDir
		default:
			continue // rewrites keep the old file's label; removals need none
		}
		if a.Kind != Symlink {
			if _, err := root.Lstat(a.Path); err == nil {
				continue // replaced in place: the label stays
			}
		}
		in.created = append(in.created, createdFile{a.Path, kind})
	}
	in.Created = len(in.created)
	var why string
	if policy == "" {
		why = "/etc/selinux/config names no SELINUXTYPE"
	} else {
		for _, name := range []string{"file_contexts", "file_contexts.local"} {
			p := "/etc/selinux/" + policy + "/contexts/files/" + name
			b, err := root.ReadFileLimit(p, 64<<20)
			if err != nil {
				if name == "file_contexts" {
					why = fmt.Sprintf("no readable %s (%v)", p, errors.Unwrap(err))
				}
				continue
			}
			fcs, _ := ParseFileContexts(b)
			if in.fcs == nil {
				in.fcs, in.FileContexts = fcs, p
			} else {
				in.fcs.specs = append(in.fcs.specs, fcs.specs...)
			}
		}
	}
	for _, c := range in.created {
		l, ok := in.fcs.Lookup(c.path, c.kind)
		if !ok {
			in.Relabel = true
		}
		in.Labels = append(in.Labels, FileLabel{Path: c.path, Label: l})
	}
	switch {
	case in.Created == 0:
		in.Message = "the plan creates no file, so no label is needed"
	case in.fcs == nil:
		in.Relabel = true
		in.Message = fmt.Sprintf("SELinux is %s on the image, but %s: the %d files sealprep creates stay unlabelled until the image is relabelled; --autorelabel makes the first boot relabel every file", mode, why, in.Created)
	case in.Relabel:
		in.Message = fmt.Sprintf("SELinux is %s on the image: %s has no label for some of the %d files sealprep creates; --autorelabel makes the first boot relabel every file", mode, in.FileContexts, in.Created)
	default:
		in.Message = fmt.Sprintf("SELinux is %s on the image: the %d files sealprep creates get their labels from %s; no relabel is needed", mode, in.Created, in.FileContexts)
	}
	return in
}

// LabelCreated sets the planned labels on the created files that apply
// made. It only labels files the results say were made.
func (in *SELinuxInfo) LabelCreated(root *fs.Confined, results []Result) {
	if in == nil {
		return
	}
	made := map[string]bool{}
	for _, r := range results {
		if r.Status == Done {
			made[r.Path] = true
		}
	}
	for i := range in.Labels {
		l := &in.Labels[i]
		if l.Label == "" || !made[l.Path] {
			continue
		}
		if err := root.SetLabel(l.Path, l.Label); err != nil {
			l.Error = err.Error()
			in.Relabel = true
			continue
		}
		l.Done = true
	}
}

func writeSELinuxText(w io.Writer, in *SELinuxInfo) {
	fmt.Fprintln(w, "\nSELinux:")
	fmt.Fprintf(w, "  %s\n", problem.OneLine(in.Message))
	for _, l := range in.Labels {
		switch {
		case l.Error != "":
			fmt.Fprintf(w, "    %s: not labelled: %s\n", l.Path, problem.OneLine(l.Error))
		case l.Label == "":
			fmt.Fprintf(w, "    %s: no file_contexts entry\n", l.Path)
		default:
			fmt.Fprintf(w, "    %s: %s\n", l.Path, l.Label)
		}
	}
	if in.Relabel && in.RelabelFiles > 0 {
		fmt.Fprintf(w, "  a full relabel walks every file: %d inodes in use on the root filesystem\n", in.RelabelFiles)
	}
}
