package seal

import (
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// wasForced says whether the template record says apply's --force passed
// op's refusal about path: verify then passes it too, and reports it as
// a kept item instead of a refusal.
func (o Options) wasForced(op, path string) bool {
	for _, f := range o.recorded {
		if f.Op == op && f.Path == sealrecord.NewForced(op, path, "-").Path {
			return true
		}
	}
	return false
}

// keptChoices sets what o's template record says the seal keeps by
// choice: the default operations of all that ops drops (the record's
// own operation aside: without it there is no record), and the refusals
// --force passed in preflight's notes.
func (o *Options) keptChoices(all, ops []Operation, preflight []Note) {
	on := map[string]bool{}
	for _, op := range ops {
		on[op.ID] = true
	}
	o.kept = nil
	for _, op := range all {
		if op.Default && !on[op.ID] && op.ID != opTemplateRecord.ID {
			o.kept = append(o.kept, op.ID)
		}
	}
	o.forced = nil
	for _, n := range preflight {
		if n.Forced {
			o.forced = append(o.forced, sealrecord.NewForced(n.Op, n.Path, n.Message))
		}
	}
}

// keptItems is verify's list of what the template keeps by choice, from
// its record (an operation dropped that this verify runs, given with
// --ops, is checked instead), and the notes without the refusals the
// record's --force passed (unless this verify has --force too): those are
// told once, as kept items.
func keptItems(rec *sealrecord.Record, ops []Operation, o Options, notes []Note) ([]sealrecord.Item, []Note) {
	if rec == nil {
		return nil, notes
	}
	rest := []Note{}
	for _, n := range notes {
		if !n.Forced || o.Force || !o.wasForced(n.Op, n.Path) {
			rest = append(rest, n)
		}
	}
	on := map[string]bool{}
	for _, op := range ops {
		on[op.ID] = true
	}
	var items []sealrecord.Item
	for _, it := range rec.KeptItems() {
		if it.Forced || !on[it.Op] {
			items = append(items, it)
		}
	}
	return items, rest
}

// carryForced is the refusals --force passed in this plan, with those
// the old record holds for operations this plan still runs, in the old
// record's order: once a forced operation has done its work (a credential
// secret removed), its refusal no longer fires, but what clones get from
// it stays.
func (p *Planner) carryForced(old []sealrecord.Forced) []sealrecord.Forced {
	now := map[[2]string]sealrecord.Forced{}
	for _, f := range p.forced {
		now[[2]string{f.Op, f.Path}] = f
	}
	var out []sealrecord.Forced
	for _, f := range old {
		k := [2]string{f.Op, f.Path}
		if n, ok := now[k]; ok {
			out = append(out, n)
			delete(now, k)
		} else if p.selected[f.Op] || f.Op == OpPreflight {
			out = append(out, f)
		}
	}
	for _, f := range p.forced {
		if _, ok := now[[2]string{f.Op, f.Path}]; ok {
			out = append(out, f)
		}
	}
	return out
}
