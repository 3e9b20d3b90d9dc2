package suggest

import "testing"

func TestSuggest(t *testing.T) {
	ids := []string{"cloud-init", "hostname", "dns", "routes", "ssh", "fstab", "network-config", "network-identity"}
	for in, want := range map[string]string{
		"hostnam": "hostname", "dsn": "dns", "sshh": "ssh", "fstba": "fstab", "clod-init": "cloud-init",
		"network": "", "xyz": "", "": "", "network-c": "network-config", "a": "",
	} {
		if got := Suggest(in, ids); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
