package cloudconfig

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
			j.add(runner.Pass, codeTimezoneOK, "timezone", "the time zone is "+want+" (/etc/localtime -> "+target+")", "", "", "")
		case !link.Link && etc == want:
			j.add(runner.Pass, codeTimezoneOK, "timezone", "the time zone is "+want+" (/etc/timezone)", "", "", "")
		default:
			found := "/etc/localtime -> " + orStr(target, "not a link") + ", /etc/timezone " + orStr(etc, "absent")
			j.add(runner.Fail, codeTimezoneMismatch, "timezone", "the time zone is not the requested "+want+": "+found, want, found,
				codeTimezoneMismatch.FixOn(f.Live, "zone", want))
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
				j.add(runner.Pass, codeHostKeyOK, kp, "the requested "+t+" host key exists ("+f.Display(priv)+")", "", "", "")
				continue
			}
			note := ""
			if t == "dsa" {
				note = "; OpenSSH 9.8 and later cannot make DSA keys, and cloud-init then skips the type silently"
			}
			j.add(runner.Fail, codeHostKeyMissing, kp, "the requested "+t+" host key is missing ("+f.Display(priv)+")"+note, t+" host key", "missing",
				codeHostKeyMissing.FixOn(f.Live, "type", t))
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
		j.add(runner.Pass, codeNTPOK, "ntp.enabled", "ntp.enabled is false, so cloud-init left time synchronisation alone", "", "", "")
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
		j.add(runner.Fail, codeNTPMismatch, "ntp", "ntp is enabled but no NTP client configuration cloud-init writes exists", "servers "+orStr(strings.Join(want, ","), "(distribution defaults)"), "no configuration",
			codeNTPMismatch.Fixf())
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
		j.add(runner.Fail, codeNTPMismatch, "ntp", fmt.Sprintf("%s does not list the requested %s", f.Display(client.conf), strings.Join(missing, ", ")), strings.Join(want, ","), "",
			j.liveOr(codeNTPMismatch, "when servers are missing", "when servers are missing in an image",
				"servers", strings.Join(missing, ", "), "file", client.conf, "client", client.name))
	case !enabled:
		j.add(runner.Fail, codeNTPMismatch, "ntp.enabled", fmt.Sprintf("%s is configured but not enabled (%s missing)", client.name, strings.Join(client.wants, " or ")), "enabled", "not enabled",
			j.liveOr(codeNTPMismatch, "when the client is not enabled", "when the client is not enabled in an image",
				"unit", path.Base(client.wants[0]), "client", client.name, "link", client.wants[0]))
	default:
		j.add(runner.Pass, codeNTPOK, "ntp", fmt.Sprintf("%s is enabled and %s lists the requested servers", client.name, f.Display(client.conf)), "", "", "")
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
		j.add(runner.Error, codeUnreadable, "mounts", "mounts not judged: /etc/fstab: "+f.FstabErr.Error(), "", "", readFix(f.IsRoot, f.Display(fstabPath), f.FstabErr))
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
			j.add(runner.Fail, codeMountMissing, kp, fmt.Sprintf("mounts asks to remove %s from /etc/fstab, but line %d still has it", spec, hit.Line), "no entry", hit.String(),
				codeMountMissing.CaseFix("when a removed entry is still there", "line", fmt.Sprint(hit.Line), "spec", spec))
		case remove:
			j.add(runner.Pass, codeMountOK, kp, spec+" is not in /etc/fstab, as mounts asks", "", "", "")
		case hit == nil:
			j.add(runner.Fail, codeMountMissing, kp, fmt.Sprintf("%s on %s is not in /etc/fstab", spec, cc.PyStr(mp)), spec+" "+cc.PyStr(mp), "no entry",
				codeMountMissing.Fixf("spec", spec))
		default:
			j.add(runner.Pass, codeMountOK, kp, fmt.Sprintf("/etc/fstab line %d mounts %s on %s", hit.Line, hit.Spec, hit.MountPoint), "", "", "")
		}
	}
}
