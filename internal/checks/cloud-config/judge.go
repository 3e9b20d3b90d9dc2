package cloudconfig

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// judge accumulates findings.
type judge struct {
	f   *Facts
	out []runner.Finding
}

// add records a finding about key path kp: what was asked, what is there.
func (j *judge) add(st runner.Status, code runner.Code, kp, msg, asked, found string, fix string, kv ...string) {
	d := map[string]string{}
	if kp != "" {
		d["key_path"] = kp
		if l := j.f.UserData.Line(kp); l > 0 {
			d["source"] = fmt.Sprintf("%s:%d", j.f.UserDataShown, l)
		}
	}
	if asked != "" {
		d["asked"] = asked
	}
	if found != "" {
		d["found"] = found
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			d[kv[i]] = kv[i+1]
		}
	}
	if st == runner.Pass || st == runner.Skip {
		fix = ""
	}
	// Messages end without a period; a schema description quoted in one
	// ends with one.
	j.out = append(j.out, code.New(st, strings.TrimRight(oneLine(msg), "."), d, fix))
}

// Judge turns facts into findings. It is pure.
func Judge(f *Facts) []runner.Finding {
	j := &judge{f: f}
	if !j.source() {
		return j.out
	}
	j.schema()
	j.users()
	j.pwauth()
	j.packages()
	j.writeFiles()
	j.scripts()
	j.other()
	j.leftOut()
	return j.out
}

func denied(err error) bool {
	return errors.Is(err, iofs.ErrPermission) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// readFix is the fix for guest file p that could not be read, by the
// error: a permission error asks for root only when guestcheck is not
// root already (root that is denied has a mode, an LSM policy or a root
// that squashes root in its way), a missing file is restored, and
// anything else is looked into.
func readFix(isRoot bool, p string, err error) string {
	switch {
	case denied(err) && !isRoot:
		return codeUnreadable.CaseFix("when guestcheck is not root", "file", p)
	case denied(err):
		return codeUnreadable.CaseFix(runner.WhenRootDenied, "file", p)
	case errors.Is(err, iofs.ErrNotExist):
		return codeUnreadable.CaseFix("when the file is missing", "file", p)
	}
	return codeUnreadable.CaseFix("when the file is damaged", "file", p)
}

// source reports why nothing can be judged; it returns false then.
func (j *judge) source() bool {
	f := j.f
	switch {
	case f.UserDataErr != nil && errors.Is(f.UserDataErr, iofs.ErrNotExist):
		if !f.Installed {
			j.add(runner.Skip, codeNoCloudInit, "", "cloud-init is not installed, so no user-data was applied", "", "", "")
			return false
		}
		j.add(runner.Skip, codeNoUserData, "", f.UserDataShown+" does not exist: this instance got no cloud-config user-data, or cloud-init has not run yet", "", "", "")
		return false
	case f.UserDataErr != nil && denied(f.UserDataErr) && !f.IsRoot:
		j.add(runner.Skip, codeNotRoot, "", f.UserDataShown+" is readable only by root (mode 0600, it may hold passwords): run guestcheck as root to compare user-data with the system", "", "", "")
		return false
	case f.UserDataErr != nil:
		fix := codeUnreadable.Fixf("file", f.UserDataShown)
		if denied(f.UserDataErr) {
			fix = readFix(f.IsRoot, f.UserDataShown, f.UserDataErr)
		}
		j.add(runner.Error, codeUnreadable, "", fs.ErrorText(f.UserDataShown, f.UserDataErr), "", "", fix)
		return false
	case f.ParseErr != nil:
		j.add(runner.Fail, codeInvalidYAML, "", "cloud-init cannot load its user-data cloud-config, so it applied none of it: "+f.ParseErr.Error(), "", "",
			codeInvalidYAML.Fixf())
		return false
	}
	return true
}

func (j *judge) schema() {
	f := j.f
	if f.SchemaSkip != "" {
		j.add(runner.Skip, codeSchemaSkipped, "", "schema validation skipped: "+f.SchemaSkip, "", "", "", "schema", f.SchemaFile)
		return
	}
	errs, deps, unknown := 0, 0, 0
	for _, p := range f.SchemaProblems {
		kp := p.Path
		src := ""
		if p.Line > 0 {
			src = fmt.Sprintf("%s:%d", f.UserDataShown, p.Line)
		}
		shown := kp
		if shown == "" {
			shown = "(top level)"
		}
		switch p.Kind {
		case "error":
			errs++
			j.add(runner.Fail, codeSchemaError, kp, fmt.Sprintf("%s %s, per the installed cloud-init's schema", shown, p.Msg), "", "",
				codeSchemaError.Fixf("key", shown),
				"schema", f.SchemaFile, "cloud_init_path", p.CIPath, "source", src)
		case "deprecation":
			deps++
			j.add(runner.Warn, codeDeprecated, kp, fmt.Sprintf("%s is %s", shown, p.Msg), "", "",
				codeDeprecated.Fixf("key", shown),
				"schema", f.SchemaFile, "cloud_init_path", p.CIPath, "source", src)
		case "unknown-key":
			unknown++
			fix := codeUnknownKey.Fixf("key", kp)
			if p.Suggest != "" {
				fix = codeUnknownKey.CaseFix("when a known key is spelt alike", "key", kp, "suggestion", p.Suggest)
			}
			j.add(runner.Fail, codeUnknownKey, kp, fmt.Sprintf("%s: %s", kp, p.Msg), "", "", fix,
				"schema", f.SchemaFile, "suggestion", p.Suggest, "source", src)
		}
	}
	if errs+deps+unknown == 0 {
		j.add(runner.Pass, codeSchemaValid, "", fmt.Sprintf("user-data is valid under the installed cloud-init's schema and uses only keys it knows (%d top-level keys)", len(f.UserData.Value)), "", "", "",
			"schema", f.SchemaFile, "validated_in", f.SchemaTime.Round(1000).String())
	}
}

// elsewhere are keys other checks judge.
var elsewhere = map[string]string{
	"hostname": "hostname", "fqdn": "hostname", "manage_etc_hosts": "hostname", "prefer_fqdn_over_hostname": "hostname",
	"preserve_hostname": "hostname", "growpart": "disk-size", "resize_rootfs": "disk-size",
}

// judged are the keys this check compares with the system.
var judged = map[string]bool{
	"users": true, "groups": true, "user": true, "ssh_authorized_keys": true, "disable_root": true, "disable_root_opts": true,
	"ssh_pwauth": true, "packages": true, "write_files": true, "runcmd": true, "bootcmd": true,
	"timezone": true, "ntp": true, "mounts": true, "ssh_genkeytypes": true,
}

// notJudgedWhy says why a known key is left out.
var notJudgedWhy = map[string]string{
	"package_update":             "its effect is a refreshed package index, not a state to compare; a failure shows in the cloud-init check",
	"package_upgrade":            "no record says which upgrades were due; a failure shows in the cloud-init check",
	"package_reboot_if_required": "a reboot leaves no state to compare",
	"chpasswd":                   "passwords cannot be verified without the plain text, which must not be read back",
	"password":                   "passwords cannot be verified without the plain text, which must not be read back",
	"apt":                        "apt sources are rewritten by later package operations; not compared",
	"final_message":              "only printed to the console",
	"power_state":                "the guest would be off",
	"ssh_deletekeys":             "its effect is the new host keys, judged by ssh_genkeytypes",
	"locale":                     "not compared yet",
	"keyboard":                   "not compared yet",
	"snap":                       "not compared yet",
	"ca_certs":                   "not compared yet",
	"ca-certs":                   "not compared yet",
	"phone_home":                 "a request to a remote server leaves no local state",
	"merge_how":                  "describes how user-data parts merge, already applied to cloud-config.txt",
	"merge_type":                 "describes how user-data parts merge, already applied to cloud-config.txt",
	"ssh_import_id":              "keys fetched from a key server are not known locally",
}

func (j *judge) leftOut() {
	var elsew, notj []string
	for _, k := range sortedKeys(j.f.UserData.Value) {
		if judged[k] {
			continue
		}
		if c, ok := elsewhere[k]; ok {
			elsew = append(elsew, k+" ("+c+" check)")
			continue
		}
		if unknownKey(j.f, k) {
			continue // reported by the schema
		}
		why := notJudgedWhy[k]
		if why == "" {
			why = "not compared by this check"
		}
		notj = append(notj, k+": "+why)
	}
	if len(elsew) > 0 {
		j.add(runner.Pass, codeElsewhere, "", "judged by other checks, not repeated here: "+strings.Join(elsew, ", "), "", "", "")
	}
	if len(notj) > 0 {
		sort.Strings(notj)
		j.add(runner.Pass, codeNotJudged, "", fmt.Sprintf("%d user-data keys are not compared with the system: %s", len(notj), strings.Join(notj, "; ")), "", "", "")
	}
}

func unknownKey(f *Facts, k string) bool {
	for _, p := range f.SchemaProblems {
		if p.Kind == "unknown-key" && p.Path == k {
			return true
		}
	}
	return false
}
