package libcontainer

import (
	"encoding/json"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// Warming encoding/json: the first time a process encodes or decodes a
// struct type, encoding/json builds that type's field table and codecs
// by reflection, most of the CPU of the first state.json save (see
// configs/lazyjson.go). create's first steps (the command line, reading
// config.json) leave the other CPU idle: main starts this there, as soon
// as it knows the command, so that the first save finds the encoders
// built. It encodes an empty state and changes nothing. (exec reads
// state.json too soon after main for a warm-up to get ahead of it: it
// only cost CPU, measured.)

// WarmStateEncoder builds the encoders of a State and of the cgroup
// settings nearly every config has (create and run: about 0.7 ms of CPU).
func WarmStateEncoder() {
	_, _ = json.Marshal(&State{Config: &configs.Config{Cgroup: &configs.Cgroup{}}})
}
