package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHost points the LSM probes at dir, which has none of them.
func fakeHost(t *testing.T) {
	dir := t.TempDir()
	old := [3]string{apparmorEnabledFile, selinuxFS, resctrlFS}
	apparmorEnabledFile = filepath.Join(dir, "apparmor-enabled")
	selinuxFS = filepath.Join(dir, "selinux")
	resctrlFS = filepath.Join(dir, "resctrl")
	t.Cleanup(func() { apparmorEnabledFile, selinuxFS, resctrlFS = old[0], old[1], old[2] })
}

func TestCheckSecurityRefusesWhatTheHostLacks(t *testing.T) {
	fakeHost(t)
	for _, tc := range []struct {
		want string
		edit func(c *Config)
	}{
		{`process.apparmorProfile: "docker-default": AppArmor is not enabled on this host`, func(c *Config) { c.Process.AppArmorProfile = "docker-default" }},
		{`process.selinuxLabel: "system_u:system_r:container_t:s0": SELinux is not enabled on this host`, func(c *Config) {
			c.Process.SelinuxLabel = "system_u:system_r:container_t:s0"
		}},
		{`linux.mountLabel: "system_u:object_r:container_file_t:s0": SELinux is not enabled on this host`, func(c *Config) {
			c.MountLabel = "system_u:object_r:container_file_t:s0"
		}},
		{"linux.intelRdt: Intel RDT is not enabled on this host (no resctrl filesystem at", func(c *Config) { c.IntelRdt = &IntelRdt{ClosID: "c1"} }},
	} {
		c := &Config{Process: &Process{Args: []string{"true"}}}
		tc.edit(c)
		err := checkSecurity(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checkSecurity = %v, want %q", err, tc.want)
		}
	}
	if err := checkSecurity(&Config{Process: &Process{}}); err != nil {
		t.Errorf("no labels: %v", err)
	}
}

func TestCheckSecurityWithTheLSMs(t *testing.T) {
	fakeHost(t)
	os.WriteFile(apparmorEnabledFile, []byte("Y\n"), 0o644)
	os.MkdirAll(selinuxFS, 0o755)
	os.WriteFile(filepath.Join(selinuxFS, "enforce"), []byte("1"), 0o644)
	os.MkdirAll(resctrlFS, 0o755)
	os.WriteFile(filepath.Join(resctrlFS, "schemata"), nil, 0o644)
	c := &Config{Process: &Process{AppArmorProfile: "p", SelinuxLabel: "l"}}
	if err := checkSecurity(c); err != nil {
		t.Errorf("host with AppArmor and SELinux: %v", err)
	}
	c.MountLabel = "m"
	if err := checkSecurity(c); err == nil || !strings.Contains(err.Error(), "husk does not label mounts yet") {
		t.Errorf("mountLabel: %v", err)
	}
	c.MountLabel, c.IntelRdt = "", &IntelRdt{}
	if err := checkSecurity(c); err == nil || !strings.Contains(err.Error(), "husk does not apply Intel RDT") {
		t.Errorf("intelRdt: %v", err)
	}
}
