package configs

// HookKind is a point of the container's life where hooks run, named as
// in config.json's hooks section.
type HookKind string

// The hook kinds, in the order they run. prestart and createRuntime,
// poststart and poststop run in the runtime's namespaces (the parent);
// createContainer and startContainer inside the container (init).
const (
	Prestart        HookKind = "prestart"
	CreateRuntime   HookKind = "createRuntime"
	CreateContainer HookKind = "createContainer"
	StartContainer  HookKind = "startContainer"
	Poststart       HookKind = "poststart"
	Poststop        HookKind = "poststop"
)

// HookKinds lists every kind in the order they run.
func HookKinds() []HookKind {
	return []HookKind{Prestart, CreateRuntime, CreateContainer, StartContainer, Poststart, Poststop}
}

// Hook is one program to run, given the container's state on stdin.
type Hook struct {
	Path string   `json:"path"` // absolute
	Args []string `json:"args,omitempty"`
	Env  []string `json:"env,omitempty"`
	// Timeout in seconds; 0 means none. A hook still running then is
	// killed and counts as failed.
	Timeout int `json:"timeout,omitempty"`
}

// Hooks are the config's hooks by kind; a kind without hooks is absent.
type Hooks map[HookKind][]Hook

// RunInParent reports whether the parent has hooks to run while init
// waits with its rootfs mounted (prestart, createRuntime).
func (h Hooks) RunInParent() bool {
	return len(h[Prestart])+len(h[CreateRuntime]) > 0
}
