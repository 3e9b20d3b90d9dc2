package cloudconfig

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

const healthyDir = "testdata/real/debian12-healthy"
const instDir = "/var/lib/cloud/instances/fixture-debian12-healthy"

// Planted secrets: no finding, golden file or VM report may contain them.
var secrets = []string{
	"PlantedPlainSecret-4k", "PlantedChpasswdSecret-9z", "PlantedWriteFilesSecret-3x",
	"$6$vTpNLUd9Tl5WqNPV$6FYmGAoGc/4dQcU3WcOS12Jla/YFqOxHqHIC9ndCBIzdC6a/tN9tkp2reCyFS0oMs8cfMrBiVGShKiq5kslWf/",
	"AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD",
	"AAAAC3NzaC1lZDI1NTE5AAAAIAS4e2qSwZNb8rkGRKACDvwz1g9lbSJ3oAPuMplJx6BK",
	"PlantedPasswdSecret-8w", "PlantedB64Secret-5m", "PlantedGzipSecret-2q",
	b64("PlantedB64Secret-5m\n"),
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func gzb64(s string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// healthyWith is the healthy capture with user-data replaced and files
// changed by edit.
func healthyWith(t testing.TB, userData string, edit func(s *tarSource)) *tarSource {
	s := loadTar(t, filepath.Join(healthyDir, "root.tar.gz"))
	if userData != "" {
		s.put(instDir+"/cloud-config.txt", 0o600, 0, userData)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func run(t testing.TB, s Source, isRoot bool) []runner.Finding {
	f := Gather(context.Background(), s, Options{IsRoot: isRoot})
	return Judge(f)
}

func find(fs []runner.Finding, code, kp string) *runner.Finding {
	for i := range fs {
		if fs[i].Code == code && (kp == "*" || fs[i].Detail["key_path"] == kp) {
			return &fs[i]
		}
	}
	return nil
}

const article = `#cloud-config
hostname: demo-linux-01
manage_etc_hosts: true
users:
  - name: ops
    groups: sudo
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD ops@example
ssh_pwauth: false
package_update: true
packages:
  - qemu-guest-agent
runcmd:
  - systemctl enable --now qemu-guest-agent || true
`

func TestSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ud       string
		edit     func(s *tarSource)
		code, kp string
		want     runner.Status
		msg      string
	}{
		{name: "article passes", ud: article, code: codeUserOK.ID, kp: "users[0]", want: runner.Pass},
		{name: "shell differs", ud: strings.Replace(article, "/bin/bash", "/bin/zsh", 1), code: codeUserShell.ID, kp: "users[0].shell", want: runner.Fail, msg: "not the requested /bin/zsh"},
		{name: "group missing", ud: strings.Replace(article, "groups: sudo", "groups: [sudo, adm]", 1), code: codeUserGroups.ID, kp: "users[0].groups", want: runner.Fail, msg: "adm"},
		{name: "user missing", ud: strings.Replace(article, "name: ops", "name: nobody2", 1), code: codeUserMissing.ID, kp: "users[0]", want: runner.Fail},
		{name: "primary group", ud: strings.Replace(article, "groups: sudo", "groups: sudo\n    primary_group: adm", 1), code: codeUserPrimaryGroup.ID, kp: "users[0].primary_group", want: runner.Fail},
		{name: "not locked", ud: article, edit: func(s *tarSource) {
			b, _ := s.ReadFile("/etc/shadow")
			s.put("/etc/shadow", 0o640, 0, strings.Replace(string(b), "ops:!:", "ops:$6$x$PlantedPasswdSecret-8w:", 1))
		}, code: codeUserLock.ID, kp: "users[0].lock_passwd", want: runner.Fail, msg: "not locked"},
		{name: "hash differs", ud: strings.Replace(article, "groups: sudo", "groups: sudo\n    lock_passwd: false\n    hashed_passwd: \"$6$vTpNLUd9Tl5WqNPV$6FYmGAoGc/4dQcU3WcOS12Jla/YFqOxHqHIC9ndCBIzdC6a/tN9tkp2reCyFS0oMs8cfMrBiVGShKiq5kslWf/\"", 1),
			edit: func(s *tarSource) {
				b, _ := s.ReadFile("/etc/shadow")
				s.put("/etc/shadow", 0o640, 0, strings.Replace(string(b), "ops:!:", "ops:$6$x$PlantedPasswdSecret-8w:", 1))
			}, code: codeUserPassword.ID, kp: "users[0].hashed_passwd", want: runner.Fail},
		{name: "sudo rule missing", ud: strings.Replace(article, "NOPASSWD:ALL", "ALL", 1), code: codeSudoMissing.ID, kp: "users[0].sudo", want: runner.Fail},
		{name: "sudoers.d not included", ud: article, edit: func(s *tarSource) {
			s.put("/etc/sudoers", 0o440, 0, "root ALL=(ALL:ALL) ALL\n")
		}, code: codeSudoNotIncluded.ID, kp: "users[0].sudo", want: runner.Fail},
		{name: "key missing", ud: article, edit: func(s *tarSource) {
			s.put("/home/ops/.ssh/authorized_keys", 0o600, 1000, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAS4e2qSwZNb8rkGRKACDvwz1g9lbSJ3oAPuMplJx6BK other\n")
		}, code: codeKeyMissing.ID, kp: "users[0].ssh_authorized_keys[0]", want: runner.Fail, msg: "SHA256:O7tpMTrmjHqJ5qH4LP47BKQuoW/FpVk1uCH97iH6Btk"},
		{name: "key with other comment and options still matches", ud: article, edit: func(s *tarSource) {
			s.put("/home/ops/.ssh/authorized_keys", 0o600, 1000, `from="192.0.2.0/24" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD renamed`+"\n")
		}, code: codeUserOK.ID, kp: "users[0]", want: runner.Pass},
		{name: "authorized_keys owned by another user", ud: article, edit: func(s *tarSource) {
			s.put("/home/ops/.ssh/authorized_keys", 0o600, 1234, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD ops@example\n")
		}, code: codeKeyStrictModes.ID, kp: "users[0].ssh_authorized_keys", want: runner.Fail, msg: "owned by uid 1234"},
		{name: "pwauth match override", ud: article, edit: func(s *tarSource) {
			s.put("/etc/ssh/sshd_config.d/60-match.conf", 0o644, 0, "Match User backup\n  PasswordAuthentication yes\n")
		}, code: codePwauthMatch.ID, kp: "ssh_pwauth", want: runner.Warn, msg: "Match block (User backup"},
		{name: "pwauth kbdinteractive", ud: article, edit: func(s *tarSource) {
			b, _ := s.ReadFile("/etc/ssh/sshd_config")
			s.put("/etc/ssh/sshd_config", 0o644, 0, "KbdInteractiveAuthentication yes\n"+string(b))
		}, code: codePwauthMismatch.ID, kp: "ssh_pwauth", want: runner.Fail, msg: "KbdInteractiveAuthentication is yes"},
		{name: "pwauth true", ud: strings.Replace(article, "ssh_pwauth: false", "ssh_pwauth: yes", 1), code: codePwauthMismatch.ID, kp: "ssh_pwauth", want: runner.Fail, msg: "asks PasswordAuthentication yes"},
		{name: "package pin", ud: strings.Replace(article, "  - qemu-guest-agent", "  - qemu-guest-agent=1:7.2+dfsg-7", 1), code: codePackageVersion.ID, kp: "packages[0]", want: runner.Fail},
		{name: "package pin list form ok", ud: strings.Replace(article, "  - qemu-guest-agent", "  - [qemu-guest-agent, \"1:7.2+dfsg-7+deb12u18+b3\"]", 1), code: codePackageOK.ID, kp: "packages[0]", want: runner.Pass},
		{name: "runcmd never ran", ud: article, edit: func(s *tarSource) { delete(s.ents, instDir+"/sem/config_scripts_user") },
			code: codeScriptNotRun.ID, kp: "runcmd", want: runner.Fail},
		{name: "runcmd failed points to cloud-init", ud: article, edit: func(s *tarSource) {
			s.put("/var/lib/cloud/data/status.json", 0o644, 0, `{"v1":{"modules-final":{"errors":["('scripts-user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))"],"start":1,"finished":2}}}`)
		}, code: codeScriptFailed.ID, kp: "runcmd", want: runner.Warn, msg: "cloud-init check"},
		{name: "write_files b64 and gzip", ud: article + "write_files:\n  - path: /etc/ssh/sshd_config.d/50-cloud-init.conf\n    encoding: b64\n    permissions: '0600'\n    content: " + b64("PasswordAuthentication no\n") + "\n  - path: /etc/timezone\n    encoding: gz+b64\n    content: " + gzb64("Etc/UTC\n") + "\n",
			code: codeFileOK.ID, kp: "write_files[1]", want: runner.Pass},
		{name: "write_files mode", ud: article + "write_files:\n  - path: /etc/timezone\n    permissions: '0600'\n    content: \"Etc/UTC\\n\"\n", code: codeFileMode.ID, kp: "write_files[0].permissions", want: runner.Fail, msg: "0644, not the requested 0600"},
		{name: "write_files owner", ud: article + "write_files:\n  - path: /etc/timezone\n    owner: ops:ops\n    content: \"Etc/UTC\\n\"\n", code: codeFileOwner.ID, kp: "write_files[0].owner", want: runner.Fail},
		{name: "write_files content before boot end", ud: article + "write_files:\n  - path: /etc/timezone\n    content: PlantedWriteFilesSecret-3x\n", code: codeFileContent.ID, kp: "write_files[0].content", want: runner.Fail, msg: "contents not shown"},
		{name: "write_files b64 secret", ud: article + "write_files:\n  - path: /etc/guestcheck-missing\n    encoding: b64\n    content: " + b64("PlantedB64Secret-5m\n") + "\n", code: codeFileMissing.ID, kp: "write_files[0].path", want: runner.Fail},
		{name: "write_files append", ud: article + "write_files:\n  - path: /etc/timezone\n    append: true\n    content: \"UTC\"\n", code: codeFileOK.ID, kp: "write_files[0]", want: runner.Pass},
		{name: "timezone", ud: article + "timezone: Europe/Berlin\n", code: codeTimezoneMismatch.ID, kp: "timezone", want: runner.Fail},
		{name: "timezone ok", ud: article + "timezone: Etc/UTC\n", code: codeTimezoneOK.ID, kp: "timezone", want: runner.Pass},
		{name: "mounts", ud: article + "mounts:\n  - [vdb, /data, ext4, defaults]\n", code: codeMountMissing.ID, kp: "mounts[0]", want: runner.Fail},
		{name: "mounts present", ud: article + "mounts:\n  - [/dev/vda, /, ext4]\n", code: codeMountOK.ID, kp: "mounts[0]", want: runner.Pass},
		{name: "ntp", ud: article + "ntp:\n  enabled: true\n  servers: [ntp.example.org]\n", code: codeNTPMismatch.ID, kp: "ntp", want: runner.Fail},
		{name: "ntp ok", ud: article + "ntp:\n  enabled: true\n  servers: [ntp.example.org]\n", edit: func(s *tarSource) {
			s.put("/etc/systemd/timesyncd.conf.d/cloud-init.conf", 0o644, 0, "# cloud-init\n[Time]\nNTP=ntp.example.org\n")
			s.put("/etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service", 0o644, 0, "")
		}, code: codeNTPOK.ID, kp: "ntp", want: runner.Pass, msg: "systemd-timesyncd is enabled"},
		{name: "rpm under --root", ud: article, edit: func(s *tarSource) {
			delete(s.ents, "/var/lib/dpkg/status")
			s.put("/var/lib/rpm/rpmdb.sqlite", 0o644, 0, "")
		}, code: codePackageUnjudged.ID, kp: "packages", want: runner.Skip, msg: "rpm -q"},
		{name: "host keys", ud: article + "ssh_genkeytypes: [ed25519, ecdsa-sk]\n", code: codeHostKeyMissing.ID, kp: "ssh_genkeytypes[1]", want: runner.Fail},
		{name: "host keys ok", ud: article + "ssh_genkeytypes: [ed25519]\n", code: codeHostKeyOK.ID, kp: "ssh_genkeytypes[0]", want: runner.Pass},
		{name: "misspelt key", ud: article + "pacakges: [tmux]\n", code: codeUnknownKey.ID, kp: "pacakges", want: runner.Fail, msg: "did you mean packages?"},
		{name: "unknown key without suggestion", ud: article + "zzzqqq: 1\n", code: codeUnknownKey.ID, kp: "zzzqqq", want: runner.Fail, msg: "cloud-init ignores it"},
		{name: "schema type error", ud: article + "runcmd_x: 1\nbootcmd: 5\n", code: codeSchemaError.ID, kp: "bootcmd", want: runner.Fail, msg: "is a number, not array"},
		{name: "bootcmd ok", ud: article + "bootcmd: [true]\n", code: codeScriptRan.ID, kp: "bootcmd", want: runner.Pass},
		{name: "invalid yaml", ud: "#cloud-config\nusers: [\n", code: codeInvalidYAML.ID, kp: "", want: runner.Fail, msg: "cloud-config.txt:"},
		{name: "default user", ud: "#cloud-config\nusers: [default]\n", code: codeUserMissing.ID, kp: "users[0]", want: runner.Fail, msg: "default user debian"},
		{name: "users missing means default user", ud: "#cloud-config\nssh_pwauth: false\n", code: codeUserMissing.ID, kp: "system_info.default_user", want: runner.Fail, msg: "default user debian"},
		{name: "top-level key for default user", ud: "#cloud-config\nusers: [default]\nssh_authorized_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAS4e2qSwZNb8rkGRKACDvwz1g9lbSJ3oAPuMplJx6BK root@example\"]\n",
			code: codeRootKeyPrefix.ID, kp: "ssh_authorized_keys[0]", want: runner.Fail, msg: "lacks"},
		{name: "vm harness default user", ud: "#cloud-config\nmanage_etc_hosts: true\nruncmd:\n  - mkdir -p /run/guestcheck\n", edit: func(s *tarSource) {
			// What cloud-init does for Debian's default user: useradd with
			// the groups, passwd -l, the sudo rule.
			for _, f := range []struct{ p, line string }{
				{"/etc/passwd", "debian:x:1001:1001:Debian:/home/debian:/bin/bash\n"},
				{"/etc/group", "debian:x:1001:\n"},
				{"/etc/shadow", "debian:!:20788:0:99999:7:::\n"},
			} {
				b, _ := s.ReadFile(f.p)
				out := string(b) + f.line
				if f.p == "/etc/group" {
					var ls []string
					for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
						for _, g := range []string{"adm", "audio", "cdrom", "dialout", "dip", "floppy", "netdev", "plugdev", "sudo", "video"} {
							if strings.HasPrefix(l, g+":") {
								if !strings.HasSuffix(l, ":") {
									l += ","
								}
								l += "debian"
							}
						}
						ls = append(ls, l)
					}
					out = strings.Join(ls, "\n") + "\n"
					if !strings.Contains(out, "\nnetdev:") {
						out += "netdev:x:110:debian\n"
					}
				}
				s.put(f.p, 0o644, 0, out)
			}
			s.put("/etc/sudoers.d/90-cloud-init-users", 0o440, 0, "# Created by cloud-init\n\n# User rules for debian\ndebian ALL=(ALL) NOPASSWD:ALL\n")
			s.ents["/home/debian"] = &tarEnt{hdr: &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755, Uid: 1001, Gid: 1001}}
		}, code: codeUserOK.ID, kp: "system_info.default_user", want: runner.Pass, msg: "default user debian"},
		{name: "no user-data", ud: "", edit: func(s *tarSource) { delete(s.ents, instDir+"/cloud-config.txt") }, code: codeNoUserData.ID, kp: "", want: runner.Skip},
		{name: "no schema", ud: article, edit: func(s *tarSource) {
			delete(s.ents, "/usr/lib/python3/dist-packages/cloudinit/config/schemas/schema-cloud-config-v1.json")
		}, code: codeSchemaSkipped.ID, kp: "", want: runner.Skip},
		{name: "secrets stay out", ud: article + "chpasswd:\n  users:\n    - {name: ops, password: PlantedChpasswdSecret-9z, type: text}\npassword: PlantedPasswdSecret-8w\nwrite_files:\n  - path: /nonexistent\n    encoding: gz+b64\n    content: " + gzb64("PlantedGzipSecret-2q") + "\n",
			code: codeFileMissing.ID, kp: "write_files[0].path", want: runner.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := run(t, healthyWith(t, tc.ud, tc.edit), true)
			f := find(fs, tc.code, tc.kp)
			if f == nil {
				t.Fatalf("no %s finding at %q in:\n%s", tc.code, tc.kp, dump(fs))
			}
			if f.Status != tc.want || !strings.Contains(f.Message, tc.msg) {
				t.Errorf("got %s %q, want %s containing %q", f.Status, f.Message, tc.want, tc.msg)
			}
			noSecrets(t, tc.name, fs)
			checktest.Conventions(t, fs, Codes)
		})
	}
}

func dump(fs []runner.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(string(f.Status) + " " + f.Code + " " + f.Detail["key_path"] + ": " + f.Message + "\n")
	}
	return b.String()
}

func noSecrets(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s carries the planted secret %q", what, s)
		}
	}
}

// TestGoldenSecrets scans every golden file for the planted secrets.
func TestGoldenSecrets(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s carries the planted secret %q", f, s)
			}
		}
	}
}

// TestNotRoot: cloud-config.txt is 0600; as non-root the check skips and says why.
func TestNotRoot(t *testing.T) {
	s := loadTar(t, filepath.Join(healthyDir, "root.tar.gz"))
	s.asUser = true
	fs := run(t, s, false)
	if len(fs) != 1 || fs[0].Code != codeNotRoot.ID || fs[0].Status != runner.Skip || !strings.Contains(fs[0].Message, "root") {
		t.Errorf("got\n%s", dump(fs))
	}
}

// BenchmarkCheck times the whole check (gathering from an in-memory root,
// schema compilation and validation, judging) on the article's user-data.
func BenchmarkCheck(b *testing.B) {
	s := loadTar(b, filepath.Join(healthyDir, "root.tar.gz"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := Gather(context.Background(), s, Options{IsRoot: true})
		if fs := Judge(f); len(fs) == 0 {
			b.Fatal("no findings")
		}
	}
}
