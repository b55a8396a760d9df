package mutation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrSuppression is returned for a malformed suppression file.
var ErrSuppression = errors.New("soundgate/mutation: bad suppression file")

// ParseSuppressions reads a suppression file: one entry per line, the mutant id, then
// whitespace, then the reason a reviewer accepted the mutant as equivalent (or not
// worth a test). Blank lines and lines starting with # are ignored. An entry without
// a reason, or an id listed twice, is an error: a suppression is a reviewed claim and
// must say what was reviewed.
func ParseSuppressions(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id := strings.Fields(line)[0]
		reason := strings.TrimSpace(line[len(id):])
		if reason == "" {
			return nil, fmt.Errorf("%w: line %d: %s has no reason", ErrSuppression, n, id)
		}
		if strings.Count(id, ":") < 3 {
			return nil, fmt.Errorf("%w: line %d: %q is not a mutant id (file:func:operator:hash)",
				ErrSuppression, n, id)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%w: line %d: %s listed twice", ErrSuppression, n, id)
		}
		out[id] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSuppression, err)
	}
	return out, nil
}

// LoadSuppressions reads the suppression file at path.
func LoadSuppressions(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSuppression, err)
	}
	defer f.Close()
	return ParseSuppressions(f)
}
