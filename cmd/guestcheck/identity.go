package main

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
)

// readIdentity reads the guest's identity for the report: guestid.Read
// over the root and, on the running system, the kernel's links.
func readIdentity(root *fs.Root, live bool) guestid.Identity {
	id := guestid.Read(root, live)
	if live {
		ifs, err := liveInterfaces(nil)
		if err != nil {
			id.Unread = append(id.Unread, "interfaces: "+err.Error())
		}
		id.Interfaces = ifs
	}
	return id
}

// startIdentity starts read in the background. The returned function
// waits for it for limit at most from its start (check_timeout, the
// deadline every check has: a loaded guest that gives its checks more
// time gives the identity as much). It is read beside the checks, so it
// delays a run only when it is slower than all of them. It never fails a run: a panic or
// the deadline end up in the identity's Unread, as everything read cannot
// read does.
func startIdentity(read func() guestid.Identity, limit time.Duration) func() *guestid.Identity {
	deadline := time.Now().Add(limit)
	ch := make(chan guestid.Identity, 1)
	go func() {
		var id guestid.Identity
		defer func() {
			if p := recover(); p != nil {
				id = guestid.Identity{Unread: []string{fmt.Sprintf("identity: reading it failed: %v", p)}}
			}
			ch <- id
		}()
		id = read()
	}()
	return func() *guestid.Identity {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case id := <-ch:
			return &id
		case <-t.C:
			return &guestid.Identity{Unread: []string{fmt.Sprintf("identity: not read within %s (check_timeout)", limit)}}
		}
	}
}

// liveInterfaces reads the links and addresses of h's network namespace
// (nil: this process's) over netlink.
func liveInterfaces(h *netlink.Handle) ([]guestid.Interface, error) {
	k, done, err := netstate.OpenKernel(h)
	if err != nil {
		return nil, err
	}
	defer done()
	links, err := k.Links()
	if err != nil {
		return nil, err
	}
	addrs, err := k.Addrs()
	if err != nil {
		return nil, err
	}
	return netstate.IdentityInterfaces(links, addrs), nil
}
