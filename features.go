package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/criu"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	"github.com/husk-runtime/husk/specconv"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"github.com/urfave/cli/v3"
)

var featuresCommand = &cli.Command{
	Name:  "features",
	Usage: "print the OCI features document: what this husk supports on this host",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		data, err := json.MarshalIndent(hostFeatures(), "", "    ")
		if err != nil {
			return err
		}
		fmt.Println(string(data))
		return nil
	},
}

// hostFeatures is specconv's features with what this host has added.
func hostFeatures() *features.Features {
	f := specconv.Features()
	l := f.Linux
	var archs []string
	for _, a := range l.Seccomp.Archs {
		if seccomp.ArchKnown(a) {
			archs = append(archs, a)
		}
	}
	l.Seccomp.Archs = archs
	// husk applies AppArmor profiles, SELinux process, keyring and mount
	// labels, and refuses them where the host lacks the LSM; it never
	// applies Intel RDT settings.
	apparmor, selinux, no := configs.AppArmorEnabled(), configs.SELinuxEnabled(), false
	l.Apparmor = &features.Apparmor{Enabled: &apparmor}
	l.Selinux = &features.Selinux{Enabled: &selinux}
	l.IntelRdt = &features.IntelRdt{Enabled: &no}
	idmap := rootfs.IDMapSupported()
	l.MountExtensions.IDMap.Enabled = &idmap
	// Annotations of config.json that change what husk does: CRIU's
	// configuration file and the CNI networking requests.
	f.PotentiallyUnsafeConfigAnnotations = append(f.PotentiallyUnsafeConfigAnnotations, criu.ConfigAnnotation)
	f.PotentiallyUnsafeConfigAnnotations = append(f.PotentiallyUnsafeConfigAnnotations, cni.ConfigAnnotations()...)
	f.Annotations = map[string]string{
		"io.github.seccomp.libseccomp.version":     seccomp.LibraryVersion(),
		"org.husk-runtime.husk.version":            version,
		"org.husk-runtime.husk.commit":             commit,
		"org.husk-runtime.husk.checkpoint.enabled": "true", // husk checkpoint/restore, with CRIU
	}
	return f
}
