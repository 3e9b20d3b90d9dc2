package identity

import (
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// CloudInstancePath is cloud-init's link to the current instance's
// directory, made during its first run on an instance.
var CloudInstancePath = catalogue.Lookup(catalogue.CloudInitInstance).Files()[0]

// TemplateState is whether a root is a sealed template, decided once for
// every check that judges identity: in a template, an unset machine ID,
// no host keys, no hostname and no cloud-init instance are the expected
// state, and leftovers of them are what clones would share.
type TemplateState struct {
	// Is is the answer; Why says it in a phrase, for the `template`
	// detail of findings (also when Is is false but the record is there).
	Is  bool
	Why string
	// Record is sealprep's template record when it parses: who sealed the
	// template (in a clone too: clones carry it forever).
	Record *sealrecord.Record
}

// LiveBoot is what tells, on the running system, that this boot is a
// sealed image's first before cloud-init's first run has made an
// instance.
type LiveBoot struct {
	// CloudInit is true when cloud-init is installed and not disabled;
	// Instance when its instance link exists.
	CloudInit, Instance bool
	// TransientID is true when a file is mounted over /etc/machine-id:
	// systemd (247+) does that on a first boot, until
	// systemd-machine-id-commit writes the generated ID.
	TransientID bool
}

// ReadTemplateState decides whether the root r is a sealed template; live
// says r is the running system.
func ReadTemplateState(r fs.Reader, live bool) TemplateState {
	var boot *LiveBoot
	if live {
		b := ReadLiveBoot(r)
		boot = &b
	}
	return TemplateStateOf(ReadMachineID(r), ReadTemplate(r), boot)
}

// ReadLiveBoot reads LiveBoot from the running system's files.
func ReadLiveBoot(r fs.Reader) LiveBoot {
	b := LiveBoot{CloudInit: CloudInitEnabled(r)}
	if _, err := r.Lstat(CloudInstancePath); err == nil {
		b.Instance = true
	}
	if raw, err := r.ReadFile("/proc/self/mountinfo"); err == nil {
		ms, _ := mountinfo.Parse(raw)
		for _, m := range ms {
			if m.MountPoint == MachineIDPath {
				b.TransientID = true
			}
		}
	}
	return b
}

// TemplateStateOf applies the rule (pure). boot is nil off the running
// system.
//
// Off the running system (--root, --image) /etc/machine-id decides: the
// root is a template when it holds no ID (missing, empty,
// "uninitialized", content systemd replaces; a symlink judged by what it
// ends at), because sealprep clears it last and every clone's first boot
// sets it, so a clone never looks like one. Host keys, the hostname and
// the instance are judged in template mode, never part of the decision.
// A record with the recorded ID still in place is a half-sealed template:
// a template still, whatever else it kept or got back, so every check
// judges it as one (the machine-id check fails the ID, and no check
// tells the operator to bake a name or a key into it); a record with
// another ID is a clone that booted.
//
// On the running system the rule is conservative: a template only during
// a sealed image's first boot before cloud-init's first run, that is with
// cloud-init enabled, no instance yet, and either sealprep's record or
// systemd's first-boot mount over /etc/machine-id. Without cloud-init a
// running system is never a template: the host key regenerators run
// before sshd.
func TemplateStateOf(mid MachineID, rec Template, boot *LiveBoot) TemplateState {
	st := TemplateState{Record: rec.Record}
	sealedBy := "looks sealed"
	if rec.Record != nil {
		sealedBy = "sealprep's record: " + rec.Record.Describe()
	}
	if boot != nil {
		if boot.CloudInit && !boot.Instance && (rec.Record != nil || boot.TransientID) {
			st.Is = true
			st.Why = "first boot of a sealed image, before cloud-init's first run (" + sealedBy + ")"
		}
		return st
	}
	etc := mid.Etc
	if etc.Err != nil {
		return st
	}
	state := "missing"
	if etc.Found {
		state = etc.Kind.String()
	}
	if etc.Link() {
		state = "a link to " + etc.Target + ", which is " + state
		if etc.Transient() {
			state = "a link to " + etc.Target + ", outside the image"
		}
	}
	switch {
	case !etc.Found || !etc.Kind.HoldsID():
		st.Is = true
		st.Why = sealedBy + "; " + MachineIDPath + " is " + state
	case rec.Record != nil && rec.Record.MachineIDIs(sealrecord.HashID(etc.ID())):
		st.Is = true
		st.Why = "half-sealed: " + MachineIDPath + " still holds the template's ID (" + sealedBy + ")"
	case rec.Record != nil:
		st.Why = "a clone of a sealed template that booted (" + sealedBy + ")"
	}
	return st
}

// Detail adds the `template` detail to d when the root is judged as a
// template, and returns d.
func (t TemplateState) Detail(d map[string]string) map[string]string {
	if t.Is {
		if d == nil {
			d = map[string]string{}
		}
		d["template"] = t.Why
	}
	return d
}
