// Package initproc is everything that runs inside `husk init` in Go, once
// nsexec (nsenter/nsexec.c) has put the process into its namespaces: it
// receives the config from the parent, builds the container (rootfs, host
// name, sysctls), sets up the process (limits, attributes, credentials,
// console, seccomp, cwd, env), runs the in-container hooks, waits on
// exec.fifo for `husk start` and execs the process. The parent side is
// package libcontainer; what the two exchange is package bootstrap.
package initproc
