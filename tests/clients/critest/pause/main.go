// Command pause stands in for registry.k8s.io/pause, the pod sandbox's
// process: it does nothing until SIGTERM or SIGINT, and is named "pause"
// (critest looks for other processes by name in pods that share it).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
