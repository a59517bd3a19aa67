package configs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHost points the LSM probes at dir, which has none of them.
func fakeHost(t *testing.T) {
	dir := t.TempDir()
	old := [2]string{apparmorEnabledFile, resctrlFS}
	oldEnabled, oldCheck := SELinuxEnabled, selinuxCheckContext
	apparmorEnabledFile = filepath.Join(dir, "apparmor-enabled")
	resctrlFS = filepath.Join(dir, "resctrl")
	SELinuxEnabled = func() bool { return false }
	t.Cleanup(func() {
		apparmorEnabledFile, resctrlFS = old[0], old[1]
		SELinuxEnabled, selinuxCheckContext = oldEnabled, oldCheck
	})
}

// fakeSELinux turns the faked host's SELinux on, with a policy that knows
// only the contexts in known.
func fakeSELinux(known ...string) {
	SELinuxEnabled = func() bool { return true }
	selinuxCheckContext = func(l string) error {
		for _, k := range known {
			if k == l {
				return nil
			}
		}
		return errors.New("write /sys/fs/selinux/context: invalid argument")
	}
}

func TestCheckSecurityRefusesWhatTheHostLacks(t *testing.T) {
	fakeHost(t)
	for _, tc := range []struct {
		want string
		edit func(c *Config)
	}{
		{`process.apparmorProfile: "docker-default": AppArmor is not enabled on this host`, func(c *Config) { c.Process.AppArmorProfile = "docker-default" }},
		{`process.selinuxLabel: "system_u:system_r:container_t:s0": selinux label is specified in config, but selinux is disabled or not supported`, func(c *Config) {
			c.Process.SelinuxLabel = "system_u:system_r:container_t:s0"
		}},
		{`linux.mountLabel: "system_u:object_r:container_file_t:s0": selinux label is specified in config, but selinux is disabled or not supported`, func(c *Config) {
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
	fakeSELinux("u:r:t:s0", "u:object_r:f:s0")
	os.MkdirAll(resctrlFS, 0o755)
	os.WriteFile(filepath.Join(resctrlFS, "schemata"), nil, 0o644)
	c := &Config{Process: &Process{AppArmorProfile: "p", SelinuxLabel: "u:r:t:s0"}, MountLabel: "u:object_r:f:s0"}
	if err := checkSecurity(c); err != nil {
		t.Errorf("host with AppArmor and SELinux: %v", err)
	}
	c.MountLabel = "u:object_r:g:s0"
	if err := checkSecurity(c); err == nil || !strings.Contains(err.Error(), `linux.mountLabel: "u:object_r:g:s0": not a valid context in the loaded SELinux policy`) {
		t.Errorf("mountLabel the policy lacks: %v", err)
	}
	c.MountLabel, c.IntelRdt = "", &IntelRdt{}
	if err := checkSecurity(c); err == nil || !strings.Contains(err.Error(), "husk does not apply Intel RDT") {
		t.Errorf("intelRdt: %v", err)
	}
}

// A malformed label is refused on any host, before SELinux is asked.
func TestSELinuxLabelSyntax(t *testing.T) {
	fakeHost(t)
	for label, want := range map[string]string{
		"container_t":                       "want user:role:type[:level]",
		"u::t":                              "empty role",
		"u:r:t:x0":                          `level "x0"`,
		"u:r:t:s0:c1,":                      `level "s0:c1,"`,
		"u:r:t:s0:c1.cx":                    `level "s0:c1.cx"`,
		"u:r:t:s0:c0.c2147483647":           "category c2147483647 beyond c65535",
		"u:r:t:s0 :c1":                      "white space",
		`u:r:t:s0",size=1k,"`:               "a quote",
		"system_u:system_r:container_t:s0-": `level "s0-"`,
	} {
		err := checkSELinuxLabel("process.selinuxLabel", label)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "process.selinuxLabel: "+strconvQuote(label)) {
			t.Errorf("%q: %v, want %q", label, err, want)
		}
	}
	for _, label := range []string{"u:r:t", "u:r:t:s0", "u:r:t:s0:c1,c2", "u:r:t:s0-s0:c0.c1023", "u:r:t:s0:c0.c3,c7"} {
		err := checkSELinuxLabel("process.selinuxLabel", label)
		if err == nil || !strings.Contains(err.Error(), selinuxDisabled) {
			t.Errorf("%q: %v, want only %q", label, err, selinuxDisabled)
		}
	}
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
