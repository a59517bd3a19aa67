// Command nginx stands in for the web servers of critest's images
// (registry.k8s.io/e2e-test-images/nginx and httpd, cri-tools'
// hostnet-nginx): it answers GET / with 200 on its port (80, or -p PORT) and
// logs a line naming itself (critest looks for "httpd" in httpd's log).
// Run as nginx it does what critest checks of nginx: writes its pid to
// /var/run/nginx.pid and shows "nginx: master process" as its command line.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
)

// master is the command line nginx's master process shows.
const master = "nginx: master process nginx -g daemon off;"

func main() {
	port := flag.Int("p", 80, "TCP port to serve on")
	flag.String("g", "", "nginx's global directives (ignored)")
	flag.Parse()
	self := filepath.Base(os.Args[0])
	if self == "nginx" {
		// Re-exec under the master's name; the file name keeps the
		// process's comm "nginx" for pidof.
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, []string{master, "-p", fmt.Sprint(*port)}, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "nginx: re-exec:", err)
		os.Exit(1)
	}
	if self == master {
		self = "nginx"
		err := os.MkdirAll("/var/run", 0o755)
		if err == nil {
			err = os.WriteFile("/var/run/nginx.pid", []byte(fmt.Sprintln(os.Getpid())), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "nginx:", err)
		}
	}
	fmt.Fprintf(os.Stderr, "%s: serving on port %d\n", self, *port)
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "Welcome to nginx!")
	})
	if err := http.ListenAndServe(fmt.Sprintf(":%d", *port), nil); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", self, err)
		os.Exit(1)
	}
}
