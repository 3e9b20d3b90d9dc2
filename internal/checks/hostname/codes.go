package hostname

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	codeOK = runner.Code{ID: "hostname-ok", Group: "", Status: "pass",
		Meaning: "The name is valid and, as far as could be checked, agrees with `/etc/hostname` and with what cloud-init set or `hostname.expected`. The message lists what was verified."}
	codeLocalhost = runner.Code{ID: "hostname-localhost", Group: "", Status: "fail",
		Meaning: "The name is empty, `(none)`, `localhost`, `localhost.localdomain` or another `localhost*` placeholder: nothing gave the VM a name, typically because cloud-init did not run or the meta-data has no `local-hostname`.",
		Fix:     "Give the VM a name through meta-data `local-hostname` or user-data `hostname` (and check that cloud-init ran), or run `hostnamectl set-hostname NAME`.",
		RootFix: "Give the VM a name through meta-data `local-hostname` or user-data `hostname` (and check that cloud-init ran), or write it to `/etc/hostname` in the image."}
	codeInvalid = runner.Code{ID: "hostname-invalid", Group: "", Status: "fail",
		Meaning: "The name breaks RFC 1123; the message names the label and the reason (`label 1 \"web_1\" contains '_'`). Many tools (sudo, mail, TLS) reject such names.",
		Fix:     "Rename the VM using only letters, digits and inner hyphens (labels of 1 to 63 characters): correct the name at its source (meta-data `local-hostname` or user-data `hostname`) and run `hostnamectl set-hostname NAME`.",
		RootFix: "Rename the VM using only letters, digits and inner hyphens (labels of 1 to 63 characters): correct the name at its source (meta-data `local-hostname` or user-data `hostname`) and in `/etc/hostname` in the image."}
	codeEtcMissing = runner.Code{ID: "hostname-etc-missing", Group: "", Status: "warn",
		Meaning: "`/etc/hostname` is missing or names nobody, so the kernel name is transient and is lost at reboot. Not reported when cloud-init has `create_hostname_file: false`, which asks for exactly that.",
		Fix:     "Persist the name with `hostnamectl set-hostname {name}`, which writes `/etc/hostname`.",
		RootFix: "Write the host name to `/etc/hostname` in the image."}
	codeEtcMismatch = runner.Code{ID: "hostname-etc-mismatch", Group: "", Status: "warn",
		Meaning: "`/etc/hostname` and the kernel hostname name different hosts: something changed the transient name, or the static name was edited without applying it. The next boot will bring back the static one.",
		Fix:     "Run `hostnamectl set-hostname {kernel_name}` to keep the running name, or `hostnamectl set-hostname {static_name}` to go back to the static one: either sets both the kernel hostname and `/etc/hostname`."}
	codeMetadataMismatch = runner.Code{ID: "hostname-metadata-mismatch", Group: "", Status: "fail, or warn",
		Meaning: "The name differs from what cloud-init was asked for (user-data `hostname`/`fqdn`, meta-data `local-hostname`) or, when that is unknown, from what it applied (`set-hostname`). Something renamed the VM after cloud-init, or the image was cloned without re-running cloud-init. It is a **warn** when the request comes from meta-data alone and user-data could not be read, because user-data may override it.",
		Fix:     "If {requested} is the right name, run `hostnamectl set-hostname {requested}`; otherwise correct meta-data `local-hostname` or user-data `hostname`/`fqdn` and reboot. If the name is managed elsewhere, set `preserve_hostname: true` in user-data.",
		RootFix: "If {requested} is the right name, write it to `/etc/hostname` in the image (the name a clone boots with until cloud-init sets one); otherwise correct meta-data `local-hostname` or user-data `hostname`/`fqdn`. If the name is managed elsewhere, set `preserve_hostname: true` in user-data.",
		Cases: []runner.Case{
			{When: "when user-data could not be read without root", Fix: "Run guestcheck as root so that user-data, which may set its own `hostname` or `preserve_hostname` over meta-data `local-hostname`, can be read and compared."},
			{When: "when user-data could not be read as root", Fix: "Repair the user-data file that the `hostname-file-unreadable` finding names, so that its `hostname` or `preserve_hostname`, which may override meta-data `local-hostname`, can be read and compared."},
		}}
	codeExpectedMismatch = runner.Code{ID: "hostname-expected-mismatch", Group: "", Status: "fail",
		Meaning: "`hostname.expected` is set and the name differs from it.",
		Fix:     "Run `hostnamectl set-hostname {expected}` and correct the name the platform passes in meta-data, or correct `hostname.expected` if it is wrong.",
		RootFix: "Write {expected} to `/etc/hostname` in the image and correct the name the platform passes in meta-data, or correct `hostname.expected` if it is wrong."}
	codePreserved = runner.Code{ID: "hostname-preserved", Group: "", Status: "pass",
		Meaning: "`preserve_hostname: true` is in effect (the message names the file), so the name is not compared with meta-data."}
	codeNoMetadata = runner.Code{ID: "hostname-no-metadata", Group: "", Status: "pass",
		Meaning: "No cloud-init hostname data and no `hostname.expected`: there is nothing to compare the name with."}
	codeResolves = runner.Code{ID: "hostname-resolves", Group: "", Status: "pass",
		Meaning: "The name resolves to a local address; the message says the path: `via /etc/hosts line N` or `via DNS`. Off the live system a non-loopback address cannot be checked against interfaces and the message says so."}
	codeResolvesRemote = runner.Code{ID: "hostname-resolves-remote", Group: "", Status: "warn",
		Meaning: "The name resolves, but not to loopback or one of this VM's addresses: usually a stale `/etc/hosts` line baked into the template, or a DNS record for another machine.",
		Fix:     "Point {name} at `127.0.1.1` or this VM's own address in `/etc/hosts` instead of {addresses} (a stale entry often comes from the template), or correct its DNS record."}
	codeUnresolvable = runner.Code{ID: "hostname-unresolvable", Group: "", Status: "warn",
		Meaning: "The name resolves through neither `/etc/hosts` nor DNS. sudo prints \"unable to resolve host\" and waits for DNS timeouts; mail and other programs that look up the local name stall. A malformed `/etc/hosts` line meant for the name is pointed out. Off the live system only `/etc/hosts` is consulted.",
		Fix:     "Add the line `127.0.1.1 {fqdn} {short}` to `/etc/hosts` (or set `manage_etc_hosts: true` in user-data) so that sudo and mail do not wait on DNS.",
		Cases: []runner.Case{
			{When: "when a malformed line names it", Fix: "Correct line {line} of `/etc/hosts`, which names {name} but is skipped ({reason}), for instance as `127.0.1.1 {fqdn} {short}`."},
		}}
	codeNSSOnly = runner.Code{ID: "hostname-nss-only", Group: "", Status: "pass",
		Meaning: "Neither `/etc/hosts` nor DNS resolves the name, but `nsswitch.conf` lists an NSS module that synthesises it (`myhostname`, or `resolve` with systemd-resolved) and its library is installed. glibc programs such as sudo resolve the name; guestcheck, a static binary, cannot load NSS modules to do the same. If the module is listed but not installed, the result is `hostname-unresolvable` instead."}
	codeFileUnreadable = runner.Code{ID: "hostname-file-unreadable", Group: "", Status: "error",
		Meaning: "A file the check needs could not be used: unreadable, or truncated/garbage JSON or YAML, or a field of the wrong type. The message names the file and the reason, e.g. `/run/cloud-init/instance-data.json: unexpected end of JSON input`. The rest of the check still reports with what remains.",
		Fix:     "Repair or remove {file} ({reason}) so that the hostname can be verified against it.",
		Cases: []runner.Case{
			{When: "when the kernel hostname cannot be read", Fix: "Make sure `/proc` is mounted and readable by the user that runs guestcheck ({file}: {reason}), then run it again."},
		}}
	codeConfigInvalid = runner.Code{ID: "hostname-config-invalid", Group: "", Status: "error",
		Meaning: "`hostname.expected` is not a valid host name, so nothing can match it.",
		Fix:     "Correct `hostname.expected` ({expected}) in the guestcheck configuration file to a valid host name: letters, digits and inner hyphens, labels of 1 to 63 characters."}
	codeInterrupted = runner.Code{ID: "hostname-interrupted", Group: "", Status: "error",
		Meaning: "The check's deadline expired before name resolution finished (slow or unreachable DNS).",
		Fix:     "Raise `checks.hostname.timeout` in the guestcheck configuration file if DNS is slow here, and read the `dns` check's findings for why the nameservers do not answer in time."}
	codeTemplate = runner.Code{ID: "hostname-template", Group: "", Status: "pass",
		Meaning: "In a sealed template (network-identity's rule, decided once in internal/fact/identity; detail `template` says why) `/etc/hostname` is missing or names nobody, as sealprep's `hostname` operation leaves it: each clone takes its name from cloud-init or DHCP."}
	codeTemplateNamed = runner.Code{ID: "hostname-template-named", Group: "", Status: "warn",
		Meaning: "In a sealed template `/etc/hostname` names a host (or, where there is no `/etc/hostname`, SUSE's `/etc/HOSTNAME`; the message names the file): every clone claims that name until cloud-init or DHCP renames it. Detail `template`.",
		Fix:     "Empty `{file}` in the image, or re-seal the image with sealprep (its `hostname` operation)."}
)

// Codes lists every finding code the hostname check reports, in the order
// of its reference page.
var Codes = []runner.Code{
	codeOK, codeLocalhost, codeInvalid,
	codeEtcMissing, codeEtcMismatch,
	codeMetadataMismatch, codeExpectedMismatch,
	codePreserved, codeNoMetadata,
	codeResolves, codeResolvesRemote,
	codeUnresolvable, codeNSSOnly,
	codeFileUnreadable, codeConfigInvalid,
	codeInterrupted,
	codeTemplate, codeTemplateNamed,
}
