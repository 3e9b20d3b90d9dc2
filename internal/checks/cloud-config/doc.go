// Package cloudconfig is the cloud-config check: it compares what the
// instance's user-data asked cloud-init for with the system cloud-init
// produced. Gather reads the facts through the guest root into a Facts
// value; the judge functions are pure functions of Facts. Schema
// validation uses the guest's own cloud-init schema, so the verdict
// follows the installed cloud-init version. No finding carries a
// password, a hash, write_files content or a key body.
package cloudconfig
