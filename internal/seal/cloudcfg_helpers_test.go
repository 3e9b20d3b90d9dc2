package seal

import (
	"errors"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

// cloudFile is one system configuration file for parseCloudConfig.
type cloudFile struct {
	name string
	data []byte
}

// parseCloudConfig is Planner.cloudConfig without a root: cloudcfg.Load
// over cloud.cfg and its drop-ins (in name order), then readCloudConfig,
// with the errors of the files cloud-init skips.
func parseCloudConfig(base cloudFile, dropins []cloudFile) (cloudConfig, []*cloudconfig.Error) {
	files := []cloudcfg.File{{Path: base.name, Data: base.data}}
	for _, d := range dropins {
		files = append(files, cloudcfg.File{Path: d.name, Data: d.data})
	}
	s := cloudcfg.Load(cloudcfg.System{Files: files})
	var errs []*cloudconfig.Error
	for _, f := range s.Files {
		var ce *cloudconfig.Error
		if errors.As(f.ParseErr, &ce) {
			errs = append(errs, ce)
		}
	}
	return readCloudConfig(s.Merged), errs
}
