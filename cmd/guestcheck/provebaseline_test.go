package main

import (
	"slices"
	"testing"

	sshcheck "github.com/guestcheck/guestcheck/internal/checks/ssh"
	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestProveBaselineCodes: the codes sealprep prove keeps apart as the
// security baseline are codes the ssh check reports, so a renamed code
// cannot make prove fail templates on a baseline again.
func TestProveBaselineCodes(t *testing.T) {
	ids := runner.IDs(sshcheck.Codes)
	for _, c := range prove.BaselineCodes {
		if !slices.Contains(ids, c) {
			t.Errorf("prove.BaselineCodes has %s, which the ssh check does not report", c)
		}
	}
}
