package cloudconfig

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// moduleFailed returns the first status.json error that names one of
// the modules.
func (f *Facts) moduleFailed(mods ...string) string {
	for _, e := range f.ModuleErrors {
		m := strings.ReplaceAll(cloudinit.ModuleName(e), "_", "-")
		for _, want := range mods {
			if m == want || (m == "" && strings.Contains(e, want)) {
				return e
			}
		}
	}
	return ""
}

func (j *judge) scripts() {
	f := j.f
	if _, ok := f.UserData.Value["runcmd"]; ok {
		j.runcmd()
	}
	if _, ok := f.UserData.Value["bootcmd"]; ok {
		switch e := f.moduleFailed("bootcmd"); {
		case e != "":
			j.add(runner.Warn, codeScriptFailed, "bootcmd", "bootcmd ran but failed; the cloud-init check reports the error, not repeated here", "", "", codeScriptFailed.Fixf())
		case f.StatusErr != nil:
			j.add(runner.Skip, codeScriptRan, "bootcmd", "bootcmd not judged: cloud-init's status.json cannot be read ("+f.StatusErr.Error()+"), and bootcmd leaves no script file", "", "", "")
		default:
			j.add(runner.Pass, codeScriptRan, "bootcmd", "cloud-init recorded no bootcmd error this boot (bootcmd runs from a temporary file at every boot, so no script is left to check)", "", "", "")
		}
	}
}

func (j *judge) runcmd() {
	f := j.f
	script := f.Files[InstanceLink+"/scripts/runcmd"]
	_, wrote := f.Semaphores["config_runcmd"]
	_, ran := f.Semaphores["config_scripts_user"]
	shown := f.Display(InstanceLink + "/scripts/runcmd")
	switch {
	case !script.Exists:
		why := "the runcmd module did not run (no config_runcmd semaphore)"
		if wrote {
			why = "the runcmd module ran but wrote no script"
		}
		j.add(runner.Fail, codeScriptNotRun, "runcmd", fmt.Sprintf("runcmd never ran: %s is missing and %s", shown, why), "a runcmd script", "missing",
			codeScriptNotRun.CaseFix("when the runcmd module did not run"))
	case f.moduleFailed("scripts-user", "runcmd") != "":
		j.add(runner.Warn, codeScriptFailed, "runcmd", "runcmd ran but a command failed; the cloud-init check reports the error, not repeated here", "", "", codeScriptFailed.Fixf())
	case !ran && f.Inside:
		j.add(runner.Pass, codeScriptRan, "runcmd", "runcmd is running now: cloud-init started this guestcheck from it", "", "", "", "script", shown)
	case !ran:
		j.add(runner.Fail, codeScriptNotRun, "runcmd", fmt.Sprintf("%s was written but scripts-user has not run it (no config_scripts_user semaphore): the final stage did not run or has not finished", shown),
			"runcmd run in the final stage", "written, not run",
			codeScriptNotRun.FixOn(f.Live))
	default:
		j.add(runner.Pass, codeScriptRan, "runcmd", fmt.Sprintf("runcmd ran: %s exists and scripts-user ran it this instance with no error recorded", shown), "", "", "",
			"semaphore", f.Display(InstanceLink+"/sem/config_scripts_user"))
	}
}
