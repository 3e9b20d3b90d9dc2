# A Packer (QEMU builder) build of a Debian template: it boots a cloud
# image with the NoCloud seed in seed/, installs guestcheck, checks the build
# VM (downloading a JUnit report for CI), and seals it as its last step:
# sealprep removes the machine-id, SSH host keys, cloud-init state, leases,
# logs and history, then powers the VM off itself, so no shutdown-time
# writer recreates them.
#
# Run it from the directory that holds dist/ (the repository after
# `make package`):
#
#   packer build packaging/examples/packer
#
# It writes output-debian/debian.qcow2 (the template),
# reports/guestcheck.xml (the build VM's report) and packer-serial.log (the
# build VM's serial console). With -var sealprep=/usr/sbin/sealprep it then
# proves the template (sealprep prove: two clones booted, healthy and
# distinct) and writes reports/prove.xml.
#
# Written for Packer 1.6.6 (Debian's `apt-get install packer`), which has
# the QEMU builder built in. Packer 1.7 and later load it as a plugin: run
# `packer plugins install github.com/hashicorp/qemu` once, or add
#   packer { required_plugins { qemu = { source = "github.com/hashicorp/qemu", version = ">= 1.1.0" } } }
# (1.6.6 rejects that block).

variable "base_image" {
  type        = string
  default     = "debian-12-genericcloud-amd64.qcow2"
  description = "The cloud image to start from (a path or URL)."
}

variable "format" {
  type        = string
  default     = "qcow2"
  description = "The template's disk format."
}

variable "deb" {
  type        = string
  default     = ""
  description = "The guestcheck package; empty: the one dist/guestcheck_*_amd64.deb that make package wrote."
}

variable "accelerator" {
  type        = string
  default     = ""
  description = "QEMU accelerator; empty: kvm when /dev/kvm opens, else tcg."
}

variable "netdev" {
  type        = string
  default     = "user,id=user.0,hostfwd=tcp:127.0.0.1:{{ .SSHHostPort }}-:22"
  description = "QEMU's -netdev. Keep id=user.0 and the SSH forward; the forward listens on 127.0.0.1 only (Packer's own binds every address) because the build user has a password."
}

variable "serial_log" {
  type        = string
  default     = "packer-serial.log"
  description = "Where the build VM's serial console goes (outside output-debian/, which a failed build removes)."
}

variable "seed_files" {
  type        = list(string)
  default     = []
  description = "Extra files for the NoCloud seed CD, such as a network-config for a network without DHCP."
}

variable "kernel" {
  type        = string
  default     = ""
  description = "For a base image without a boot loader: the kernel to boot directly (with initrd and kernel_append); empty for a cloud image."
}

variable "initrd" {
  type    = string
  default = ""
}

variable "kernel_append" {
  type    = string
  default = "root=/dev/vda rw console=ttyS0"
}

variable "guestcheck_options" {
  type        = string
  default     = ""
  description = "Options of the build VM's check, such as --skip time-sync on a build network without NTP."
}

variable "sealprep_ops" {
  type        = string
  default     = "defaults"
  description = "sealprep's --ops, the same for the plan and the seal."
}

variable "sealprep_apply_options" {
  type        = string
  default     = "--yes"
  description = "More options of the seal (sealprep apply --poweroff): --yes is required, as there is no terminal."
}

variable "sealprep" {
  type        = string
  default     = ""
  description = "The build host's sealprep, for the proof after the build (sealprep prove boots throwaway clones of the template); empty skips the proof, saying so."
}

variable "prove_clones" {
  type        = number
  default     = 2
  description = "How many clones sealprep prove boots, in parallel."
}

locals {
  debs = fileset(path.cwd, "dist/guestcheck_*_amd64.deb")
  # Several packages (or none): the file provisioner then stops the build
  # naming this text as its missing source.
  deb = var.deb != "" ? var.deb : (length(local.debs) == 1 ? sort(local.debs)[0] : "no single dist/guestcheck_*_amd64.deb (found ${length(local.debs)}): run make package, or pass -var deb=PATH")
  kernel_args = var.kernel == "" ? [] : [
    ["-kernel", var.kernel], ["-initrd", var.initrd], ["-append", var.kernel_append],
  ]
  # sealprep prove boots the clones as the build VM booted.
  prove_boot = var.kernel == "" ? "" : "--kernel '${var.kernel}' --initrd '${var.initrd}' --append '${var.kernel_append}'"
}

source "qemu" "debian" {
  iso_url          = var.base_image
  iso_checksum     = "none"
  disk_image       = true
  format           = var.format
  disk_size        = "4G"
  output_directory = "output-debian"
  vm_name          = "debian.${var.format}"
  accelerator      = var.accelerator
  memory           = 1024
  cpus             = 2
  headless         = true
  cd_label         = "cidata"
  cd_files         = concat(["${path.root}/seed/user-data", "${path.root}/seed/meta-data"], var.seed_files)
  # The build user that seed/user-data creates and seal.sh deletes.
  ssh_username = "packer"
  ssh_password = "packer-build"
  ssh_timeout  = "20m"
  qemuargs = concat([
    ["-netdev", var.netdev],
    # The serial console in a file: seal.sh writes a refusal there.
    ["-serial", "file:${var.serial_log}"],
    # The guest agent's channel, which the qemu-guest-agent check looks for.
    ["-device", "virtio-serial"],
    ["-chardev", "socket,id=qga0,path={{ .OutputDir }}/qga.sock,server=on,wait=off"],
    ["-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0"],
  ], local.kernel_args)
  # The seal: seal.sh deletes the build user, then runs sealprep apply
  # --poweroff, which powers the VM off itself; Packer waits for QEMU to
  # exit. On a refusal seal.sh writes "packer-seal: NOT SEALED" to the
  # serial console and powers off unsealed; the post-processor below then
  # fails the build.
  shutdown_command = "sudo sh /tmp/packer-seal.sh packer --ops ${var.sealprep_ops} ${var.sealprep_apply_options}"
  shutdown_timeout = "5m"
}

build {
  sources = ["source.qemu.debian"]

  provisioner "file" {
    source      = "${path.root}/seal.sh"
    destination = "/tmp/packer-seal.sh"
  }

  provisioner "file" {
    source      = local.deb
    destination = "/tmp/guestcheck.deb"
  }

  provisioner "shell" {
    inline = [
      "sudo cloud-init status --wait >/dev/null || true",
      "sudo apt-get install -y /tmp/guestcheck.deb",
      # Check the build VM: the JUnit report for CI, the text report in the
      # build log, the exit code kept for the verdict below, so that the
      # report is downloaded even when the VM is unhealthy.
      "rc=0; sudo guestcheck ${var.guestcheck_options} --output junit:/tmp/guestcheck.xml || rc=$?; echo $rc > /tmp/guestcheck.rc",
    ]
  }

  # CI picks this up as a test report (GitLab: artifacts:reports:junit,
  # Jenkins: junit 'reports/*.xml').
  provisioner "file" {
    direction   = "download"
    source      = "/tmp/guestcheck.xml"
    destination = "reports/guestcheck.xml"
  }

  provisioner "shell" {
    inline = [
      # Now that CI has the report, fail the build when the build VM is not
      # healthy: guestcheck exited 1 (a failure or an error) or 3 (a usage
      # error). Warnings (exit 2) pass, as the build login itself warns
      # (ssh-auth-conditional: password login for the build user); they
      # are in the report. Drop `|| [ "$rc" -eq 2 ]` to fail on them.
      "rc=$(cat /tmp/guestcheck.rc); sudo rm -f /tmp/guestcheck.rc /tmp/guestcheck.xml /tmp/guestcheck.deb; [ \"$rc\" -eq 0 ] || [ \"$rc\" -eq 2 ] || { echo \"guestcheck exited $rc: the build VM is not healthy; its findings are above and in reports/guestcheck.xml\" >&2; exit 1; }",
      # What the seal will remove, here rather than only in shutdown_command:
      # a provisioner's output is in the build log, and its exit status
      # counts, so a refusal (exit 3) fails the build now, with the reason,
      # instead of in the shutdown step, whose exit status Packer ignores.
      "sudo sealprep plan --ops ${var.sealprep_ops}",
    ]
  }

  # Packer takes any exit of QEMU for a finished shutdown. When seal.sh
  # powered the VM off without sealing, fail the build with its lines and
  # remove the unsealed disk, so nothing publishes it.
  post-processor "shell-local" {
    inline = [
      "if grep -q '^packer-seal: NOT SEALED' '${var.serial_log}'; then tr -d '\\r' < '${var.serial_log}' | awk '/^(Refused|Errors|Still present)/ { p = 1 } p && /^$/ { p = 0 } p || /^packer-seal: NOT SEALED/' >&2; rm -f 'output-debian/debian.${var.format}'; exit 1; fi",
    ]
  }

  # The proof: boot throwaway clones of the sealed template (qcow2 overlays;
  # the template is only read) and check that each comes up healthy
  # (guestcheck's boot report) and that no two share a machine-id, SSH host
  # keys, DHCP client identity, hostname, instance-id or address. CI picks
  # up reports/prove.xml like reports/guestcheck.xml; a clone that fails or
  # an identity item two clones share fails the build (exit 1).
  post-processor "shell-local" {
    inline = [
      "if [ -z '${var.sealprep}' ]; then echo 'sealprep prove: skipped: pass -var sealprep=/usr/sbin/sealprep to boot clones of the template' >&2; exit 0; fi",
      "rc=0; '${var.sealprep}' prove --image 'output-debian/debian.${var.format}' --clones ${var.prove_clones} ${local.prove_boot} --junit reports/prove.xml || rc=$?; [ \"$rc\" -eq 0 ] || { echo \"sealprep prove exited $rc: the template is not proven; the reasons are above and in reports/prove.xml\" >&2; exit 1; }",
    ]
  }
}
