package specconv

import (
	"math"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// terminal sets process.consoleSize, which only counts with a terminal
// (the spec says to ignore it otherwise). process() has run.
func (c *converter) terminal() error {
	p := c.spec.Process
	if !p.Terminal || p.ConsoleSize == nil {
		return nil
	}
	b := p.ConsoleSize
	if b.Height > math.MaxUint16 || b.Width > math.MaxUint16 {
		return fieldErrorf("process.consoleSize", "height and width must be at most %d, got %dx%d", math.MaxUint16, b.Height, b.Width)
	}
	c.cfg.Process.ConsoleSize = &configs.ConsoleSize{Height: uint16(b.Height), Width: uint16(b.Width)}
	return nil
}
