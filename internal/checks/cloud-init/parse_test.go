package cloudinit

import (
	"testing"
)

func TestModuleName(t *testing.T) {
	for msg, want := range map[string]string{
		"Running module write_files (<module 'cloudinit.config.cc_write_files' from '/usr/lib/python3/dist-packages/cloudinit/config/cc_write_files.py'>) failed": "write_files",
		"('scripts_user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))":                                                                 "scripts_user",
		"('write-files', FileNotFoundError(2, 'No such file or directory'))":                                                                                      "write-files",
		"Running module write-files (<module 'cloudinit.config.cc_write_files' from 'x'>) failed":                                                                 "write-files",
		"failed in cloudinit.config.cc_mounts.handle":                                                                                                             "mounts",
		"Consuming user data failed!": "",
		"sys.exit(1) called":          "",
	} {
		if got := ModuleName(msg); got != want {
			t.Errorf("ModuleName(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestNormalizeDatasource(t *testing.T) {
	for in, want := range map[string]string{
		"DataSourceNoCloud [seed=/dev/vdb][dsmode=net]": "nocloud",
		"DataSourceOpenStackLocal [net,ver=2]":          "openstacklocal",
		"DataSourceNone":                                "none",
		"":                                              "",
	} {
		if got := NormalizeDatasource(in); got != want {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
}
