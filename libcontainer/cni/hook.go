package cni

import (
	"context"
	"fmt"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
)

// Hook is `husk cni-hook`: the OCI hook that attaches the container in st
// to the network list named by its AnnotationHookNetwork (op "add", as a
// createRuntime hook) or detaches it (op "del", as a poststop hook). With
// op "" the state's status decides: creating or created: add, stopped:
// del. Any runtime can run it; the netns is the container's own.
func Hook(ctx context.Context, op string, st *specs.State, o Options) error {
	req, err := Parse(st.Annotations, AnnotationHookNetwork)
	if err != nil {
		return fmt.Errorf("cni-hook: OCI state: %w", err)
	}
	if req == nil {
		return fmt.Errorf("cni-hook: OCI state: no annotation %q naming the CNI network list", AnnotationHookNetwork)
	}
	if op == "" {
		switch st.Status {
		case specs.StateCreating, specs.StateCreated:
			op = "add"
		case specs.StateStopped:
			op = "del"
		default:
			return fmt.Errorf("cni-hook: status %q: say add or del", st.Status)
		}
	}
	// The netns of a live container is its init's; once it is gone (a
	// poststop hook) DEL runs with no netns, as the CNI spec allows.
	netns := ""
	if st.Pid > 0 {
		netns = fmt.Sprintf("/proc/%d/ns/net", st.Pid)
	}
	switch op {
	case "add":
		if netns == "" {
			return fmt.Errorf("cni-hook add: the OCI state has no pid (status %q)", st.Status)
		}
		result, err := Add(ctx, o, req, st.ID, netns)
		if err != nil {
			return fmt.Errorf("cni-hook: container %s: %w", st.ID, err)
		}
		logrus.Debugf("cni-hook: container %s: %s", st.ID, result)
		return nil
	case "del":
		if netns != "" && !exists(netns) {
			netns = ""
		}
		if err := Del(ctx, o, req, st.ID, netns); err != nil {
			return fmt.Errorf("cni-hook: container %s: %w", st.ID, err)
		}
		return nil
	}
	return fmt.Errorf("cni-hook: unknown action %q (add or del)", op)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
