package cloudconfig

import "testing"

// resolve11Regexps is resolve11 as PyYAML's resolver states it: the
// regexps alone, in its order, without resolve11's word lists and
// first-byte shortcut.
func resolve11Regexps(s string) string {
	switch {
	case boolRE().MatchString(s):
		return "!!bool"
	case intRE().MatchString(s):
		return "!!int"
	case floatRE().MatchString(s):
		return "!!float"
	case nullRE().MatchString(s):
		return "!!null"
	case timeRE().MatchString(s):
		return "!!timestamp"
	}
	return "!!str"
}

func TestResolve11Shortcut(t *testing.T) {
	for _, s := range []string{"", "~", "yes", "No", "off", "ON", "true", "FALSE", "null", "NULL", "0", "-1", "+0x1F", "0b101",
		"0o17", "1:30", ".5", "-.inf", ".NaN", "1e3", "1.5e+3", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "ubuntu", "/etc/x",
		"échec", "\xff", "y", "n", "Yes!", " 1", "_1", "x1",
		"yes\n", "NULL\n", "~~", "Null!", "nULL", "oN", "tRUE", "-", "+", ".", "..", "-.", "1_", "+.inf", ".inf", "-0", "0x", "1:60", "12:30:45.5",
		"2001-1-1 1:00:00 +05", "2001-12-14\n", "1.", "1e3", "+1e+3", "1.0e-3"} {
		if got, want := resolve11(s), resolve11Regexps(s); got != want {
			t.Errorf("resolve11(%q) = %s, the regexps say %s", s, got, want)
		}
	}
}

func FuzzResolve11(f *testing.F) {
	f.Add("yes")
	f.Add("-1_000")
	f.Add("2001-12-14 21:59:43")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := resolve11(s), resolve11Regexps(s); got != want {
			t.Errorf("resolve11(%q) = %s, the regexps say %s", s, got, want)
		}
	})
}

// benchDoc is a cloud-config of the usual shape: users, keys, packages,
// files and commands, mostly plain strings.
const benchDoc = `#cloud-config
hostname: web-01
fqdn: web-01.example.com
manage_etc_hosts: true
ssh_pwauth: false
users:
  - default
  - name: deploy
    gecos: Deploy User
    groups: [sudo, adm, docker]
    shell: /bin/bash
    sudo: ["ALL=(ALL) NOPASSWD:ALL"]
    lock_passwd: true
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHqJ0 deploy@example.com
packages: [nginx, curl, git, htop, jq, unattended-upgrades]
package_update: true
write_files:
  - path: /etc/nginx/sites-available/default
    owner: root:root
    permissions: '0644'
    content: |
      server { listen 80; root /var/www/html; }
runcmd:
  - [systemctl, enable, --now, nginx]
  - echo done > /var/tmp/done
timezone: Europe/Berlin
ntp: {enabled: true, servers: [ntp1.example.com, ntp2.example.com]}
`

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("user-data", []byte(benchDoc)); err != nil {
			b.Fatal(err)
		}
	}
}
