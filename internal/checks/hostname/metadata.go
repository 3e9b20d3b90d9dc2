package hostname

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/config"
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
		if err := config.ExpectedHostname(exp); err != nil { // the loader's rule: a loaded file never gets here
			v.add(runner.Error, codeConfigInvalid,
				fmt.Sprintf("hostname.expected %s is not a valid host name: %v", show(exp), err),
				"Correct hostname.expected in the guestcheck configuration file")
			return false, ""
		}
		if m := Compare(name, exp); m == MatchNone {
			v.add(runner.Fail, codeExpectedMismatch,
				fmt.Sprintf("%s %s differs from hostname.expected %s", v.subjectSrc, show(name), exp),
				runner.Fix(v.f.Live, "Run `hostnamectl set-hostname "+exp+"`", "Write "+exp+" to /etc/hostname in the image")+
					" and fix the name the platform passes in meta-data, or correct hostname.expected if it is wrong")
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
			st, fix := runner.Fail, v.metadataFix()
			msg := fmt.Sprintf("%s %s differs from %s: %s", v.subjectSrc, show(name), askWhat, wantNames(v.request.Hostname, v.request.FQDN))
			if metaOnly {
				// user-data may hold a hostname or preserve_hostname that
				// explains the difference; do not fail on a guess.
				st = runner.Warn
				msg += " (user-data was not readable and may override it)"
				fix = "Run guestcheck as root so that user-data can be read; otherwise " + lowerFirst(v.metadataFix())
				if v.f.IsRoot {
					fix = "Find why user-data could not be read although guestcheck runs as root (its own finding says); otherwise " + lowerFirst(v.metadataFix())
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
				v.metadataFix(), "compared_with", setWhat)
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
// was asked for: at the source, then a reboot on the running system; in
// an image, where hostnamectl would rename the host, /etc/hostname.
func (v *verdict) metadataFix() string {
	return runner.Fix(v.f.Live,
		"Fix meta-data local-hostname or user-data hostname/fqdn and reboot (or run `hostnamectl set-hostname NAME`)",
		"Fix meta-data local-hostname or user-data hostname/fqdn (and /etc/hostname in the image, the name a clone boots with until cloud-init sets one)") +
		"; if the name is managed elsewhere, set `preserve_hostname: true` in user-data"
}

// lowerFirst lower-cases s's first letter, to continue a sentence.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
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
