package seccomp

import (
	"fmt"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// ArchKnown reports whether the linked libseccomp knows the architecture
// name ("SCMP_ARCH_X86_64"), so a filter can list it.
func ArchKnown(name string) bool {
	_, err := libseccomp.GetArchFromString(archName(name))
	return err == nil
}

// archName is libseccomp's name for config.json's "SCMP_ARCH_X86_64".
func archName(name string) string {
	return strings.ToLower(strings.TrimPrefix(name, "SCMP_ARCH_"))
}

// LibraryVersion is the linked libseccomp's version ("2.5.4").
func LibraryVersion() string {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return fmt.Sprintf("%d.%d.%d", major, minor, micro)
}
