// Package agree holds the agreement test between the two binaries (issue
// 22, item 7): on generated and sealed guest roots, `sealprep verify
// --root` and `guestcheck --root` must agree about every identity item.
// On a root guestcheck judges as a sealed template, an item sealprep
// calls sealed must draw no warning or failure from guestcheck; a root it
// judges as a guest must be one whose machine ID sealprep would reset.
// The package has no code of its own.
package agree
