package libcontainer

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSubCgroups(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[string]string
	}{
		{[]string{"sub"}, map[string]string{"": "sub"}},
		{[]string{"./a/../sub/"}, map[string]string{"": "sub"}},
		{[]string{"/abs"}, map[string]string{"": "abs"}}, // joined below, as runc
		{[]string{"."}, map[string]string{"": ""}},
		{[]string{"pids,memory:x/y", "cpu:z"}, map[string]string{"pids": "x/y", "memory": "x/y", "cpu": "z"}},
	} {
		got, err := ParseSubCgroups(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSubCgroups(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"..", "../x", "a/../../x", "/../x", "pids:../x"} {
		_, err := ParseSubCgroups([]string{in})
		if err == nil || !strings.Contains(err.Error(), "bad sub cgroup path") || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseSubCgroups(%q): %v, want runc's \"bad sub cgroup path\" and the value", in, err)
		}
	}
}
