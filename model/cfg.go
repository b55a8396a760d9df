package model

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// LoadCfg reads the constants of a TLC .cfg file of spec/tla/SoundGate.tla (Runs,
// Keys, MaxEpoch, and whether SYMMETRY is set), so that the model runs on exactly the
// constants the spec is checked with.
func LoadCfg(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := ParseCfg(string(b))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCfg reads the constants of a .cfg text; see LoadCfg. It understands the lines
// `Name = {a, b}` and `Name = 3` after CONSTANT(S), `SYMMETRY Name`, and `\*`
// comments, and ignores the other sections.
func ParseCfg(text string) (Config, error) {
	var c Config
	seen := map[string]bool{}
	for n, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, `\*`); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		for _, kw := range []string{"CONSTANTS", "CONSTANT"} {
			line = strings.TrimSpace(strings.TrimPrefix(line, kw))
		}
		if strings.HasPrefix(line, "SYMMETRY") {
			c.Symmetry = true
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		switch name {
		case "Runs", "Keys":
			if !strings.HasPrefix(val, "{") || !strings.HasSuffix(val, "}") {
				return c, fmt.Errorf("%w: line %d: %s must be a set of model values", ErrConfig, n+1, name)
			}
			var names []string
			for _, f := range strings.Split(val[1:len(val)-1], ",") {
				if f = strings.TrimSpace(f); f != "" {
					names = append(names, f)
				}
			}
			slices.Sort(names)
			if name == "Runs" {
				c.Runs = names
			} else {
				c.Keys = names
			}
		case "MaxEpoch":
			v, err := strconv.Atoi(val)
			if err != nil {
				return c, fmt.Errorf("%w: line %d: MaxEpoch: %v", ErrConfig, n+1, err)
			}
			c.MaxEpoch = v
		default:
			return c, fmt.Errorf("%w: line %d: unknown constant %q", ErrConfig, n+1, name)
		}
		seen[name] = true
	}
	for _, name := range []string{"Runs", "Keys", "MaxEpoch"} {
		if !seen[name] {
			return c, fmt.Errorf("%w: constant %s is not set", ErrConfig, name)
		}
	}
	return c, c.Validate()
}
