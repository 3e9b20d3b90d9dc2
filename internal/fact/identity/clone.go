package identity

import (
	"fmt"
	"io"
	iofs "io/fs"
	"sort"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/boottime"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/parse/journalhdr"
)

// The cloud-init state that tells one instance from another, from the
// catalogue's cloud-init-instance item.
var (
	cloudInitInstance = catalogue.Lookup(catalogue.CloudInitInstance)
	// InstanceIDPath is the current instance's ID, as cloud-init wrote it.
	InstanceIDPath = cloudInitInstance.Files()[1]
	// PreviousInstanceIDPath is the instance before it.
	PreviousInstanceIDPath = cloudInitInstance.Files()[2]
	// CloudInstancesDir holds one directory per instance cloud-init ran.
	CloudInstancesDir = cloudInitInstance.Dirs()[0].Path
)

// JournalDir holds the persistent journal, one directory per machine-id.
const JournalDir = "/var/log/journal"

// NMSecretKeyPath is NetworkManager's per-machine secret, from which it
// derives stable identifiers together with the machine ID.
var NMSecretKeyPath = catalogue.Lookup(catalogue.NMSecretKey).Files()[0]

// FileTimes is a file's modification and status-change times.
type FileTimes struct{ Mod, Change time.Time }

// Written is the latest time the file's content can have been written:
// its ctime, which every write moves and no tool can set back (its mtime
// can be). Falls back to the mtime when the ctime is unknown.
func (t FileTimes) Written() time.Time {
	if !t.Change.IsZero() {
		return t.Change
	}
	return t.Mod
}

// TimesFunc returns the times of a guest path, not following a final
// symlink. Tests over captured trees pass the times the capture recorded.
type TimesFunc func(root *fs.Root, p string) (FileTimes, error)

// LstatTimes is the TimesFunc of the real file system.
func LstatTimes(root *fs.Root, p string) (FileTimes, error) {
	fi, err := root.Lstat(p)
	if err != nil {
		return FileTimes{}, err
	}
	return FileTimes{Mod: fi.Mtime, Change: fi.Ctime}, nil
}

// OtherInstance is a cloud-init instance directory other than the current
// one, and the newest of its per-instance semaphores.
type OtherInstance struct {
	Name   string
	Newest time.Time // zero when it has no semaphore
}

// JournalFile is one file of the persistent journal directory of the
// current machine-id, with its parsed header.
type JournalFile struct {
	Path   string
	Header journalhdr.Header
}

// CloneEvidence is what tells a VM whose machine-id was made for its
// cloud-init instance from one that kept an older one.
type CloneEvidence struct {
	// Live is true when the evidence is the running system's, false under
	// an image root; a judge words its fixes by it (check.Fix). IsRoot is
	// whether guestcheck runs as root, for the fix of an unreadable file;
	// the caller sets it.
	Live, IsRoot bool

	MachineIDRaw   []byte
	MachineID      string // trimmed content
	MachineIDKind  Kind
	MachineIDFound bool
	MachineIDErr   error
	MachineIDMode  iofs.FileMode
	MachineIDTimes FileTimes

	// DBusMachineID is the ID systemd would take from
	// /var/lib/dbus/machine-id when /etc/machine-id is unset; empty when
	// none. Root is whether the image's root is writable at boot; both are
	// read only under an image root and only when they matter.
	DBusMachineID string
	Root          RootMode

	InstanceID     string
	InstanceIDTime time.Time
	PreviousID     string
	// InstanceBirth is the oldest per-instance semaphore of the current
	// instance: written during its first boot. Zero when unknown.
	InstanceBirth  time.Time
	OtherInstances []OtherInstance

	// BootTime is when the running system booted (/proc/stat btime) and
	// BootID its boot_id; zero and empty under an image root.
	BootTime time.Time
	BootID   string

	Journals []JournalFile
	// JournalSkipped lists journal files whose header could not be read,
	// with the reason.
	JournalSkipped []string

	// Template is sealprep's record of the template the image was sealed
	// from (nil when none); TemplateErr is why it could not be read.
	Template    *sealrecord.Record
	TemplateErr error

	// MachineIDLink is the guest path a symlinked /etc/machine-id ends at,
	// "" when it is no symlink; MachineIDTransient is true when that is
	// under /run and not in the image (a new ID at every boot).
	MachineIDLink      string
	MachineIDTransient bool
	// NoSystemd is true when an image (off the running system) has no
	// systemd, so nothing sets up /etc/machine-id at boot.
	NoSystemd bool
	// Instances names the directories in /var/lib/cloud/instances, and
	// InstanceLink is whether /var/lib/cloud/instance exists: the
	// cloud-init instances a template would hand its clones.
	Instances    []string
	InstanceLink bool
	// NMSecretKey is whether NetworkManager's secret_key is in the root:
	// with it, identifiers NetworkManager derives are shared.
	NMSecretKey bool
	// DHCPState is the DHCP client state that identifies the machine
	// (ReadDHCPState), read off the running system only: a template must
	// hold none.
	DHCPState []string
	// Leftovers are the places of TemplateLeftoverItems the root holds,
	// read off an image only, as DHCPState is.
	Leftovers []catalogue.Found

	// Leaks are where an image hands systemd a machine ID at boot
	// (ReadMachineIDLeaks), read off the running system only.
	Leaks []string

	// State is whether the root is a sealed template, decided once
	// (TemplateStateOf); the judges take the template's expected
	// state as such.
	State TemplateState
}

// ReadCloneEvidence gathers CloneEvidence through root.
func ReadCloneEvidence(root *fs.Root, live bool) CloneEvidence {
	return ReadCloneEvidenceTimes(root, live, LstatTimes)
}

// ReadCloneEvidenceTimes is ReadCloneEvidence with file times from times.
func ReadCloneEvidenceTimes(root *fs.Root, live bool, times TimesFunc) CloneEvidence {
	ev := CloneEvidence{Live: live}
	mid := ReadMachineID(root)
	etc := mid.Etc
	ev.MachineIDFound, ev.MachineIDErr = etc.Found || etc.Err != nil, etc.Err
	tpl := ReadTemplate(root)
	ev.Template, ev.TemplateErr = tpl.Record, tpl.Err()
	ev.MachineIDLink, ev.MachineIDTransient = etc.Target, etc.Transient()
	var boot *LiveBoot
	if live {
		b := ReadLiveBoot(root)
		boot = &b
	} else {
		ev.NoSystemd = !SystemdPresent(root)
		ev.Leaks = ReadMachineIDLeaks(root)
		ev.DHCPState = ReadDHCPState(root)
		ev.Leftovers = ReadLeftovers(root)
	}
	ev.State = TemplateStateOf(mid, tpl, boot)
	if es, err := root.ReadDir(CloudInstancesDir); err == nil {
		for _, e := range es {
			ev.Instances = append(ev.Instances, e.Name)
		}
	}
	_, err := root.Lstat(CloudInstancePath)
	ev.InstanceLink = err == nil
	_, err = root.Lstat(NMSecretKeyPath)
	ev.NMSecretKey = err == nil
	if etc.Found {
		ev.MachineIDRaw, ev.MachineIDMode = etc.Content, etc.Perm
		ev.MachineID = strings.TrimSpace(string(ev.MachineIDRaw))
		ev.MachineIDKind = etc.Kind
		if t, err := times(root, MachineIDPath); err == nil {
			ev.MachineIDTimes = t
		}
	}
	if !live && mid.Unset() {
		ev.DBusMachineID = mid.DBusFallback()
		if !etc.Found {
			ev.Root = ReadRootMode(root)
		}
	}
	if b, err := root.ReadFile(InstanceIDPath); err == nil {
		ev.InstanceID = strings.TrimSpace(string(b))
		if t, err := times(root, InstanceIDPath); err == nil {
			ev.InstanceIDTime = t.Mod
		}
	}
	if b, err := root.ReadFile(PreviousInstanceIDPath); err == nil {
		ev.PreviousID = strings.TrimSpace(string(b))
	}
	if ev.InstanceID != "" {
		cur := strings.ReplaceAll(ev.InstanceID, "/", "_")
		if es, err := root.ReadDir(CloudInstancesDir); err == nil {
			for _, e := range es {
				if !e.IsDir() {
					continue
				}
				oldest, newest := semTimes(root, CloudInstancesDir+"/"+e.Name+"/sem", times)
				if e.Name == cur {
					ev.InstanceBirth = oldest
				} else {
					ev.OtherInstances = append(ev.OtherInstances, OtherInstance{Name: e.Name, Newest: newest})
				}
			}
		}
	}
	if live {
		ev.BootTime, _ = boottime.Read(root) // zero when unavailable
		if b, err := root.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			ev.BootID = strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
		}
	}
	if ev.MachineIDKind == Valid && ev.MachineIDFound {
		ev.Journals, ev.JournalSkipped = readJournalHeaders(root, JournalDir+"/"+strings.ToLower(ev.MachineID))
	}
	return ev
}

// semTimes returns the oldest and newest modification time of the
// semaphores in dir (cloud-init writes each once, when its module first
// runs for the instance).
func semTimes(root *fs.Root, dir string, times TimesFunc) (oldest, newest time.Time) {
	es, err := root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		t, err := times(root, dir+"/"+e.Name)
		if err != nil || t.Mod.IsZero() {
			continue
		}
		if oldest.IsZero() || t.Mod.Before(oldest) {
			oldest = t.Mod
		}
		if t.Mod.After(newest) {
			newest = t.Mod
		}
	}
	return
}

// maxJournalFiles bounds the work on a journal directory; journald keeps
// far fewer files with its default limits.
const maxJournalFiles = 512

// readJournalHeaders reads the header of every journal file in dir
// (active *.journal, archived *.journal and *.journal~ left by a crash).
func readJournalHeaders(root *fs.Root, dir string) (out []JournalFile, skipped []string) {
	es, err := root.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range es {
		if len(out)+len(skipped) >= maxJournalFiles {
			skipped = append(skipped, fmt.Sprintf("%s: more than %d files, the rest not read", dir, maxJournalFiles))
			break
		}
		n := e.Name
		if !e.IsRegular() || !strings.HasSuffix(n, ".journal") && !strings.HasSuffix(n, ".journal~") {
			continue
		}
		p := dir + "/" + n
		h, err := readJournalHeader(root, p)
		if err != nil {
			skipped = append(skipped, fs.ErrorText(p, err))
			continue
		}
		out = append(out, JournalFile{Path: p, Header: h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, skipped
}

func readJournalHeader(root *fs.Root, p string) (journalhdr.Header, error) {
	f, err := root.Open(p)
	if err != nil {
		return journalhdr.Header{}, err
	}
	defer f.Close()
	b := make([]byte, journalhdr.MinSize)
	n, err := io.ReadFull(f, b)
	if err != nil && n < len(journalhdr.Signature) {
		return journalhdr.Header{}, fmt.Errorf("read header: %w", err)
	}
	return journalhdr.Parse(b[:n])
}

// TemplateLeftoverItems are the catalogue items a template must not hold
// that no other judgement reads: what the item is decides alone, by the
// catalogue's generic reader. The machine ID, host keys, DHCP state, MAC
// bindings, the hostname and cloud-init's instance have their own.
var TemplateLeftoverItems = []string{
	catalogue.RandomSeed, catalogue.CredentialSecret, catalogue.NMSecretKey, catalogue.NMHistory,
	catalogue.LVMDevices, catalogue.Enrolment,
}

// ReadLeftovers lists the places of TemplateLeftoverItems that r holds
// as regular files (a link to elsewhere is not the item's content).
func ReadLeftovers(r fs.Reader) []catalogue.Found {
	var out []catalogue.Found
	for _, name := range TemplateLeftoverItems {
		for _, f := range catalogue.Lookup(name).Find(r) {
			if f.Kind == fs.KindRegular {
				out = append(out, f)
			}
		}
	}
	return out
}
