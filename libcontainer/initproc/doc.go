// Package initproc is Go init: the part of `husk init` that runs in Go,
// forked by the container's pid 1 (the launcher, nsenter/run.c) once
// nsexec has put both into the container's namespaces. It receives the
// config from the parent, builds the container (rootfs up to pivot_root,
// console), runs the createContainer hooks, hands the container's root
// and pty over to pid 1, which finishes it (nsenter/final.c,
// nsenter/system.c), and exits. It never sets up the container's
// process: the launcher does, for init and every exec alike. The parent
// side is package launch; what the two exchange is package bootstrap.
// Every kernel call it makes goes through kernel.go's small functions,
// so the order of its steps and its error paths are tested without root.
package initproc
