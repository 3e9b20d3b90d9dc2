package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// guestcheckBin is guestcheck built from this repository for the tests.
var guestcheckBin string

// repo is the repository's root, the main module.
const repo = "../.."

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "guestcheck-kube")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	guestcheckBin = filepath.Join(dir, "guestcheck")
	// KUBE_TEST_GUESTCHECK runs the tests with another build (a branch's);
	// else guestcheck is built in the main module (-C), with its own
	// dependencies, not this module's.
	if b := os.Getenv("KUBE_TEST_GUESTCHECK"); b != "" {
		guestcheckBin = b
	} else if out, err := exec.Command("go", "build", "-C", repo, "-o", guestcheckBin, "./cmd/guestcheck").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build guestcheck: %v\n%s", err, out)
		return 1
	}
	start := time.Now()
	stop, err := startServer(dir, "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer stop()
	fmt.Fprintf(os.Stderr, "kube: etcd and API server up, CRDs established in %v\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}
