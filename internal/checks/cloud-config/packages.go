package cloudconfig

import (
	"fmt"
	"strings"

	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/dpkgstatus"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// pkgReq is one entry of packages.
type pkgReq struct {
	Path, Name, Version string
}

// packageList reads packages as cc_package_update_upgrade_install does:
// "name", "name=version" or [name, version]. Entries of the 25.x
// per-manager form ({apt: [...], snap: [...]}) keep their apt items.
func packageList(v any) []pkgReq {
	var out []pkgReq
	l, _ := v.([]any)
	for i, e := range l {
		kp := cc.Index("packages", i)
		switch x := e.(type) {
		case string:
			n, ver, _ := strings.Cut(x, "=")
			out = append(out, pkgReq{kp, strings.TrimSpace(n), strings.TrimSpace(ver)})
		case []any:
			if len(x) >= 1 {
				r := pkgReq{Path: kp, Name: cc.PyStr(x[0])}
				if len(x) >= 2 {
					r.Version = cc.PyStr(x[1])
				}
				out = append(out, r)
			}
		case map[string]any:
			if apt, ok := x["apt"].([]any); ok {
				for k, a := range packageList(apt) {
					a.Path = cc.Index(cc.Join(kp, "apt"), k)
					out = append(out, a)
				}
			}
		}
	}
	return out
}

func (j *judge) packages() {
	f := j.f
	v, ok := f.UserData.Value["packages"]
	if !ok {
		return
	}
	reqs := packageList(v)
	switch {
	case f.DpkgFound && f.DpkgErr != nil && f.Dpkg == nil:
		j.add(runner.Error, codeUnreadable, "packages", "packages not judged: "+f.DpkgErr.Error(), "", "", readFix(f.IsRoot, f.Display(dpkgstatus.Path), f.DpkgErr))
		return
	case !f.DpkgFound && f.RPM == nil:
		j.add(runner.Skip, codePackageUnjudged, "packages", "packages not judged: "+f.RPMSkip, "", "", "")
		return
	}
	for _, r := range reqs {
		asked := r.Name
		if r.Version != "" {
			asked += "=" + r.Version
		}
		if f.RPM != nil {
			got := f.RPM[r.Name]
			if got == "" {
				j.add(runner.Fail, codePackageMissing, r.Path, fmt.Sprintf("package %s is not installed (rpm -q)", r.Name), asked, "not installed",
					codePackageMissing.CaseFix("on an rpm system", "package", r.Name))
				continue
			}
			j.add(runner.Pass, codePackageOK, r.Path, "package "+r.Name+" is installed: "+got, "", "", "")
			continue
		}
		stanzas := dpkgstatus.Find(f.Dpkg, r.Name)
		var inst *dpkgstatus.Package
		states := []string{}
		for i := range stanzas {
			states = append(states, stanzas[i].Status())
			if stanzas[i].Installed() && inst == nil {
				inst = &stanzas[i]
			}
		}
		if inst == nil {
			// A virtual package is satisfied by a provider.
			for i := range f.Dpkg {
				if f.Dpkg[i].Installed() && contains(f.Dpkg[i].Provides, r.Name) && r.Version == "" {
					inst = &f.Dpkg[i]
				}
			}
		}
		switch {
		case inst == nil:
			found := "not in " + dpkgstatus.Path
			if len(states) > 0 {
				found = "dpkg status: " + strings.Join(states, "; ")
			}
			j.add(runner.Fail, codePackageMissing, r.Path, fmt.Sprintf("package %s is not installed (%s)", r.Name, found), asked, found,
				codePackageMissing.FixOn(f.Live, "package", asked))
		case r.Version != "" && !dpkgstatus.VersionMatches(inst.Version, r.Version):
			j.add(runner.Fail, codePackageVersion, r.Path, fmt.Sprintf("package %s is installed at %s, not the pinned %s", r.Name, inst.Version, r.Version), asked, inst.Name+"="+inst.Version,
				codePackageVersion.FixOn(f.Live, "package", asked))
		default:
			what := inst.Name + " " + inst.Version
			if inst.Name != r.Name {
				what += " (provides " + r.Name + ")"
			}
			j.add(runner.Pass, codePackageOK, r.Path, "package "+r.Name+" is installed: "+what, "", "", "")
		}
	}
}
