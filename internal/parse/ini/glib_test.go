package ini

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestGLibAgainstQemuGA loads hand-made and generated key files with
// Debian's qemu-ga, a GKeyFile user that dumps what it read (-D): it must
// start exactly when Parse finds no problem and the string keys it reads
// unescape, and then hold the values Parse and Unescape give.
func TestGLibAgainstQemuGA(t *testing.T) {
	bin := testenv.Tool(t, "qemu-ga", "qemu-guest-agent")
	keys := []string{"logfile", "pidfile", "statedir"}
	inputs := []string{
		"[general]\npidfile = /x y \nstatedir=/s\\sd\n  [general]  \nlogfile=/l\n",
		"[general]\n;c\n",
		"[general]\n;k=v\nName[de]=x\n",
		"[general]\nstatedir=\\q\n",
		"[general] x\n",
		"logfile=/l\n[general]\n",
		"[general]\nlogfile=/a\nlogfile=/b\n[other]\nlogfile=/c\n",
		"# c\n\n\t# d\n[general]\r\nlogfile=\t/t\\t\r\n",
	}
	r := rand.New(rand.NewSource(11))
	atoms := []string{"[general]\n", "[other]\n", "[gen\n", "[]\n", "logfile", "pidfile", "statedir", "=", " ", "\t", "/p", "x",
		`\s`, `\n`, `\\`, `\q`, `\`, "#", ";", "\n", "[de]", "]", "\r"}
	for range 200 {
		var sb strings.Builder
		for range 1 + r.Intn(14) {
			sb.WriteString(atoms[r.Intn(len(atoms))])
		}
		inputs = append(inputs, sb.String())
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "qemu-ga.conf")
	for _, in := range inputs {
		if err := os.WriteFile(conf, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-D")
		cmd.Env = []string{"QGA_CONF=" + conf}
		out, err := cmd.Output()
		f, probs := Parse("qemu-ga.conf", []byte(in), GLib)
		want := map[string]string{}
		ok := len(probs) == 0
		for _, k := range keys {
			if e, found := f.Get("general", k); found {
				v, uerr := Unescape(e.Value)
				ok = ok && uerr == nil
				want[k] = v
			}
		}
		if ok != (err == nil) {
			t.Errorf("input %q: qemu-ga %v, Parse problems %v, values %q", in, err, probs, want)
			continue
		}
		if !ok {
			continue
		}
		dump, dprobs := Parse("dump", out, GLib)
		for k, v := range want {
			e, _ := dump.Get("general", k)
			got, uerr := Unescape(e.Value)
			if len(dprobs) > 0 || uerr != nil || got != v {
				t.Errorf("input %q: qemu-ga holds %s=%q, Parse %q", in, k, got, v)
			}
		}
	}
}
