package cloudinit

// NotReadyCodes are the codes that mean cloud-init is still provisioning
// the machine, whatever their status: an exec readiness probe is not
// ready while the cloud-init check reports one of them.
var NotReadyCodes = []string{codeCIRunning, codeCINotStarted}
