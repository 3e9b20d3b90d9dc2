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

func TestAbbrev(t *testing.T) {
	codes := []string{"fstab-kernel-device-name", "fstab-device-missing", "fstab-by-path-device-name", "hostname-etc-missing"}
	for in, want := range map[string]string{
		"fstab-kernel-devname": "fstab-kernel-device-name",
		"fstab-dev-missing":    "fstab-device-missing",
		"fstab-devname":        "fstab-kernel-device-name",
		"hostname-missing":     "hostname-etc-missing",
		"dns-missing":          "",
		"fstab-zzz":            "",
	} {
		if got := Abbrev(in, codes); got != want {
			t.Errorf("Abbrev(%q) = %q, want %q", in, got, want)
		}
	}
}
