# A Packer (QEMU builder) template build that installs guestcheck, checks
# the build VM (downloading a JUnit report for CI), and seals it as its
# last step: sealprep removes the
# machine-id, SSH host keys, cloud-init state, leases, logs and history,
# then powers the VM off itself, so no shutdown-time writer recreates them.
packer {
  required_plugins {
    qemu = {
      source  = "github.com/hashicorp/qemu"
      version = ">= 1.1.0"
    }
  }
}

variable "base_image" {
  type    = string
  default = "debian-12-genericcloud-amd64.qcow2"
}

source "qemu" "debian" {
  iso_url          = var.base_image
  iso_checksum     = "none"
  disk_image       = true
  format           = "qcow2"
  headless         = true
  ssh_username     = "debian"
  ssh_timeout      = "10m"
  cd_label         = "cidata"
  cd_files         = ["./seed/user-data", "./seed/meta-data"]
  # sealprep powers the VM off; Packer waits for QEMU to exit.
  shutdown_command = "sudo /usr/sbin/sealprep apply --yes --poweroff"
  shutdown_timeout = "5m"
}

build {
  sources = ["source.qemu.debian"]

  provisioner "file" {
    source      = "dist/guestcheck_1.0.0-1_amd64.deb"
    destination = "/tmp/guestcheck.deb"
  }

  provisioner "shell" {
    inline = [
      "sudo cloud-init status --wait >/dev/null || true",
      "sudo apt-get install -y /tmp/guestcheck.deb",
      # Check the build VM: the JUnit report for CI, the text report in the
      # build log, the exit code kept for the verdict below, so that the
      # report is downloaded even when the VM is unhealthy.
      "rc=0; sudo guestcheck --output junit:/tmp/guestcheck.xml || rc=$?; echo $rc > /tmp/guestcheck.rc",
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
      # healthy (guestcheck exited 1 or 2; use -ne 1 to let warnings pass).
      "rc=$(cat /tmp/guestcheck.rc); sudo rm -f /tmp/guestcheck.rc /tmp/guestcheck.xml; [ \"$rc\" -eq 0 ]",
      # Dry run: what sealprep will remove (shutdown_command applies it).
      "sudo sealprep plan",
    ]
  }
}
