package cgroup

import "fmt"

// Create makes the container's cgroup directories without moving any
// process in: what a process entering them through an Entry needs first.
func (m *Manager) Create() error {
	if err := m.main().Apply(-1); err != nil {
		return fmt.Errorf("create cgroup %s: %w", m.describe(), err)
	}
	return nil
}
