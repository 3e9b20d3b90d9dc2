package hosts

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestAgreesWithGlibc feeds generated hosts files to glibc, through
// `getent -s files hosts NAME` in a private mount namespace where the file
// is bind-mounted over /etc/hosts, and requires the first entry Lookup
// finds for every name to carry the address glibc answers, and no entry
// where glibc finds none. The corpus is IPv4-only, so that glibc's
// AF_INET6-then-AF_INET order cannot pick a different family.
func TestAgreesWithGlibc(t *testing.T) {
	testenv.RequireRoot(t, "needs root to bind-mount a hosts file in a private mount namespace")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	testenv.Tool(t, "getent", "libc-bin")
	rng := rand.New(rand.NewSource(20261201))
	names := []string{"web1", "web1.example.com", "db", "Mixed.Case", "a-b", "x", "localhost", "ip6-localhost"}
	addrs := []string{"127.0.0.1", "127.0.1.1", "192.0.2.10", "198.51.100.7", "203.0.113.254",
		"127.0.1.l", "192.0.2", "0x7f.1", "192.0.2.300", "", "#192.0.2.9"}
	dir := t.TempDir()
	var script strings.Builder
	type want struct{ file, name string }
	var cases []want
	const files = 60
	for i := 0; i < files; i++ {
		var b strings.Builder
		for l := 0; l < 1+rng.Intn(8); l++ {
			a := addrs[rng.Intn(len(addrs))]
			b.WriteString(a)
			for n := 0; n < rng.Intn(4); n++ {
				sep := []string{" ", "\t", "  "}[rng.Intn(3)]
				b.WriteString(sep + names[rng.Intn(len(names))])
			}
			if rng.Intn(5) == 0 {
				b.WriteString(" # " + names[rng.Intn(len(names))])
			}
			b.WriteString("\n")
		}
		f := filepath.Join(dir, fmt.Sprintf("hosts%02d", i))
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, "mount --bind %s /etc/hosts\n", f)
		for _, n := range names {
			fmt.Fprintf(&script, "printf '%%s\\t%%s\\t' %s %s; getent -s files hosts %s | head -n1 | awk '{print $1}'; echo\n", filepath.Base(f), n, n)
			cases = append(cases, want{f, n})
		}
		script.WriteString("umount /etc/hosts\n")
	}
	out, err := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("unshare: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) == 3 {
			got[f[0]+"\t"+f[1]] = strings.TrimSpace(f[2])
		}
	}
	if len(got) != len(cases) {
		t.Fatalf("getent answered %d of %d lookups:\n%s", len(got), len(cases), out)
	}
	found := 0
	for _, c := range cases {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := Parse(b)
		mine := ""
		if hits := Lookup(entries, c.name); len(hits) > 0 {
			mine = hits[0].Addr.String()
			found++
		}
		if glibc := got[filepath.Base(c.file)+"\t"+c.name]; mine != glibc {
			t.Errorf("%s, name %s: Lookup gives %q, glibc %q\n%s", filepath.Base(c.file), c.name, mine, glibc, b)
		}
	}
	if found < len(cases)/10 || found == len(cases) {
		t.Errorf("corpus too one-sided: %d of %d lookups found", found, len(cases))
	}
	t.Logf("%d files, %d lookups, %d found by both", files, len(cases), found)
}
