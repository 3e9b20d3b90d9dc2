package sealrecord

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// maxReason bounds a forced refusal's reason in the record.
const maxReason = 1000

// Item is one thing a template keeps by choice: an operation --ops
// dropped, or a refusal --force passed. sealprep verify, guestcheck's
// template judgements and prove all report it by Message, so that one
// choice is told alike wherever it shows.
type Item struct {
	// Op is the operation (or "preflight", the root as a whole).
	Op string `json:"op" schema:"req,nonempty" doc:"the operation, or preflight (the root as a whole)"`
	// Forced is true for a refusal --force passed, false for an operation
	// --ops dropped; Path is what the refusal named.
	Forced bool   `json:"forced,omitempty" doc:"a refusal --force passed; absent: an operation left out of --ops"`
	Path   string `json:"path,omitempty" doc:"what the forced refusal named"`
	// Message names the item, says it was kept by choice and what every
	// clone gets from it, on one line.
	Message string `json:"message" schema:"req,nonempty" doc:"one line: the item, that it was kept by choice, and what every clone gets from it"`
}

// Wording is how the record tells an operation --ops dropped: what a
// clone would share, as a noun phrase ("ssh host keys"), and whether it is
// one thing ("it") or many ("them"). Each operation's descriptor in
// sealprep says it; keptWording is generated from them.
type Wording struct {
	What string
	One  bool
}

// wording is op's Wording; an operation keptWording does not name (one of
// a newer sealprep) is "what <op> clears".
func wording(op string) Wording {
	if w, ok := keptWording[op]; ok {
		return w
	}
	return Wording{What: "what " + op + " clears", One: true}
}

// KeptItems lists what the template keeps by choice, in the record's
// order: first each operation --ops dropped, then each refusal --force
// passed, each with its one wording, e.g.
//
//	ssh host keys kept by choice (sealprep apply --ops -ssh-host-keys at 2026-12-05T10:00:00Z): every clone will share them; seal with ssh-host-keys to give each clone its own
//
// Records of older sealprep versions list nothing.
func (r Record) KeptItems() []Item {
	at := r.SealedAt.UTC().Format(time.RFC3339)
	var out []Item
	for _, op := range r.Kept {
		k := wording(op)
		pron := "them"
		if k.One {
			pron = "it"
		}
		// The flag is written apart: "--ops" followed by a verb would read
		// as an operation's name to the test that checks messages.
		dropped := "--ops" + " -" + op
		out = append(out, Item{Op: op, Message: fmt.Sprintf(
			"%s kept by choice (sealprep apply %s at %s): every clone will share %s; seal with %s to give each clone its own",
			k.What, dropped, at, pron, op)})
	}
	for _, f := range r.Forced {
		what := f.Reason
		if f.Path != "" {
			what = f.Path + ": " + what
		}
		out = append(out, Item{Op: f.Op, Forced: true, Path: f.Path, Message: fmt.Sprintf(
			"%s refusal passed by choice (sealprep apply --force at %s): %s", f.Op, at, what)})
	}
	return out
}

// KeptItem is the first item KeptItems lists for op, forced or not.
func (r Record) KeptItem(op string, forced bool) (Item, bool) {
	for _, it := range r.KeptItems() {
		if it.Op == op && it.Forced == forced {
			return it, true
		}
	}
	return Item{}, false
}

// NewForced is the record's entry for a refusal --force passed, its
// reason made one line of at most maxReason bytes.
func NewForced(op, path, reason string) Forced {
	clean := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == unicode.ReplacementChar {
				return '?'
			}
			return r
		}, s)
		if len(s) > maxReason {
			s = strings.ToValidUTF8(s[:maxReason-3], "") + "..."
		}
		return s
	}
	return Forced{Op: op, Path: clean(path), Reason: clean(reason)}
}

// checkKept rejects kept and forced entries a sealprep would not write.
func (r Record) checkKept() error {
	for _, op := range r.Kept {
		if !opRE().MatchString(op) {
			return fmt.Errorf("kept %q is not an operation ID", op)
		}
	}
	for _, f := range r.Forced {
		if !opRE().MatchString(f.Op) {
			return fmt.Errorf("forced op %q is not an operation ID", f.Op)
		}
		if f.Reason == "" || NewForced(f.Op, f.Path, f.Reason) != f {
			return fmt.Errorf("forced %s: the reason must be one line of at most %d bytes", f.Op, maxReason)
		}
	}
	return nil
}
