package hostname

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// judgeMetadata compares the judged name with hostname.expected when set,
// otherwise with what cloud-init applied and was asked for. It returns
// whether nothing is wrong and a phrase for the ok message.
func (v *verdict) judgeMetadata() (ok bool, note string) {
	name := v.subject
	if name == "" || name == "(none)" || IsLocalhost(name) {
		return false, ""
	}
	if exp := v.f.Expected; exp != "" {
		v.detail["compared_with"] = "hostname.expected"
		if err := expectedName(exp); err != nil { // the loader's rule: a loaded file never gets here
			v.add(runner.Error, codeConfigInvalid,
				fmt.Sprintf("hostname.expected %s is not a valid host name: %v", show(exp), err),
				codeConfigInvalid.Fixf("expected", show(exp)))
			return false, ""
		}
		if m := Compare(name, exp); m == MatchNone {
			v.add(runner.Fail, codeExpectedMismatch,
				fmt.Sprintf("%s %s differs from hostname.expected %s", v.subjectSrc, show(name), exp),
				codeExpectedMismatch.FixOn(v.f.Live, "expected", exp))
			return false, ""
		}
		return true, "matches hostname.expected"
	}

	if v.cfg.PreserveHostname.Value {
		msg := fmt.Sprintf("cloud-init was told to preserve the hostname (preserve_hostname: true in %s), so %s is not compared with meta-data",
			v.cfg.PreserveHostname.Source, show(name))
		if v.local != "" && MatchRequest(name, v.local, "") == MatchNone {
			msg = fmt.Sprintf("%s differs from meta-data local-hostname %s, as intended: preserve_hostname is true in %s",
				show(name), show(v.local), v.cfg.PreserveHostname.Source)
		}
		v.detail["compared_with"] = "nothing: preserve_hostname is true"
		v.add(runner.Pass, codePreserved, msg, "")
		return true, ""
	}

	setWhat := "what cloud-init set (" + v.show(pathSetHostname) + ")"
	askWhat := "what cloud-init was asked for (" + v.request.Source + ")"
	// A request taken from meta-data alone, while root-only user-data could
	// not be read, may be overridden there; set-hostname then decides.
	metaOnly := v.requested && v.request.Source == v.localSource && !v.userDataOK
	switch {
	case v.requested && !(metaOnly && v.setHost != nil):
		if MatchRequest(name, v.request.Hostname, v.request.FQDN) == MatchNone {
			st, fix := runner.Fail, v.metadataFix(v.request.Hostname, v.request.FQDN)
			msg := fmt.Sprintf("%s %s differs from %s: %s", v.subjectSrc, show(name), askWhat, wantNames(v.request.Hostname, v.request.FQDN))
			if metaOnly {
				// user-data may hold a hostname or preserve_hostname that
				// explains the difference; do not fail on a guess.
				st = runner.Warn
				msg += " (user-data was not readable and may override it)"
				fix = codeMetadataMismatch.CaseFix("when user-data could not be read without root")
				if v.f.IsRoot {
					fix = codeMetadataMismatch.CaseFix("when user-data could not be read as root")
				}
			}
			v.add(st, codeMetadataMismatch, msg, fix, "compared_with", askWhat)
			return false, ""
		}
		v.detail["compared_with"] = askWhat
		if v.setHost != nil && MatchRequest(name, v.setHost.Hostname, v.setHost.FQDN) == MatchNone {
			// cc_set_hostname runs once per instance; cc_update_hostname
			// applies later meta-data renames at every boot without
			// rewriting set-hostname.
			v.detail["set_hostname_note"] = "records an earlier name; cloud-init's update_hostname applied the current request since"
		}
		return true, "matches " + askWhat
	case v.setHost != nil:
		if MatchRequest(name, v.setHost.Hostname, v.setHost.FQDN) == MatchNone {
			v.add(runner.Fail, codeMetadataMismatch,
				fmt.Sprintf("%s %s differs from %s: %s", v.subjectSrc, show(name), setWhat, wantNames(v.setHost.Hostname, v.setHost.FQDN)),
				v.metadataFix(v.setHost.Hostname, v.setHost.FQDN), "compared_with", setWhat)
			return false, ""
		}
		v.detail["compared_with"] = setWhat
		if v.requested && MatchRequest(name, v.request.Hostname, v.request.FQDN) == MatchNone {
			v.detail["metadata_note"] = "meta-data asks for " + show(v.request.Hostname) + "; user-data was not readable and may override it"
		}
		return true, "matches " + setWhat
	}
	v.detail["compared_with"] = "nothing"
	v.add(runner.Pass, codeNoMetadata,
		fmt.Sprintf("no cloud-init hostname data and no hostname.expected, so %s is not compared with an expectation", show(name)), "")
	return true, ""
}

// metadataFix is the fix for a name that differs from what cloud-init
// was asked for (short, fqdn): the name itself on the running system, or
// the request at its source and a reboot; in an image, where hostnamectl
// would rename the host, /etc/hostname.
func (v *verdict) metadataFix(short, fqdn string) string {
	return codeMetadataMismatch.FixOn(v.f.Live, "requested", runner.ShellWord(or(short, fqdn)))
}

// wantNames shows the short name and the FQDN cloud-init may apply.
func wantNames(short, fqdn string) string {
	switch {
	case fqdn == "" || Compare(short, fqdn) == MatchExact:
		return show(or(short, fqdn))
	case short == "":
		return show(fqdn)
	}
	return show(short) + " or " + show(fqdn)
}
