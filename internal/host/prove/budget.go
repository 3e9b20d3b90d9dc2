package prove

import (
	"fmt"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// BootTime is how long one boot of a clone took to its verdict, and what
// guestcheck's systemd check said of the boot's own times.
type BootTime struct {
	// ToVerdictMS runs from QEMU's start (for a reboot, from the reboot's
	// request) to guestcheck's verdict: its report through the agent, its
	// summary line on the console, or cloud-init's end without guestcheck.
	ToVerdictMS int64 `json:"to_verdict_ms" schema:"req,min=0"`
	// Code is guestcheck's finding on the boot's times (systemd-boot-time
	// or systemd-boot-slow), "" when its report had none.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// KernelToLastMilestone, Slowest and GuestBudget are the finding's
	// details kernel_to_last_milestone, slowest_on_critical_chain and
	// budget.
	KernelToLastMilestone string `json:"kernel_to_last_milestone,omitempty"`
	Slowest               string `json:"slowest_on_critical_chain,omitempty"`
	GuestBudget           string `json:"guest_budget,omitempty"`
}

// Boot time finding codes of guestcheck's systemd check.
var bootTimeCodes = []string{"systemd-boot-time", "systemd-boot-slow"}

// bootTimeOf takes guestcheck's boot-time finding from its report.
func bootTimeOf(r reportv1.Report, toVerdict time.Duration) *BootTime {
	bt := &BootTime{ToVerdictMS: ms(toVerdict)}
	for _, c := range r.Checks {
		for _, f := range c.Findings {
			for _, code := range bootTimeCodes {
				if f.Code == code {
					bt.Code, bt.Message = code, cleanLine(f.Message)
					bt.KernelToLastMilestone = cleanLine(f.Detail["kernel_to_last_milestone"])
					bt.Slowest = cleanLine(f.Detail["slowest_on_critical_chain"])
					bt.GuestBudget = cleanLine(f.Detail["budget"])
				}
			}
		}
	}
	return bt
}

// budgetFailure fails a boot (step "" or StepReboot) that took longer than
// budget to its verdict, naming the slowest units guestcheck saw.
func budgetFailure(clone, step string, bt *BootTime, budget time.Duration) (Failure, bool) {
	if budget <= 0 || bt == nil || time.Duration(bt.ToVerdictMS)*time.Millisecond <= budget {
		return Failure{}, false
	}
	took := (time.Duration(bt.ToVerdictMS) * time.Millisecond).Round(100 * time.Millisecond)
	what := "from QEMU's start"
	if step == StepReboot {
		what = "from the reboot"
	}
	msg := fmt.Sprintf("took %s %s to guestcheck's verdict, over the --boot-budget of %s", took, what, budget)
	if bt.Slowest != "" {
		msg += "; slowest units on the boot's critical chain: " + bt.Slowest
	} else {
		msg += "; guestcheck's report named no slowest units (no systemd boot-time finding)"
	}
	return Failure{Clone: clone, Step: step, Message: msg,
		Fix: "make the slowest units start faster or drop them from the boot (systemd-analyze critical-chain and systemd-analyze blame in a clone show them); under TCG, without KVM, boots take minutes: give a larger --boot-budget"}, true
}

// budgetFailures are the boots over budget, each clone's first boot then
// its reboot.
func budgetFailures(clones []CloneResult, budget time.Duration) []Failure {
	var out []Failure
	for _, c := range clones {
		if f, ok := budgetFailure(c.Name, "", c.BootTime, budget); ok {
			out = append(out, f)
		}
		if c.Reboot != nil {
			if f, ok := budgetFailure(c.Name, StepReboot, c.Reboot.BootTime, budget); ok {
				out = append(out, f)
			}
		}
	}
	return out
}
