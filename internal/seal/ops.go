package seal

import (
	"errors"
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// All lists every operation in execution order, which is also the order
// `sealprep list` shows within the defaults and within the opt-in ones
// (ListOrder). The order is chosen so that a run killed at any
// point leaves a root no worse for a clone than an unsealed one:
//   - template-record writes what the template's host keys and machine
//     ID were before ssh-host-keys and machine-id clear them;
//   - ssh-host-keys installs its regenerator before it removes a key;
//   - cloud-init, crash-data, journal and login-records come before
//     logfiles, which then finds their files gone instead of truncating
//     them first;
//   - machine-id comes last, so an empty /etc/machine-id also means that
//     everything before it was done.
var All = []Operation{
	opCloudInit,
	opTemplateRecord,
	opSSHHostKeys,
	opHostname,
	opNetMACPins,
	opDHCPLeases,
	opNMIdentity,
	opRandomSeed,
	opSystemdCredentialSecret,
	opHostCredentials,
	opMachineIDCmdline,
	opMachineIDCredential,
	opLVMDevicesFile,
	opCrashData,
	opJournal,
	opLoginRecords,
	opLogfiles,
	opShellHistory,
	opTmp,
	opPasswdBackups,
	opPackageCache,
	// Opt-in.
	opCloudInitInstallerPins,
	opCloudInitSeed,
	opAuthorizedKeys,
	opResolvConf,
	opCronSpool,
	opMailSpool,
	opNMConnections,
	opMachineInfo,
	opRootPasswordLock,
	opSELinuxAutorelabel,
	// Last on purpose, see above.
	opMachineID,
}

// Select resolves an --ops spec against all. The spec is a comma-separated
// list read left to right: "defaults" adds the default operations, "all"
// every operation, "id" or "+id" adds one, "-id" removes one. A spec that
// starts with "+id" or "-id" starts from the defaults, so "-tmp" means the
// defaults without tmp; one that starts with a bare ID is an explicit list.
// The result keeps the order of all. Unknown IDs are errors.
func Select(all []Operation, spec string) ([]Operation, error) {
	known := map[string]bool{}
	for _, op := range all {
		known[op.ID] = true
	}
	var toks []string
	for _, t := range strings.Split(spec, ",") {
		if t = strings.TrimSpace(t); t != "" {
			toks = append(toks, t)
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("--ops: empty operation list")
	}
	on := map[string]bool{}
	addDefaults := func() {
		for _, op := range all {
			if op.Default {
				on[op.ID] = true
			}
		}
	}
	if t := toks[0]; strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		addDefaults()
	}
	for _, t := range toks {
		switch {
		case t == "defaults":
			addDefaults()
		case t == "all":
			for _, op := range all {
				on[op.ID] = true
			}
		case strings.HasPrefix(t, "-"):
			id := t[1:]
			if !known[id] {
				return nil, unknownOp(all, id)
			}
			delete(on, id)
		default:
			id := strings.TrimPrefix(t, "+")
			if !known[id] {
				return nil, unknownOp(all, id)
			}
			on[id] = true
		}
	}
	var out []Operation
	for _, op := range all {
		if on[op.ID] {
			out = append(out, op)
		}
	}
	if len(out) == 0 && len(all) > 0 {
		return nil, fmt.Errorf("--ops %s: no operation left to run", spec)
	}
	return out, nil
}

// unknownOp is the error for an operation ID sealprep does not have, with
// the closest one suggested.
func unknownOp(all []Operation, id string) error {
	var ids []string
	for _, op := range all {
		ids = append(ids, op.ID)
	}
	msg := fmt.Sprintf("--ops: unknown operation %q", id)
	if s := suggest.Suggest(id, append(ids, "defaults", "all")); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return errors.New(msg + " (see sealprep list)")
}
