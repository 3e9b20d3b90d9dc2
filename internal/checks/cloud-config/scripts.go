package intent

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

const seeCloudInit = "See the cloud-init check's cloud-init-module-error finding and /var/log/cloud-init-output.log for the command's output"

func (j *judge) scripts() {
	f := j.f
	if _, ok := f.UserData.Value["runcmd"]; ok {
		j.runcmd()
	}
	if _, ok := f.UserData.Value["bootcmd"]; ok {
		switch e := f.moduleFailed("bootcmd"); {
		case e != "":
			j.add(runner.Warn, CodeScriptFailed, "bootcmd", "bootcmd ran but failed; the cloud-init check reports the error, not repeated here", "", "", seeCloudInit)
		case f.StatusErr != nil:
			j.add(runner.Skip, CodeScriptRan, "bootcmd", "bootcmd not judged: cloud-init's status.json cannot be read ("+f.StatusErr.Error()+"), and bootcmd leaves no script file", "", "", "")
		default:
			j.add(runner.Pass, CodeScriptRan, "bootcmd", "cloud-init recorded no bootcmd error this boot (bootcmd runs from a temporary file at every boot, so no script is left to check)", "", "", "")
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
		j.add(runner.Fail, CodeScriptNotRun, "runcmd", fmt.Sprintf("runcmd never ran: %s is missing and %s", shown, why), "a runcmd script", "missing",
			"Check that runcmd is in cloud_config_modules of /etc/cloud/cloud.cfg and read /var/log/cloud-init.log")
	case f.moduleFailed("scripts-user", "runcmd") != "":
		j.add(runner.Warn, CodeScriptFailed, "runcmd", "runcmd ran but a command failed; the cloud-init check reports the error, not repeated here", "", "", seeCloudInit)
	case !ran && f.Inside:
		j.add(runner.Pass, CodeScriptRan, "runcmd", "runcmd is running now: cloud-init started this guestcheck from it", "", "", "", "script", shown)
	case !ran:
		j.add(runner.Fail, CodeScriptNotRun, "runcmd", fmt.Sprintf("%s was written but scripts-user has not run it (no config_scripts_user semaphore): the final stage did not run or has not finished", shown),
			"runcmd run in the final stage", "written, not run",
			runner.Fix(f.Live, "Check `systemctl status cloud-final.service` and /var/log/cloud-init.log; re-run with --wait while the guest is still booting",
				"Read /var/log/cloud-init.log in the image: it was captured before the final stage ran, so capture it after cloud-init finished and re-seal it with sealprep"))
	default:
		j.add(runner.Pass, CodeScriptRan, "runcmd", fmt.Sprintf("runcmd ran: %s exists and scripts-user ran it this instance with no error recorded", shown), "", "", "",
			"semaphore", f.Display(InstanceLink+"/sem/config_scripts_user"))
	}
}
