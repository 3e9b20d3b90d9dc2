package vmm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPickDynamicID: the pick skips every id a passwd or group entry,
// systemd's dynamic-uid registry or a running process (any of its four
// uids or gids) names, wraps around the range, and fails when it is full.
func TestPickDynamicID(t *testing.T) {
	tab := idTables{
		Passwd:  []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\nsvc:x:61184:100::/:/bin/false\n"),
		Group:   []byte("root:x:0:\nkvm:x:61185:\n"),
		Dynamic: []string{"61186", "direct:61187", "direct:systemd-foo"},
		Proc: [][]byte{
			[]byte("Name:\tqemu\nUid:\t61188\t61188\t61188\t61188\nGid:\t61189\t61189\t61189\t61189\n"),
			[]byte("Name:\tx\nUid:\t0\t61190\t0\t0\nGid:\t0\t0\t0\t61191\n"),
		},
	}
	got, err := pickDynamicID(tab, func(int) int { return 0 })
	if err != nil || got != 61192 {
		t.Errorf("from the range's start: %d %v, want 61192 (61184-61191 are taken)", got, err)
	}
	// Starting at the last id, which is free, takes it.
	if got, _ := pickDynamicID(tab, func(n int) int { return n - 1 }); got != dynamicLast {
		t.Errorf("from the last id: %d, want %d", got, dynamicLast)
	}
	// A taken last id wraps around to the first free one.
	tab.Passwd = append(tab.Passwd, []byte("x:x:65519:65519::/:/bin/false\n")...)
	if got, _ := pickDynamicID(tab, func(n int) int { return n - 1 }); got != 61192 {
		t.Errorf("wrapped: %d, want 61192", got)
	}
	var full strings.Builder
	for id := dynamicFirst; id <= dynamicLast; id++ {
		full.WriteString("u:x:" + itoa(id) + ":0::/:/bin/false\n")
	}
	if got, err := pickDynamicID(idTables{Passwd: []byte(full.String())}, func(int) int { return 7 }); err == nil {
		t.Errorf("a full range gave %d", got)
	}
}

// TestJailNotRoot: as a user, QEMU runs as that user, no credential.
func TestJailNotRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as a user: as root the jail drops to a dynamic uid (TestJailRoot)")
	}
	j, err := NewJail(AccelTCG, "/dev/kvm")
	if err != nil || j.dropped() || j.uid != os.Geteuid() {
		t.Errorf("%+v %v: want prove's own user, no credential", j, err)
	}
}

// TestJailRoot: as root, the credential is an unused dynamic uid with no
// groups under TCG, and the kvm group only with KVM and a /dev/kvm whose
// group may read and write it; a directory QEMU's user cannot pass
// through is refused.
func TestJailRoot(t *testing.T) {
	needRoot(t)
	j, err := NewJail(AccelTCG, "/dev/kvm")
	if err != nil {
		t.Fatal(err)
	}
	c := j.cred
	if c == nil || c.Uid < dynamicFirst || c.Uid > dynamicLast || c.Gid != c.Uid || len(c.Groups) != 0 || c.NoSetGroups {
		t.Fatalf("credential %+v: want a dynamic uid = gid, groups set to none", c)
	}
	dev := filepath.Join(t.TempDir(), "kvm")
	os.WriteFile(dev, nil, 0o600)
	os.Chmod(dev, 0o660)
	os.Chown(dev, 0, 4242)
	if k, _ := NewJail(AccelKVM, dev); len(k.cred.Groups) != 1 || k.cred.Groups[0] != 4242 {
		t.Errorf("kvm with a group-rw device: groups %v, want [4242]", k.cred.Groups)
	}
	os.Chmod(dev, 0o600)
	if k, _ := NewJail(AccelKVM, dev); len(k.cred.Groups) != 0 {
		t.Errorf("kvm with a 0600 device: groups %v, want none", k.cred.Groups)
	}
	closed := filepath.Join(t.TempDir(), "run") // under a 0700 directory
	os.Mkdir(closed, 0o700)
	if err := j.Reachable(closed); err == nil || !strings.Contains(err.Error(), "cannot pass through") {
		t.Errorf("a run directory under a 0700 one: %v", err)
	}
	if err := j.Reachable(filepath.Join(searchable(t), "run")); err != nil {
		t.Errorf("under 0711 directories: %v", err)
	}
}

// searchable is a temporary directory that others may search, as its
// parent: t.TempDir's are 0700.
func searchable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: QEMU drops to a dynamic uid only when sealprep runs as root (as a user it runs as that user)")
	}
}
