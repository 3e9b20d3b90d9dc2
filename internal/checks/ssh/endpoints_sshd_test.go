package ssh

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEndpointsAgainstSshd generates Port, ListenAddress and
// AddressFamily combinations and compares Endpoints with the listen
// addresses `sshd -T` prints for the same file. sshd only parses with -T;
// it binds nothing.
func TestEndpointsAgainstSshd(t *testing.T) {
	sshd, dir, hk := realSshd(t, "sshd -T needs root to read its host key")
	addrs := []string{"192.0.2.10", "198.51.100.1:2022", "0.0.0.0", "2001:db8::7", "[2001:db8::5]:2200", "::", "[::1]:23", "127.0.0.1"}
	fams := []string{"", "any", "inet", "inet6"}
	rng := rand.New(rand.NewPCG(3, 4))
	compared := 0
	for i := range 80 {
		var b strings.Builder
		b.WriteString("HostKey " + hk + "\n")
		if f := fams[rng.IntN(len(fams))]; f != "" {
			b.WriteString("AddressFamily " + f + "\n")
		}
		for range rng.IntN(3) {
			fmt.Fprintf(&b, "Port %d\n", []int{22, 2200, 8022}[rng.IntN(3)])
		}
		for range rng.IntN(4) {
			b.WriteString("ListenAddress " + addrs[rng.IntN(len(addrs))] + "\n")
		}
		cfg := filepath.Join(dir, fmt.Sprintf("c%d", i))
		if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(sshd, "-T", "-f", cfg)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			if strings.Contains(stderr.String(), "privilege separation") {
				t.Fatalf("sshd -T: %s", stderr.String())
			}
			continue // sshd rejects it (a v6 address with AddressFamily inet, ...)
		}
		var real []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "listenaddress "); ok {
				real = append(real, v)
			}
		}
		var ours []string
		for _, e := range Endpoints(cfgOf(t, b.String())) {
			ours = append(ours, e.String())
		}
		// sshd drops a repeated address; compare sets.
		slices.Sort(real)
		slices.Sort(ours)
		real, ours = slices.Compact(real), slices.Compact(ours)
		if !slices.Equal(real, ours) {
			t.Errorf("config:\n%s Endpoints = %v, sshd -T = %v", b.String(), ours, real)
		}
		compared++
	}
	if compared < 40 {
		t.Errorf("only %d of 80 generated configurations were accepted by sshd", compared)
	}
}
