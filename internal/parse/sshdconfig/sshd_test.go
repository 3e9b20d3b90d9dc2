package sshdconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// osSource reads real files, for the differential test.
type osSource struct{}

func (osSource) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (osSource) Glob(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	sort.Strings(m)
	return m, err
}

// judged are the settings the ssh check reads, with sshd's compiled-in
// defaults (OpenSSH 9.x) and the values a generated config may set.
var judged = []struct {
	key, def string
	values   []string
}{
	{"passwordauthentication", "yes", []string{"yes", "no"}},
	{"kbdinteractiveauthentication", "yes", []string{"yes", "no"}},
	{"permitrootlogin", "prohibit-password", []string{"yes", "no", "prohibit-password", "forced-commands-only"}},
	{"permitemptypasswords", "no", []string{"yes", "no"}},
	{"pubkeyauthentication", "yes", []string{"yes", "no"}},
}

// sshdName is how sshd -T prints a value.
func sshdName(v string) string {
	if v == "prohibit-password" {
		return "without-password"
	}
	return strings.ToLower(v)
}

// TestAgainstSshd generates configurations with drop-ins and a Match block
// and compares the effective values Load computes with what the real sshd
// prints with -T, globally and for a connection the Match block matches.
func TestAgainstSshd(t *testing.T) {
	t.Parallel()
	testenv.RequireRoot(t, "sshd -T needs root to read its host key")
	sshd := testenv.Tool(t, "sshd", "openssh-server")
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	testenv.SshdPrivsepDir(t) // sshd refuses to run without it
	dir := t.TempDir()
	hk := filepath.Join(dir, "hostkey")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", hk).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	line := func() string {
		j := judged[rng.IntN(len(judged))]
		kw := j.key
		if rng.IntN(2) == 0 {
			kw = strings.ToUpper(kw[:1]) + kw[1:]
		}
		sep := " "
		if rng.IntN(3) == 0 {
			sep = "="
		}
		return kw + sep + j.values[rng.IntN(len(j.values))] + "\n"
	}
	block := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(line())
		}
		return b.String()
	}
	for i := range 40 {
		cdir := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(filepath.Join(cdir, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		main := "HostKey " + hk + "\n" + block(rng.IntN(2)) + "Include " + cdir + "/d/*.conf\n" + block(rng.IntN(4))
		if rng.IntN(2) == 0 {
			main += "Match User backup\n" + block(1+rng.IntN(3))
		}
		write := func(name, s string) {
			if err := os.WriteFile(filepath.Join(cdir, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("sshd_config", main)
		for k := range rng.IntN(4) {
			write(fmt.Sprintf("d/%02d.conf", rng.IntN(90)+k), block(rng.IntN(3)))
		}
		c := Load(filepath.Join(cdir, "sshd_config"), osSource{})
		if len(c.Problems) > 0 {
			t.Fatalf("config %d: %v", i, c.Problems)
		}
		for _, conn := range []string{"", "user=backup,host=h.example.org,addr=192.0.2.7"} {
			args := []string{"-T", "-f", filepath.Join(cdir, "sshd_config")}
			if conn != "" {
				args = append(args, "-C", conn)
			}
			out, err := exec.Command(sshd, args...).Output()
			if err != nil {
				t.Fatalf("sshd %v: %v", args, err)
			}
			real := map[string]string{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				k, v, _ := strings.Cut(sc.Text(), " ")
				real[k] = v
			}
			for _, j := range judged {
				want := j.def
				if d, ok := c.First(j.key); ok {
					want = d.Value()
				}
				if conn != "" {
					for _, d := range c.Conditional(j.key) {
						if d.Match.Criteria == "User backup" {
							want = d.Value()
						}
					}
				}
				if sshdName(want) != real[j.key] {
					t.Errorf("config %d conn %q: %s = %s, sshd -T says %s\n%s", i, conn, j.key, want, real[j.key], dump(c))
				}
			}
		}
	}
}

func dump(c Config) string {
	var b strings.Builder
	for _, d := range c.Directives {
		fmt.Fprintf(&b, "  %s %s %v match=%v\n", d.At(), d.Keyword, d.Args, d.Match != nil)
	}
	return b.String()
}
