# A Packer (QEMU builder) template build that installs guestcheck, checks
# the build VM, and seals it as its last step: sealprep removes the
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
      # Fail the build when the build VM itself is not healthy.
      "sudo guestcheck",
      # Dry run: what sealprep will remove (shutdown_command applies it).
      "sudo sealprep plan",
    ]
  }
}
