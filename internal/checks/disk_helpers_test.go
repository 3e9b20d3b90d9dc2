package checks

// Temporary: the fixtures disksize_test.go shares with the fstab tests,
// which moved to internal/disk; they follow disk-size there.

import (
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/disk/blocktest"
	"github.com/guestcheck/guestcheck/internal/fs"
)

const (
	tRootUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000001"
	tDataUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000002"
	tLogsUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000003"
	tCloneUUID = "0a1b2c3d-4e5f-4a6b-8c7d-000000000004"
	tRootPart  = "66666666-7777-4888-8999-aaaaaaaaaaaa"
)

func diskExt4(uuid, label string, mib uint64) []byte {
	return blocktest.Ext{Type: "ext4", UUID: uuid, Label: label, Blocks: mib * 256, LogBlockSize: 2}.Image()
}

func diskEnv(t *testing.T, dir string, live bool) *check.Env {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &check.Env{Root: r, Live: live, Config: config.Default(), Now: time.Now, IsRoot: os.Geteuid() == 0}
}

func diskCodes(fs []check.Finding) string {
	var c []string
	for _, f := range fs {
		c = append(c, string(f.Status)+":"+f.Code)
	}
	sort.Strings(c)
	return strings.Join(c, " ")
}

// diskConventions holds every finding to the framework's rules.
func diskConventions(t *testing.T, c check.Check, fs []check.Finding) {
	t.Helper()
	declared := map[string]bool{}
	for _, code := range c.Codes {
		declared[code] = true
	}
	for _, f := range fs {
		if !declared[f.Code] || !f.Status.Valid() {
			t.Errorf("undeclared code or bad status: %+v", f)
		}
		if f.Message == "" || strings.HasSuffix(f.Message, ".") || strings.Contains(f.Message, "\n") {
			t.Errorf("message must be one line without a trailing period: %q", f.Message)
		}
		if f.Status != check.Pass && f.Status != check.Skip && f.Remediation == "" {
			t.Errorf("%s %s has no remediation", f.Status, f.Code)
		}
		for k := range f.Detail {
			if strings.ToLower(k) != k || strings.ContainsAny(k, " -") {
				t.Errorf("detail key %q is not snake_case", k)
			}
		}
	}
}

// hostEnv is an Env on the real machine, as guestcheck runs in a VM.
func hostEnv(t *testing.T) *check.Env {
	t.Helper()
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	return &check.Env{Root: r, Live: true, Config: config.Default(), Now: time.Now, IsRoot: true}
}
