package cgroup

import (
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

const (
	char  = unix.BPF_DEVCG_DEV_CHAR
	block = unix.BPF_DEVCG_DEV_BLOCK
	rd    = unix.BPF_DEVCG_ACC_READ
	wr    = unix.BPF_DEVCG_ACC_WRITE
	mk    = unix.BPF_DEVCG_ACC_MKNOD
)

func compile(t *testing.T, rules []configs.DeviceRule) []insn {
	t.Helper()
	conv, err := deviceRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := deviceProgram(conv)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

func TestDeviceProgramVerdicts(t *testing.T) {
	defaults := configs.DefaultDeviceRules()
	denyAll := configs.DeviceRule{Type: 'a', Major: -1, Minor: -1, Access: "rwm"}
	allowAll := denyAll
	allowAll.Allow = true
	loop := configs.DeviceRule{Type: 'b', Major: 7, Minor: 0, Access: "rw", Allow: true}
	for _, tc := range []struct {
		name  string
		rules []configs.DeviceRule
		req   devCtx
		want  int64
	}{
		{"null read", defaults, devCtx{char, rd, 1, 3}, 1},
		{"null read+write", defaults, devCtx{char, rd | wr, 1, 3}, 1},
		{"pts any minor", defaults, devCtx{char, rd | wr, 136, 42}, 1},
		{"mknod any block", defaults, devCtx{block, mk, 8, 0}, 1},
		{"open a block device", defaults, devCtx{block, rd, 8, 0}, 0},
		{"open an unlisted char device", defaults, devCtx{char, rd, 10, 1}, 0},
		{"block with null's numbers", defaults, devCtx{block, rd, 1, 3}, 0},
		{"no rules denies", nil, devCtx{char, rd, 1, 3}, 0},
		{"spec deny-all then defaults", append([]configs.DeviceRule{denyAll}, defaults...), devCtx{char, wr, 1, 5}, 1},
		{"explicit allow", append([]configs.DeviceRule{denyAll, loop}, defaults...), devCtx{block, rd | wr, 7, 0}, 1},
		{"explicit allow is for its minor only", append([]configs.DeviceRule{denyAll, loop}, defaults...), devCtx{block, rd, 7, 1}, 0},
		{"allow all", []configs.DeviceRule{allowAll}, devCtx{block, rd | wr | mk, 8, 1}, 1},
		{"deny after allow all", []configs.DeviceRule{allowAll, {Type: 'c', Major: 1, Minor: 3, Access: "w"}}, devCtx{char, rd | wr, 1, 3}, 0},
		{"deny w leaves r", []configs.DeviceRule{allowAll, {Type: 'c', Major: 1, Minor: 3, Access: "w"}}, devCtx{char, rd, 1, 3}, 1},
		{"later deny-all wins", append(defaults, denyAll), devCtx{char, rd, 1, 3}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := run(compile(t, tc.rules), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("verdict %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDeviceRulesRefused(t *testing.T) {
	for _, r := range []configs.DeviceRule{
		{Type: 'p', Major: 1, Minor: 1, Access: "r", Allow: true},
		{Type: 'c', Major: 1, Minor: 1, Access: "x", Allow: true},
		{Type: 'c', Major: 1, Minor: 1, Access: "", Allow: true},
	} {
		if _, err := deviceRules([]configs.DeviceRule{r}); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

func TestEncode(t *testing.T) {
	b := encode([]insn{ldxW(rAccess, rCtx, 4), jneImm(rType, 2)})
	if len(b) != 16 {
		t.Fatalf("%d bytes", len(b))
	}
	// code, dst|src<<4, off (le), imm (le)
	if b[0] != 0x61 || b[1] != 0x12 || b[2] != 4 || b[8] != 0x55 || b[9] != 0x03 || b[12] != 2 {
		t.Errorf("encoded % x", b)
	}
}
