package intent

import (
	"fmt"
	"path"
	"strings"

	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// ntpClient is where cc_ntp writes each client's configuration on
// Debian-like systems, and the unit links that enable it.
type ntpClient struct {
	name, conf, binary string
	wants              []string
}

var ntpFiles = []ntpClient{
	{"chrony", "/etc/chrony/chrony.conf", "/usr/sbin/chronyd", []string{"/etc/systemd/system/multi-user.target.wants/chrony.service"}},
	{"chrony", "/etc/chrony.conf", "/usr/sbin/chronyd", []string{"/etc/systemd/system/multi-user.target.wants/chronyd.service"}},
	{"ntp", "/etc/ntp.conf", "/usr/sbin/ntpd", []string{"/etc/systemd/system/multi-user.target.wants/ntp.service", "/etc/systemd/system/multi-user.target.wants/ntpd.service"}},
	{"systemd-timesyncd", "/etc/systemd/timesyncd.conf.d/cloud-init.conf", "/lib/systemd/systemd-timesyncd", []string{"/etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service"}},
}

func (j *judge) other() {
	f := j.f
	v := f.UserData.Value
	if tz, ok := v["timezone"]; ok && cc.Truthy(tz) {
		want := cc.PyStr(tz)
		link := f.Files["/etc/localtime"]
		etc := strings.TrimSpace(string(f.Files["/etc/timezone"].Content))
		target := string(link.Content)
		switch {
		case link.Link && strings.HasSuffix(path.Clean(target), "/zoneinfo/"+want):
			j.add(runner.Pass, CodeTimezoneOK, "timezone", "the time zone is "+want+" (/etc/localtime -> "+target+")", "", "", "")
		case !link.Link && etc == want:
			j.add(runner.Pass, CodeTimezoneOK, "timezone", "the time zone is "+want+" (/etc/timezone)", "", "", "")
		default:
			found := "/etc/localtime -> " + orStr(target, "not a link") + ", /etc/timezone " + orStr(etc, "absent")
			j.add(runner.Fail, CodeTimezoneMismatch, "timezone", "the time zone is not the requested "+want+": "+found, want, found,
				runner.Fix(f.Live, "Run `timedatectl set-timezone "+want+"`",
					"Link /etc/localtime in the image to ../usr/share/zoneinfo/"+want+" (and write "+want+" to /etc/timezone on Debian)")+
					"; check the name exists under /usr/share/zoneinfo")
		}
	}
	if n, ok := v["ntp"]; ok {
		j.ntp(n)
	}
	if m, ok := v["mounts"]; ok {
		j.mounts(m)
	}
	if _, ok := v["ssh_genkeytypes"]; ok {
		for i, t := range cc.GetList(v, "ssh_genkeytypes", nil) {
			kp := cc.Index("ssh_genkeytypes", i)
			pub := "/etc/ssh/ssh_host_" + t + "_key.pub"
			priv := "/etc/ssh/ssh_host_" + t + "_key"
			if f.Files[pub].Exists && f.Files[priv].Exists {
				j.add(runner.Pass, CodeHostKeyOK, kp, "the requested "+t+" host key exists ("+f.Display(priv)+")", "", "", "")
				continue
			}
			note := ""
			if t == "dsa" {
				note = "; OpenSSH 9.8 and later cannot make DSA keys, and cloud-init then skips the type silently"
			}
			j.add(runner.Fail, CodeHostKeyMissing, kp, "the requested "+t+" host key is missing ("+f.Display(priv)+")"+note, t+" host key", "missing",
				runner.Fix(f.Live, "Run `ssh-keygen -A` (or drop "+t+" from ssh_genkeytypes) and restart sshd",
					"cloud-init makes host keys at an instance's first boot, and a sealed image carries none: judge the keys on a booted instance, or drop "+t+" from ssh_genkeytypes"))
		}
	}
}

func (j *judge) ntp(n any) {
	f := j.f
	m, _ := n.(map[string]any)
	if n == nil || m == nil {
		return
	}
	if e, ok := m["enabled"]; ok && !cc.IsTrue(e) {
		j.add(runner.Pass, CodeNTPOK, "ntp.enabled", "ntp.enabled is false, so cloud-init left time synchronisation alone", "", "", "")
		return
	}
	want := append(cc.GetList(m, "servers", nil), cc.GetList(m, "pools", nil)...)
	var client *ntpClient
	for i := range ntpFiles {
		if fl := f.Files[ntpFiles[i].conf]; fl.Exists && (client == nil || strings.Contains(string(fl.Content), "cloud-init")) {
			client = &ntpFiles[i]
		}
	}
	if client == nil {
		j.add(runner.Fail, CodeNTPMismatch, "ntp", "ntp is enabled but no NTP client configuration cloud-init writes exists", "servers "+orStr(strings.Join(want, ","), "(distribution defaults)"), "no configuration",
			"Install an NTP client (chrony or systemd-timesyncd) and re-provision; read /var/log/cloud-init.log for the ntp module's error")
		return
	}
	conf := string(f.Files[client.conf].Content)
	var missing []string
	for _, s := range want {
		if !strings.Contains(conf, s) {
			missing = append(missing, s)
		}
	}
	enabled := false
	for _, w := range client.wants {
		if f.Files[w].Exists {
			enabled = true
		}
	}
	switch {
	case len(missing) > 0:
		j.add(runner.Fail, CodeNTPMismatch, "ntp", fmt.Sprintf("%s does not list the requested %s", f.Display(client.conf), strings.Join(missing, ", ")), strings.Join(want, ","), "",
			"Add the servers to "+client.conf+runner.Fix(f.Live, " and restart "+client.name, " in the image"))
	case !enabled:
		j.add(runner.Fail, CodeNTPMismatch, "ntp.enabled", fmt.Sprintf("%s is configured but not enabled (%s missing)", client.name, strings.Join(client.wants, " or ")), "enabled", "not enabled",
			runner.Fix(f.Live, "Run `systemctl enable --now "+path.Base(client.wants[0])+"`",
				"Enable it in the image: "+client.wants[0]+" is a link to its unit"))
	default:
		j.add(runner.Pass, CodeNTPOK, "ntp", fmt.Sprintf("%s is enabled and %s lists the requested servers", client.name, f.Display(client.conf)), "", "", "")
	}
}

// mountSpec is cc_mounts' sanitize_devname for the plain cases: a bare
// kernel name gets /dev/; ephemeralN and swap names are left as written.
func mountSpec(s string) string {
	if s != "" && !strings.HasPrefix(s, "/") && !strings.Contains(s, "=") && !strings.Contains(s, ":") &&
		!strings.HasPrefix(s, "ephemeral") && s != "swap" {
		return "/dev/" + s
	}
	return s
}

func (j *judge) mounts(v any) {
	f := j.f
	l, _ := v.([]any)
	if f.FstabErr != nil {
		j.add(runner.Error, CodeUnreadable, "mounts", "mounts not judged: /etc/fstab: "+f.FstabErr.Error(), "", "", "Make /etc/fstab readable")
		return
	}
	entries, _ := fstab.Parse(f.Fstab)
	for i, e := range l {
		kp := cc.Index("mounts", i)
		m, _ := e.([]any)
		if len(m) == 0 {
			continue
		}
		spec := mountSpec(cc.PyStr(m[0]))
		var mp any
		if len(m) > 1 {
			mp = m[1]
		}
		remove := mp == nil || strings.EqualFold(cc.PyStr(mp), "none") && len(m) < 3
		var hit *fstab.Entry
		for k := range entries {
			if entries[k].Spec == spec || (mp != nil && entries[k].MountPoint == cc.PyStr(mp) && !remove) {
				hit = &entries[k]
				break
			}
		}
		switch {
		case remove && hit != nil:
			j.add(runner.Fail, CodeMountMissing, kp, fmt.Sprintf("mounts asks to remove %s from /etc/fstab, but line %d still has it", spec, hit.Line), "no entry", hit.String(),
				"Delete the line from /etc/fstab")
		case remove:
			j.add(runner.Pass, CodeMountOK, kp, spec+" is not in /etc/fstab, as mounts asks", "", "", "")
		case hit == nil:
			j.add(runner.Fail, CodeMountMissing, kp, fmt.Sprintf("%s on %s is not in /etc/fstab", spec, cc.PyStr(mp)), spec+" "+cc.PyStr(mp), "no entry",
				"cloud-init skips a mounts entry whose device does not exist at boot; check the device name, or add the line to /etc/fstab")
		default:
			j.add(runner.Pass, CodeMountOK, kp, fmt.Sprintf("/etc/fstab line %d mounts %s on %s", hit.Line, hit.Spec, hit.MountPoint), "", "", "")
		}
	}
}
