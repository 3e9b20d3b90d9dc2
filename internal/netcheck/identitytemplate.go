package netcheck

import (
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/identity"
	"github.com/guestcheck/guestcheck/internal/sealrecord"
)

// JudgeTemplateMachineID flags a machine ID that sealprep recorded as the
// template's: the image was sealed without machine-id, or the ID was put
// back. Only hashes are compared; the record never holds the ID.
func JudgeTemplateMachineID(ev CloneEvidence) []check.Finding {
	if ev.TemplateErr != nil {
		return []check.Finding{check.New(check.Warn, CodeIDTemplateRecordBad,
			"sealprep's template record cannot be read, so a clone that kept the template's identity is not named: "+ev.TemplateErr.Error(),
			map[string]string{"record": sealrecord.Path},
			"Re-seal the template with a current sealprep (it rewrites "+sealrecord.Path+"), or remove the file")}
	}
	t := ev.Template
	if t == nil || ev.MachineIDKind != identity.Valid || t.MachineIDSHA256 == "" ||
		sealrecord.HashMachineID(ev.MachineID) != t.MachineIDSHA256 {
		return nil
	}
	how := "machine-id not run"
	if t.MachineIDCleared {
		how = "machine-id cleared it, and it is back"
	}
	return []check.Finding{check.New(check.Fail, CodeIDMachineIDTemplate,
		"/etc/machine-id is the template's machine ID ("+t.Describe()+", "+how+"): every clone of the image shares it, and with it DHCP DUIDs, IPv6 addresses and journal directories",
		map[string]string{"record": sealrecord.Path, "sealed_at": t.SealedAt.UTC().Format(time.RFC3339),
			"sealprep_version": t.SealprepVersion, "machine_id_sha256": t.MachineIDSHA256},
		"Give this machine its own ID: `rm /etc/machine-id && systemd-machine-id-setup`, then reboot; seal the template with the machine-id operation so that later clones get their own")}
}
