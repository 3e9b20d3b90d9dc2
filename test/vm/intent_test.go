//go:build vmtest

package vm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cloud-config scenarios: the article's user-data on a healthy guest,
// where the cloud-config check passes on every item, and a broken guest
// whose five faults each fail (or warn) under their own key path. Both run
// on Debian 12 and Debian 13. The user-data is the one the real captures in
// internal/checks/cloud-config/testdata/real were made with.

// intentSecrets are the values planted in the broken user-data; no report
// may carry them.
var intentSecrets = []string{
	"PlantedPlainSecret-4k", "PlantedChpasswdSecret-9z", "PlantedWriteFilesSecret-3x",
	"$6$vTpNLUd9Tl5WqNPV$6FYmGAoGc/4dQcU3WcOS12Jla/YFqOxHqHIC9ndCBIzdC6a/tN9tkp2reCyFS0oMs8cfMrBiVGShKiq5kslWf/",
	"AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD",
	"AAAAC3NzaC1lZDI1NTE5AAAAIAS4e2qSwZNb8rkGRKACDvwz1g9lbSJ3oAPuMplJx6BK",
}

// releases are the Debian releases the scenarios run on: the harness's own
// image (Debian 12) and the Debian image of the network-stack guests
// (Debian 13, netintent_test.go), so that a cold cache runs mmdebstrap for
// trixie once. That image renders cloud-init's network-config for
// ifupdown without net-tools, so its guests get the network-config of the
// healthy Debian stack guest, which declares no route metric.
var releases = []struct {
	name  string
	image func(ctx context.Context, t *testing.T, deb string) (image, string)
}{
	{"debian12", func(ctx context.Context, t *testing.T, deb string) (image, string) {
		return buildImage(ctx, t, cacheDir(), deb), ""
	}},
	{"debian13", func(ctx context.Context, t *testing.T, deb string) (image, string) {
		return netImages(ctx, t, cacheDir(), deb, "debian")["debian"], netConfig("debian", false)
	}},
}

func intentUserData(t *testing.T, c string) string {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "cloudconfig", "cases", "debian12-"+c, "user-data"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVMIntent boots, per release, the healthy and the broken guest.
func TestVMIntent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root: run `make vm-test` as root")
	}
	ctx, cancel := testContext(t)
	defer cancel()
	deb := debPath(t)
	for _, rel := range releases {
		t.Run(rel.name, func(t *testing.T) {
			longScenario(t)
			img, netcfg := rel.image(ctx, t, deb)
			t.Run("healthy", func(t *testing.T) { t.Parallel(); intentHealthy(ctx, t, img, netcfg, rel.name) })
			t.Run("broken", func(t *testing.T) { t.Parallel(); intentBroken(ctx, t, img, netcfg, rel.name) })
		})
	}
}

func intentGuest(ctx context.Context, t *testing.T, img image, netcfg, name, ud string) (*VM, *CheckResult, string) {
	v := startVM(ctx, t, spec{
		Name: name, Base: img.Root, Image: img,
		InstanceID: "gc-" + name + "-1", Hostname: "demo-linux-01",
		UserData:      ud,
		NetworkConfig: netcfg,
		NICs:          []nic{mgmtNIC},
	})
	r, _ := bootReport(ctx, t, v)
	raw := readGuest(ctx, t, v, "/run/guestcheck/report.json")
	for _, s := range intentSecrets {
		if strings.Contains(raw, s) {
			t.Errorf("%s: the report carries the planted secret %q", name, s)
		}
	}
	if txt := readGuest(ctx, t, v, "/run/guestcheck/report.txt"); txt != "" {
		for _, s := range intentSecrets {
			if strings.Contains(txt, s) {
				t.Errorf("%s: report.txt carries the planted secret %q", name, s)
			}
		}
	}
	c, err := checkOf(r, "cloud-config")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v, c, raw
}

func intentHealthy(ctx context.Context, t *testing.T, img image, netcfg, rel string) {
	_, c, _ := intentGuest(ctx, t, img, netcfg, rel+"-intent-healthy", intentUserData(t, "healthy"))
	if c.Status != "pass" {
		t.Errorf("cloud-config is %s on the article's user-data:\n  %s", c.Status, c)
	}
	for _, f := range c.Findings {
		if f.Status != "pass" {
			t.Errorf("%s %s: %s", f.Status, f.Code, f.Message)
		}
	}
	for _, code := range []string{"cloud-config-schema-valid", "cloud-config-user-ok", "cloud-config-ssh-pwauth-ok",
		"cloud-config-package-installed", "cloud-config-script-ran"} {
		if c.Finding(code) == nil {
			t.Errorf("no %s finding:\n  %s", code, c)
		}
	}
}

func intentBroken(ctx context.Context, t *testing.T, img image, netcfg, rel string) {
	_, c, _ := intentGuest(ctx, t, img, netcfg, rel+"-intent-broken", intentUserData(t, "broken"))
	if c.Status != "fail" {
		t.Errorf("cloud-config is %s on the broken user-data:\n  %s", c.Status, c)
	}
	want := map[string]string{
		"cloud-config-package-missing":     "packages[1]",
		"cloud-config-file-changed":        "write_files[0].content",
		"cloud-config-key-strictmodes":     "users[0].ssh_authorized_keys",
		"cloud-config-unknown-key":         "pacakges",
		"cloud-config-ssh-pwauth-mismatch": "ssh_pwauth",
	}
	for code, kp := range want {
		found := false
		for _, f := range c.Findings {
			if f.Code == code && f.Detail["key_path"] == kp && (f.Status == "fail" || f.Status == "warn") {
				found = true
			}
		}
		if !found {
			t.Errorf("no failing %s at %s:\n  %s", code, kp, c)
		}
	}
	for _, f := range c.Findings {
		if (f.Status == "fail" || f.Status == "warn") && f.Detail["key_path"] == "" {
			t.Errorf("%s %s names no key path: %s", f.Status, f.Code, f.Message)
		}
	}
}
