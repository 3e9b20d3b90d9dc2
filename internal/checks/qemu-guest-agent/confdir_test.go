package qemuguestagent

import (
	"bytes"
	"os"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
)

// sameAsRegexp holds findConfdir to confdirRE run on the whole data.
func sameAsRegexp(t *testing.T, data []byte) {
	t.Helper()
	got, ok := findConfdir(data)
	m := confdirRE().FindSubmatch(data)
	if ok != (m != nil) || ok && got != string(m[1]) {
		t.Errorf("findConfdir(%q) = %q, %v; the regexp says %q", data, got, ok, m)
	}
}

func TestFindConfdir(t *testing.T) {
	for _, s := range []string{
		"",
		"/etc/qemu/qemu-ga.conf\x00",
		"x\x00/etc/qemu-kvm/qemu-ga.conf\x00y/usr/local/etc/qemu/qemu-ga.conf\x00",
		"/qemu-ga.conf\x00/etc/qemu/qemu-ga.conf\x00", // the first has no directory
		"//qemu-ga.conf\x00",
		"a b/etc/x/qemu-ga.conf\x00",
		"/etc/qemu/qemu-ga.conf", // no NUL
		"/a/qemu-ga.conf/qemu-ga.conf\x00",
		"\x00\x00/qemu-ga.conf\x00\x00/e/qemu-ga.conf\x00",
		"/e/qemu-ga.conf\x00/qemu-ga.conf\x00",
	} {
		sameAsRegexp(t, []byte(s))
	}
	// The agent binaries this machine has, when it has any.
	for _, b := range agent.Binaries {
		if data, err := os.ReadFile(b); err == nil {
			sameAsRegexp(t, data)
		}
	}
}

func FuzzFindConfdir(f *testing.F) {
	f.Add([]byte("/etc/qemu/qemu-ga.conf\x00"))
	f.Add([]byte("x/qemu-ga.conf\x00/a/b/qemu-ga.conf\x00"))
	f.Add(bytes.Repeat([]byte("/qemu-ga.conf"), 3))
	f.Fuzz(func(t *testing.T, data []byte) { sameAsRegexp(t, data) })
}

func BenchmarkFindConfdir(b *testing.B) {
	data := append(bytes.Repeat([]byte("\x7fELF some code and /paths/ here\x00"), 30000), "/etc/qemu/qemu-ga.conf\x00"...)
	for b.Loop() {
		findConfdir(data)
	}
}

func BenchmarkConfdirRegexp(b *testing.B) {
	data := append(bytes.Repeat([]byte("\x7fELF some code and /paths/ here\x00"), 30000), "/etc/qemu/qemu-ga.conf\x00"...)
	for b.Loop() {
		confdirRE().FindSubmatch(data)
	}
}
