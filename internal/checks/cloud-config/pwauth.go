package cloudconfig

import (
	"fmt"
	"strings"

	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// effective returns sshd's value for the first of keys present (first
// value wins), or def with a note when none is set.
func effective(c sshdconfig.Config, def string, keys ...string) (string, string) {
	var best *sshdconfig.Directive
	for _, d := range c.Directives {
		if d.Match != nil {
			continue
		}
		for _, k := range keys {
			if strings.EqualFold(d.Keyword, k) {
				d := d
				best = &d
				break
			}
		}
		if best != nil {
			break
		}
	}
	if best == nil {
		return def, "sshd's default (not set in any file)"
	}
	return strings.ToLower(best.Value()), best.At()
}

func (j *judge) pwauth() {
	f := j.f
	v, ok := f.UserData.Value["ssh_pwauth"]
	if !ok {
		return
	}
	kp := "ssh_pwauth"
	var want string
	switch {
	case v == nil:
		j.add(runner.Pass, codePwauthUnjudged, kp, "ssh_pwauth is null, so cloud-init leaves sshd's password setting unchanged", "", "", "")
		return
	case cc.IsTrue(v):
		want = "yes"
	case cc.IsFalse(v):
		want = "no"
	case strings.EqualFold(cc.PyStr(v), "unchanged"):
		j.add(runner.Pass, codePwauthUnjudged, kp, "ssh_pwauth is \"unchanged\", so cloud-init leaves sshd's password setting alone", "", "", "")
		return
	default:
		j.add(runner.Warn, codePwauthUnjudged, kp, fmt.Sprintf("ssh_pwauth %q is neither true, false nor \"unchanged\": cloud-init ignored it", cc.PyStr(v)),
			cc.PyStr(v), "", codePwauthUnjudged.Fixf())
		return
	}
	if f.SSHDErr != nil {
		j.add(runner.Skip, codePwauthUnjudged, kp, "ssh_pwauth not judged: "+f.Display(sshdconfig.DefaultPath)+" cannot be read ("+f.SSHDErr.Error()+")", "", "", "")
		return
	}
	pa, paAt := effective(f.SSHD, "yes", "PasswordAuthentication")
	kbd, kbdAt := effective(f.SSHD, "yes", "KbdInteractiveAuthentication", "ChallengeResponseAuthentication")
	pam, _ := effective(f.SSHD, "no", "UsePAM")
	files := strings.Join(f.SSHD.Files, ", ")
	bad := false
	if pa != want {
		bad = true
		j.add(runner.Fail, codePwauthMismatch, kp,
			fmt.Sprintf("ssh_pwauth asks PasswordAuthentication %s, but sshd uses %s from %s (the first value wins, and drop-ins are read where Include stands)", want, pa, paAt),
			"PasswordAuthentication "+want, "PasswordAuthentication "+pa+" ("+paAt+")",
			codePwauthMismatch.FixOn(f.Live, "at", paAt), "sshd_files", files)
	}
	if want == "no" && kbd != "no" && pam == "yes" {
		bad = true
		j.add(runner.Fail, codePwauthMismatch, kp,
			fmt.Sprintf("ssh_pwauth is false, but KbdInteractiveAuthentication is %s (%s) with UsePAM yes, so PAM still takes passwords", kbd, kbdAt),
			"KbdInteractiveAuthentication no", "KbdInteractiveAuthentication "+kbd+" ("+kbdAt+")",
			j.liveOr(codePwauthMismatch, "when PAM takes passwords", "when PAM takes passwords in an image"), "sshd_files", files)
	}
	for _, key := range []string{"PasswordAuthentication", "KbdInteractiveAuthentication"} {
		for _, d := range f.SSHD.Conditional(key) {
			if strings.ToLower(d.Value()) != want && !(key == "KbdInteractiveAuthentication" && want == "yes") {
				j.add(runner.Warn, codePwauthMatch, kp,
					fmt.Sprintf("a Match block (%s, %s:%d) sets %s %s for the connections it matches, overriding ssh_pwauth", d.Match.Criteria, d.Match.File, d.Match.Line, key, d.Value()),
					key+" "+want, key+" "+d.Value()+" ("+d.At()+")",
					codePwauthMatch.Fixf("key", key, "at", d.At()))
			}
		}
	}
	if !bad {
		j.add(runner.Pass, codePwauthOK, kp, fmt.Sprintf("sshd's effective PasswordAuthentication is %s (%s), as ssh_pwauth asks", pa, paAt), "", "",
			"", "kbd_interactive", kbd+" ("+kbdAt+")", "sshd_files", files)
	}
}
