package cloudinittest

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseUnits: units read from a capture, printed back as systemctl
// show prints them, read the same; a block without Id is an error.
func FuzzParseUnits(f *testing.F) {
	f.Add("Id=cloud-init.service\nLoadState=loaded\nActiveState=active\nSubState=exited\nUnitFileState=enabled\n\nId=ssh.service\nActiveState=active\n")
	f.Add("LoadState=loaded\n")
	f.Fuzz(func(t *testing.T, s string) {
		us, err := ParseUnits([]byte(s))
		if err != nil {
			if us != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v with units %+v", err, us)
			}
			return
		}
		var b strings.Builder
		for _, u := range us {
			for _, v := range []string{u.Name, u.LoadState, u.ActiveState, u.SubState, u.UnitFileState} {
				if v != strings.TrimSpace(v) || strings.Contains(v, "\n") {
					return // not something systemctl prints
				}
			}
			if u.Name == "" || u.LoadState == "" {
				t.Fatalf("unit %+v without Id or LoadState", u)
			}
			b.WriteString("Id=" + u.Name + "\nLoadState=" + u.LoadState + "\nActiveState=" + u.ActiveState +
				"\nSubState=" + u.SubState + "\nUnitFileState=" + u.UnitFileState + "\n\n")
		}
		back, err := ParseUnits([]byte(b.String()))
		if err != nil || !reflect.DeepEqual(back, us) {
			t.Fatalf("%+v printed as %q reads %+v, %v", us, b.String(), back, err)
		}
	})
}
