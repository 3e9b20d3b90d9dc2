package dhcplease

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"
)

// testNetns makes a network namespace of the test's own, under a random
// name and deleted when the test ends, so that the real DHCP clients and
// servers the tests run touch no interface of the host. ip runs ipCmd
// and fails the test on an error.
func testNetns(t *testing.T, ipCmd string) (ns string, ip func(args ...string) string) {
	t.Helper()
	var rb [4]byte
	rand.Read(rb[:])
	ns = "gc-dhcplease-" + hex.EncodeToString(rb[:])
	ip = func(args ...string) string {
		t.Helper()
		out, err := exec.Command(ipCmd, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command(ipCmd, "netns", "del", ns).Run() })
	return ns, ip
}
