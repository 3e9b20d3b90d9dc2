// Package vmm is the one way sealprep starts QEMU: prove's clones, the
// sealing appliance that --image boots, and the VM test harness all go
// through it, so that a fix to the confinement reaches every one of them.
//
// A QEMU started here runs as a dynamic uid when sealprep is root (Jail),
// under QEMU's seccomp sandbox (Sandbox), in its own process group that a
// kill takes whole, dies with sealprep (PR_SET_PDEATHSIG), is given the
// vetted image layers as descriptors (ChainArgs), and has its own stderr
// kept only to a bound. Monitor is the QMP client that talks to it.
package vmm
